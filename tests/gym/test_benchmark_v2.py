"""Benchmark v2: worlds with near-miss decoys, every constraint load-bearing, the question-reading shortcut
reading every task fairly, v2 contexts that show the near-misses; and v2's own digests."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from osint_gym.benchmark import BENCHMARKS, benchmark_tasks, benchmark_world, to_hf_dataset
from osint_gym.benchmark import card as benchmark_card
from osint_gym.card import MEASURED, composition
from osint_gym.single_turn import adjacency_is_the_question, context_layout
from osint_gym.tasks import task_signature, world_fingerprint
from osint_gym.tasks.near_miss import MIN_NEAR_MISSES, named_in_world, near_misses, reading
from osint_gym.tasks.task import DEFAULT_BUDGETS
from tests.gym.test_benchmark_v1 import checked_contexts

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("v2-splits")]

V2 = ("v2:dev", "v2:test", "v2:hard")
SIZES = {"v2:dev": 1000, "v2:test": 1000, "v2:hard": 500}
# sha256 of each v2 split's task rows, pinned when v2 was published (commit of issue 43)
V2_TASKS = {
    "v2:dev": "330945cc2cea9e8e",
    "v2:test": "4c3232ffa986f5a6",
    "v2:hard": "f0faff984db23c44",
}


@pytest.mark.parametrize("ref", V2)
def test_v2_splits_are_tagged_repeat_nothing_and_keep_their_stamps(ref):
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    assert len(tasks) == SIZES[ref]
    assert sum(n - 1 for n in Counter(task_signature(t) for t in tasks).values()) == 0
    assert not any(adjacency_is_the_question(world, t) for t in tasks)
    assert {t.provenance["benchmark"] for t in tasks} == {ref} and {context_layout(t) for t in tasks} == {"v2"}
    fingerprint = world_fingerprint(world)
    assert all(t.verified_for(fingerprint, DEFAULT_BUDGETS) for t in tasks)
    assert world.config == BENCHMARKS["v2"].world_config and world.config.decoy_density == 0.8
    rows = json.dumps([t.to_dict() for t in tasks], sort_keys=True).encode()
    assert hashlib.sha256(rows).hexdigest()[:16] == V2_TASKS[ref]
    if ref == "v2:hard":
        assert {t.difficulty for t in tasks} == {"hard"}


@pytest.mark.parametrize("ref", V2)
def test_every_constraint_of_every_v2_task_is_load_bearing(ref):
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    for t in tasks:
        for c in t.query.constraints():
            assert len(t.query.without(c).evaluate(world)) > 1, (ref, t.task_id, c)
    assert sum(bool(t.query.constraints()) for t in tasks) >= 0.3 * len(tasks)  # the constraints are there to bear


@pytest.mark.parametrize("ref", V2)
def test_decoys_are_present_and_the_shortcut_reads_every_task_fairly(ref):
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    readings = [reading(world, t) for t in tasks]
    assert all(r.fair(MIN_NEAR_MISSES) for r in readings)
    with_decoys = [(t, r) for t, r in zip(tasks, readings) if r.gold]
    assert len(with_decoys) >= 0.3 * len(tasks)  # the decoys bite on a third of the split or more
    for t, r in with_decoys:
        assert len(r.near_misses) >= MIN_NEAR_MISSES and r.most == r.gold
        assert not set(r.near_misses) & set(t.query.evaluate(world))  # near-misses, never answers
    cells = composition(tasks)
    cap = BENCHMARKS["v2"].splits[ref.split(":")[1]].max_share * len(tasks)
    assert max(n for row in cells.values() for n in row.values()) <= cap


@pytest.mark.parametrize("ref", V2)
def test_v2_contexts_show_the_gold_edges_and_the_near_misses_and_determine_the_gold(ref):
    world = benchmark_world(ref)
    for t, mode, ctx in checked_contexts(ref):
        named = set(named_in_world(world, t))
        touches: dict[str, set[str]] = {}
        for e in ctx.edges:
            for a, n in ((e.head, e.tail), (e.tail, e.head)):
                if a in named:
                    touches.setdefault(n, set()).add(a)
        for c in near_misses(world, t):  # to a reader of the named entities, every near-miss is the gold's equal
            assert touches[c] >= touches[t.answer], (ref, mode, t.task_id, c)


def test_the_v2_card_shows_the_gate_and_rides_with_the_export():
    card = benchmark_card("v2:test")
    measured = MEASURED["v2:test"]
    assert measured["n"] == 1000 and "Shortcut gate" in card and "next-to-named" in card
    assert "overlap-search" in card and f"{100 * measured['multi_turn']['oracle']:.1f}%" in card
    dataset = to_hf_dataset("v2:test")
    assert len(dataset) == 1000 and dataset.info.description == card
