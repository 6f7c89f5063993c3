"""Benchmark versions: v0 frozen as published; v1 deduplicated by task signature, without tasks that
adjacency alone answers, with records contexts that show every gold edge."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from osint_gym.benchmark import benchmark_tasks, benchmark_world, parse_ref, shares_world, split_ids, to_hf_dataset
from osint_gym.benchmark import card as benchmark_card
from osint_gym.card import MEASURED, composition
from osint_gym.errors import ConfigError
from osint_gym.schema import canonical_edge
from osint_gym.single_turn import adjacency_is_the_question, build_context, context_answers, context_layout
from osint_gym.tasks import task_signature, world_fingerprint
from osint_gym.tasks.task import DEFAULT_BUDGETS

V1 = ("v1:dev", "v1:test", "v1:hard")

# sha256 of v0:test's task rows and of its contexts in both modes, computed at commit 42d2c69 (before v1)
V0_TEST_TASKS = "49a8b1640425f7e562a5ccdfa78899be7554f00127c0931bb93a173efc662983"
V0_TEST_CONTEXTS = "60ad27f60cf251cf3e7054e24a340403b436dda69ac37226bbedaf1e89f531ef"
# the same two digests for each v1 split, computed at commit bb95229 (before v2 and its world knobs)
V1_DIGESTS = {
    "v1:dev": ("d77181e7523c6545dc27f79145cd9a0b5ccc88cd7a8a6cf0c586f1bb151ada82",
               "c0bdc560388ba71d78fe382d4b49dfd44980d72fe5fcba5975e1132d3e0acd83"),
    "v1:test": ("be6e3d631fb90b69db191167a7585642fbd50fc191c906adaed0e9e44c27f617",
                "4f8f61ef03b6e4dcd5dfe0a7998d1d9332d9851c0a808acba3513df41804f99a"),
    "v1:hard": ("8efb97e608000fe33d160a87b4d68e317da610b4ff063db283b86cdbc2867404",
                "e1701959c2e71cb3525dc08f4b072aef30d98de5d13b5c37fd986b0299b952d5"),
}


def _repeats(tasks):
    return sum(n - 1 for n in Counter(task_signature(t) for t in tasks).values())


def _digests(ref):
    """sha256 of a split's task rows, and of its contexts in both modes."""
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    rows = json.dumps([t.to_dict() for t in tasks], sort_keys=True).encode()
    digest = hashlib.sha256()
    for mode in ("triples", "records"):
        for t in tasks:
            digest.update(build_context(world, t, mode=mode).to_json().encode())
    return hashlib.sha256(rows).hexdigest(), digest.hexdigest()


def test_v0_test_is_byte_identical_to_its_published_tasks_and_contexts():
    assert _digests("v0:test") == (V0_TEST_TASKS, V0_TEST_CONTEXTS)
    assert {context_layout(t) for t in benchmark_tasks("v0:test")} == {"v0"}


@pytest.mark.parametrize("ref", V1)
def test_v1_splits_are_byte_identical_to_their_published_tasks_and_contexts(ref):
    assert _digests(ref) == V1_DIGESTS[ref]


@pytest.mark.parametrize(("ref", "size"), [("v1:dev", 1000), ("v1:test", 1000), ("v1:hard", 500)])
def test_v1_splits_hold_one_task_per_signature_and_none_that_adjacency_answers(ref, size):
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    assert len(tasks) == size and _repeats(tasks) == 0
    assert not any(adjacency_is_the_question(world, t) for t in tasks)
    assert {t.provenance["benchmark"] for t in tasks} == {ref} and {context_layout(t) for t in tasks} == {"v1"}
    fingerprint = world_fingerprint(world)
    assert all(t.verified_for(fingerprint, DEFAULT_BUDGETS) for t in tasks)  # stamps survive the provenance tag
    if ref == "v1:hard":
        assert {t.difficulty for t in tasks} == {"hard"} and world.seed not in {2002, 3003}


def test_v0_keeps_the_repeats_and_adjacency_answers_v1_leaves_out():
    tasks, world = benchmark_tasks("v0:test"), benchmark_world("v0:test")
    assert _repeats(tasks) == 152 and sum(adjacency_is_the_question(world, t) for t in tasks) == 196
    v1 = {t.task_id for t in benchmark_tasks("v1:test")}
    kept = [t for t in tasks if t.task_id in v1]
    assert len(kept) == 714 and _repeats(kept) == 0  # v1:test starts as v0:test without them, then tops up


def checked_contexts(ref):
    """(task, mode, context) for every task of a split in both modes, each context checked to show every gold edge
    and the gold, and to determine exactly the gold (v2's test checks more on them)."""
    tasks, world = benchmark_tasks(ref), benchmark_world(ref)
    for mode in ("triples", "records"):
        for t in tasks:
            ctx = build_context(world, t, mode=mode)
            shown = set(ctx.edges)
            assert all(canonical_edge(e) in shown for e in t.evidence), (ref, mode, t.task_id)
            assert t.answer in ctx.entities and t.answer in ctx.text
            assert context_answers(world, t.query, ctx.edges) == [t.answer], (ref, mode, t.task_id)
            yield t, mode, ctx


@pytest.mark.parametrize("ref", V1)
def test_v1_contexts_show_every_gold_edge_and_determine_exactly_the_gold_in_both_modes(ref):
    assert sum(1 for _ in checked_contexts(ref)) == 2 * len(benchmark_tasks(ref))


def test_v0_records_miss_gold_edges_that_v1_records_show():
    tasks, world = benchmark_tasks("v0:test"), benchmark_world("v0:test")
    missing = [t for t in tasks if not {canonical_edge(e) for e in t.evidence}
               <= set(build_context(world, t, mode="records").edges)]
    assert len(missing) == 395
    t = missing[0]
    v1 = build_context(world, t, mode="records", layout="v1")
    assert {canonical_edge(e) for e in t.evidence} <= set(v1.edges)
    records = [json.loads(line) for line in v1.text.splitlines()]
    assert [r["id"] for r in records] == list(v1.entities)
    assert sum(len(ids) for r in records for ids in r["facts"].values()) == 2 * len(v1.edges)  # each edge at both ends


def test_v1_triples_write_every_entity_by_id_after_its_name():
    t = benchmark_tasks("v1:test")[0]
    world = benchmark_world("v1:test")
    ctx = build_context(world, t)
    start = t.query.start
    assert f"{start} is {world.surface(start)}" in ctx.text.splitlines()
    assert start in ctx.entities and all(ln.split()[0] in ctx.entities for ln in ctx.lines)
    assert ctx.lines == tuple(f"{e.head} {e.relation} {e.tail}" for e in ctx.edges)


def test_unknown_splits_and_layouts_are_one_line_errors():
    assert split_ids() == ["v0:train", "v0:dev", "v0:test", "v1:dev", "v1:test", "v1:hard", "v2:dev", "v2:test",
                           "v2:hard"]
    assert parse_ref("v1:hard") == ("v1", "hard")
    assert shares_world("v0:test", "v1:test") and shares_world("v1:dev", "v0:dev")
    assert not shares_world("v1:dev", "v1:test") and not shares_world("v1:hard", "v0:train")
    with pytest.raises(ConfigError, match=r"unknown benchmark 'v3:test'; known: v0:train, .*v2:hard$"):
        benchmark_tasks("v3:test")
    with pytest.raises(ConfigError, match=r"unknown split 'train' of benchmark 'v1'; known: dev, test, hard$"):
        benchmark_tasks("v1:train")
    t = benchmark_tasks("v1:test", limit=1)[0]
    with pytest.raises(ConfigError, match="context layout must be one of"):
        build_context(benchmark_world("v1:test"), t, layout="v3")


def test_the_card_counts_each_split_and_rides_with_the_hf_export():
    for ref in ("v1:dev", "v1:test", "v1:hard", "v0:test"):
        comp = composition(benchmark_tasks(ref))
        assert sum(sum(row.values()) for row in comp.values()) == len(benchmark_tasks(ref)) == MEASURED[ref]["n"]
    assert set(composition(benchmark_tasks("v1:hard"))["network_discovery"]) == {"hard"}
    card = benchmark_card("v1:test")
    nd = composition(benchmark_tasks("v1:test"))["network_discovery"]
    assert f"| network_discovery | {nd['easy']} | {nd['medium']} | {nd['hard']} | {sum(nd.values())} |" in card
    assert "tool-only oracle 100.0%; strongest scripted baseline overlap-search 24.7%" in card
    assert "| records | 10.2% |" in card and "1000/1000 |" in card
    assert "`python benchmarks/bench_card.py --splits v1:test`" in card
    assert "Scores not measured" in benchmark_card("v0:train")
    dataset = to_hf_dataset("v1:test")
    assert len(dataset) == 1000 and dataset.info.description == card
    assert json.loads(dataset[0]["provenance"])["benchmark"] == "v1:test"  # the row keeps its layout
