from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from osint_gym.benchmark import benchmark_tasks, benchmark_world, parse_ref
from osint_gym.errors import ConfigError, TaskError
from osint_gym.schema import Edge
from osint_gym.tasks import (
    FailureReason,
    Task,
    TaskSampler,
    create_family,
    list_families,
    load_jsonl,
    run_oracle,
    save_jsonl,
    verify_task,
)
from osint_gym.tasks.query import Query

FAMILIES = ["identity_resolution", "network_discovery", "event_tracing", "cross_platform_linking",
            "deanonymization", "convoluted_trace"]


def test_registry_lists_every_family_and_rejects_duplicates():
    from osint_gym.tasks.families import register_family
    from osint_gym.tasks.families.event_tracing import EventTracing

    assert list_families() == FAMILIES
    with pytest.raises(ConfigError, match="already registered"):
        register_family(EventTracing)
    with pytest.raises(ConfigError, match="unknown task family 'nope'"):
        create_family("nope")
    with pytest.raises(ConfigError, match="bad config for task family 'convoluted_trace'"):
        create_family("convoluted_trace", hops=3)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_makes_verified_tasks_of_its_difficulties(world, family):
    sampler = TaskSampler(world, seed=1)
    fam = sampler.families[family]
    for difficulty in fam.difficulties_for(world):
        tasks = sampler.generate(6, family=family, difficulty=difficulty)
        for t in tasks:
            assert t.family == family and t.difficulty == difficulty
            assert verify_task(world, t).ok
            assert len(t.answers) == 1 and t.answer not in t.question
            assert t.evidence and all(world.has_edge(*e) for e in t.evidence)
            hops = t.query.n_hops
            if family != "deanonymization":
                assert {"easy": hops == 1, "medium": hops == 2, "hard": hops >= 3}[difficulty]


def test_deanonymization_is_hard_under_noise_and_medium_when_clean(world, clean_world):
    fam = create_family("deanonymization")
    assert fam.difficulties_for(world) == ("hard",)
    assert fam.difficulties_for(clean_world) == ("medium", "hard")
    t = TaskSampler(clean_world, 0).sample(0, family="deanonymization", difficulty="medium")
    assert len(t.query.filters) == 2 and t.query.start is None


def test_convoluted_trace_has_three_to_five_hops(world):
    tasks = TaskSampler(world, 2).generate(20, family="convoluted_trace")
    assert {t.query.n_hops for t in tasks} <= {3, 4, 5}
    assert len({t.query.n_hops for t in tasks}) >= 2


def test_sample_is_a_pure_function_of_seed_and_index(world):
    a = TaskSampler(world, seed=9)
    b = TaskSampler(world, seed=9)
    forward = [a.sample(i) for i in range(30)]
    backward = [b.sample(i) for i in reversed(range(30))][::-1]
    assert [t.to_dict() for t in forward] == [t.to_dict() for t in backward]
    assert (
        TaskSampler(world, seed=10).sample(0).question != forward[0].question
        or TaskSampler(world, seed=10).sample(1).question != forward[1].question
    )


def test_task_sets_identical_across_hash_seeds():
    code = (
        "import json; from osint_gym.tasks import TaskSampler; from osint_gym.world import generate_world, WorldConfig;"
        "w = generate_world(WorldConfig(n_people=150), 3);"
        "print(json.dumps([t.to_dict() for t in TaskSampler(w, 4).generate(40)], sort_keys=True))"
    )
    outs = {subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONHASHSEED=h), check=True,
                           capture_output=True, text=True).stdout for h in ("0", "99")}
    assert len(outs) == 1


def test_mixed_sampler_balances_difficulties(world):
    tasks = TaskSampler(world, 3).generate(300)
    counts = Counter(t.difficulty for t in tasks)
    assert all(80 <= counts[d] <= 120 for d in ("easy", "medium", "hard")), counts
    assert len({t.question for t in tasks}) == 300
    assert set(t.family for t in tasks) == set(FAMILIES)


def _task(world, **changes):
    base = TaskSampler(world, 0).sample(5, family="network_discovery", difficulty="easy")
    return dataclasses.replace(base, **changes), base


def test_verify_rejects_bad_tasks_with_a_reason(world):
    good = TaskSampler(world, 0).sample(5, family="event_tracing", difficulty="medium")
    assert verify_task(world, good).ok
    other = next(p for p in world.ids("account") if p != good.answer)
    cases = {
        FailureReason.UNKNOWN_ENTITY: dataclasses.replace(good, answers=("account_999999",)),
        FailureReason.EDGE_NOT_IN_WORLD: dataclasses.replace(good, evidence=(Edge("person_0", "knows", "person_0"),)),
        FailureReason.ANSWER_LEAKED: dataclasses.replace(good, question=good.question + f" (it is {good.answer})"),
        FailureReason.ANSWER_MISMATCH: dataclasses.replace(good, answers=(other,)),
        FailureReason.START_NOT_NAMED: dataclasses.replace(good, question="Which account is it?"),
        FailureReason.TOO_LARGE: dataclasses.replace(good, question=good.question + " " + "x" * 400),
        FailureReason.MALFORMED: dataclasses.replace(good, query=None),
    }
    for reason, task in cases.items():
        verdict = verify_task(world, task)
        assert verdict.reason is reason, (reason, verdict)
        assert not verdict.ok and verdict.detail


def test_verify_flags_ambiguous_questions(world):
    person = next(p for p in world.ids("person") if len(world.neighbors(p, "knows", "out")) >= 2)
    from osint_gym.schema import Direction
    from osint_gym.tasks.query import Hop

    query = Query(person, (Hop("knows", Direction.OUT),))
    friend = world.neighbors(person, "knows", "out")[0]
    task = Task(
        "t",
        f"Who does {world.surface(person)} know?",
        (friend,),
        (Edge(person, "knows", friend),),
        "custom",
        "easy",
        query,
    )
    assert verify_task(world, task).reason is FailureReason.AMBIGUOUS


def test_verify_flags_tasks_the_oracle_cannot_solve(world):
    # an anonymous account: its owner is real, unique, but no tool reveals the link
    anon = next(
        a
        for a in world.ids("account")
        if world.entity(a).get("listed") is False and world.neighbors(a, "alias_of", "out")
    )
    owner = world.neighbors(anon, "alias_of", "out")[0]
    from osint_gym.schema import Direction
    from osint_gym.tasks.query import Hop

    query = Query(anon, (Hop("alias_of", Direction.OUT),))
    task = Task(
        "t", f"Who operates {world.surface(anon)}?", (owner,), (Edge(anon, "alias_of", owner),), "custom", "easy", query
    )
    verdict = verify_task(world, task)
    assert verdict.reason is FailureReason.UNSOLVABLE
    assert verify_task(world, task, check_oracle=False).ok


def test_task_jsonl_round_trip(tmp_path, world):
    tasks = TaskSampler(world, 0).generate(25)
    path = tmp_path / "tasks.jsonl"
    save_jsonl(tasks, str(path))
    back = load_jsonl(str(path))
    assert [t.to_dict() for t in back] == [t.to_dict() for t in tasks]
    assert all(verify_task(world, t).ok for t in back)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert set(rows[0]) == {
        "task_id",
        "question",
        "answers",
        "evidence",
        "family",
        "difficulty",
        "answer_type",
        "query",
        "provenance",
        "stamp",
    }
    assert all(b.stamp == t.stamp and b.stamp is not None for b, t in zip(back, tasks))  # the proof survives the file


@pytest.mark.parametrize(
    ("line", "message"),
    [("{not json", "tasks.jsonl:1"), ('{"question": "q"}', "malformed task row"), ("[1, 2]", "must be a JSON object"),
     ('{"question": "", "answers": ["a"]}', "question must be a non-empty string"),
     ('{"question": "q", "answers": []}', "answers must be non-empty")],
)
def test_bad_task_files_name_the_line(tmp_path, line, message):
    path = tmp_path / "tasks.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(TaskError, match=message):
        load_jsonl(str(path))


def test_benchmark_splits_are_on_disjoint_worlds_and_sized():
    worlds = {s: benchmark_world(f"v0:{s}") for s in ("dev", "test")}
    assert worlds["dev"].fingerprint() != worlds["test"].fingerprint()
    test = benchmark_tasks("v0:test")
    assert len(test) == 1000 and len({t.question for t in test}) == 1000
    hard = benchmark_tasks("v0:test", difficulty="hard")
    assert hard and all(t.difficulty == "hard" for t in hard)
    assert (
        benchmark_tasks("v0:test", family="deanonymization", limit=3)
        == [t for t in test if t.family == "deanonymization"][:3]
    )
    for bad in ("v9:test", "v0:nope", "test"):
        with pytest.raises(ConfigError, match="unknown"):
            parse_ref(bad)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_oracle_solves_every_benchmark_task_directly(split):
    world = benchmark_world(f"v0:{split}")
    misses = [t.task_id for t in benchmark_tasks(f"v0:{split}") if run_oracle(world, t.query, 24, 4).answer != t.answer]
    assert misses == []


def test_tasks_export_as_hf_dataset_rows(world):
    from osint_gym.benchmark import to_hf_dataset

    ds = to_hf_dataset(TaskSampler(world, 0).generate(5))
    assert ds.num_rows == 5 and "question" in ds.column_names


def test_validate_sampled_counts_reasons_and_marks_repeats_as_duplicates(world):
    from osint_gym import proposals

    offers = [proposals.make_offer(world, 0, i) for i in range(3)]
    gold = [proposals.gold_proposal(world, o) for o in offers]
    completions = [gold[0], gold[1], gold[0], "no lines here", gold[2]]
    batch = proposals.validate_sampled([world] * 5, offers[:2] + [offers[0], offers[1], offers[2]], completions,
                                       max_hops=2, id_prefix="s-")
    assert [t.task_id for t in batch.tasks] == ["s-0", "s-1", "s-4"]
    assert batch.reasons == {"ok": 3, "duplicate": 1, "malformed": 1}
    assert [r["reason"] for r in batch.records] == ["ok", "ok", "duplicate", "malformed", "ok"]
    assert [r["offer_id"] for r in batch.records] == [offers[0].offer_id, offers[1].offer_id, offers[0].offer_id,
                                                      offers[1].offer_id, offers[2].offer_id]
    with pytest.raises(ValueError):  # one world and one offer per completion
        proposals.validate_sampled([world], offers[:1], gold[:2], max_hops=2, id_prefix="s-")
