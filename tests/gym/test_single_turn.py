"""Single-turn contexts, offers' distractors and the single-turn answer format."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from osint_gym import proposals
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.errors import ConfigError
from osint_gym.schema import canonical_edge
from osint_gym.single_turn import (
    Context,
    answer_messages,
    answer_prompt,
    build_context,
    context_answers,
    distractor_edges,
    gold_completion,
    parse_answer,
    score_completion,
)
from osint_gym.tasks import TaskSampler


def test_generate_offers_never_list_an_edge_twice_up_to_symmetry(world):
    repeated = []
    for i in range(600):
        offer = proposals.make_offer(world, 0, i, mode="generate")
        canon = [canonical_edge(e) for e in offer.context]
        if len(set(canon)) != len(canon):
            repeated.append(i)
        assert {canonical_edge(e) for e in offer.path} <= set(canon)
    assert repeated == []


def test_distractors_exclude_gold_edges_given_in_either_direction(world):
    person = next(p for p in world.ids("person") if world.neighbors(p, "knows", "out"))
    friend = world.neighbors(person, "knows", "out")[0]
    reversed_gold = canonical_edge((person, "knows", friend))
    reversed_gold = type(reversed_gold)(reversed_gold.tail, "knows", reversed_gold.head)  # the non-canonical direction
    pool = distractor_edges(world, [person, friend], [reversed_gold], random.Random(0), 10_000)
    assert canonical_edge(reversed_gold) not in pool
    assert len(pool) == len(set(pool)) == len(set(world.incident_edges(person)) | set(world.incident_edges(friend))) - 1


def test_contexts_show_each_edge_once_all_gold_evidence_and_only_world_facts(world):
    for task in TaskSampler(world, 0).generate(100):
        ctx = build_context(world, task, n_distractors=6)
        assert len(set(ctx.edges)) == len(ctx.edges)
        assert {canonical_edge(e) for e in task.evidence} <= set(ctx.edges)
        assert all(world.has_edge(*e) for e in ctx.edges)


@pytest.fixture(scope="module")
def v0_test():
    return benchmark_world("v0:test"), benchmark_tasks("v0:test")


def test_the_context_facts_determine_exactly_the_gold(v0_test):
    world, tasks = v0_test
    for task in tasks:
        ctx = build_context(world, task)
        assert context_answers(world, task.query, ctx.edges) == [task.answer], task.task_id
        # the same query on the gold evidence alone, and on the context without the evidence's last edge
        assert context_answers(world, task.query, task.evidence) == [task.answer]
        last = canonical_edge(task.evidence[-1])
        assert task.answer not in context_answers(world, task.query, [e for e in ctx.edges if e != last])


def _answer_type_counts(world, task, ctx):
    shown = set(ctx.entities)
    return Counter(
        n for e in ctx.edges for n in (e.head, e.tail) if n in shown and world.type_of(n) == task.answer_type
    )


def test_frequency_does_not_single_out_the_gold(v0_test):
    world, tasks = v0_test
    balanced = strictly_most = only = 0
    for task in tasks:
        counts = _answer_type_counts(world, task, build_context(world, task))
        balanced += len(set(counts.values())) == 1
        strictly_most += sorted(counts.values())[-2:-1] < [counts[task.answer]] and counts[task.answer] == max(
            counts.values()
        )
        only += len(counts) == 1
    # before decoys (measured): the gold was the strictly most frequent id of its type in 665 of 1,000 contexts,
    # the only one in 184, and all candidates were equally frequent in 218; now 0, 0 and 994
    assert only == 0
    assert balanced >= 980 and strictly_most == 0, (balanced, strictly_most)


def test_decoys_repeat_the_gold_relation_pattern_from_other_named_starts(v0_test):
    world, tasks = v0_test
    with_decoys = 0
    for task in tasks[:300]:
        plain, ctx = build_context(world, task, decoys=0, n_distractors=0), build_context(world, task)
        hop = task.query.hops[0].relation if task.query.hops else None
        if hop is None:
            continue
        gold_lines = sum(e.relation == hop for e in plain.edges)
        with_decoys += sum(e.relation == hop for e in ctx.edges) >= 4 * gold_lines
        starts = [n for e in ctx.edges for n in (e.head, e.tail)
                  if n not in ctx.entities and n not in task.query.named_entities()]
        assert all(world.surface(n) in ctx.text for n in starts)  # a decoy's start is written by name too
    assert with_decoys >= 250


def test_build_context_is_deterministic_per_task_and_seed(v0_test):
    world, tasks = v0_test
    for task in tasks[:50]:
        assert build_context(world, task, seed=3) == build_context(world, task, seed=3)
    differs = sum(build_context(world, t, seed=0).text != build_context(world, t, seed=1).text for t in tasks[:50])
    assert differs >= 45
    with pytest.raises(ConfigError, match="decoys must be an integer >= 0"):
        build_context(world, tasks[0], decoys=-1)


def test_parse_answer_reads_the_labelled_line_cites_lines_before_it_and_ignores_prose_after(world):
    task = TaskSampler(world, 0).sample(0)
    ctx = build_context(world, task)
    cited = ctx.lines[ctx.edges.index(canonical_edge(task.evidence[0]))]
    parsed = parse_answer(f"{cited}\nAnswer: {task.answer}\nthree word prose\n{ctx.lines[-1]}", ctx)
    assert (
        parsed.answer == task.answer and parsed.evidence == (canonical_edge(task.evidence[0]),) and parsed.error is None
    )
    bare = parse_answer(f"{cited}\n{task.answer}", ctx)  # the gold_completion format: the answer on the last line
    assert bare == parsed
    assert parse_answer(gold_completion(task, ctx, cite_evidence=True), ctx).answer == task.answer
    assert parse_answer("evidence first\nAnswer:", ctx).error == "no answer after the Answer: label"
    scored = score_completion(task, f"Answer: {task.answer}\nthree word prose", ctx)
    assert (scored.correct, scored.multiple_candidates, round(scored.total, 6)) == (True, False, 1.2)


def test_context_json_round_trip(world):
    task = TaskSampler(world, 0).sample(1)
    for mode in ("triples", "records"):
        ctx = build_context(world, task, mode=mode)
        assert Context.from_json(ctx.to_json()) == ctx
    assert (
        answer_messages(task, ctx)[1]["content"]
        == answer_prompt(task, ctx)
        == f"Question: {task.question}\nContext:\n{ctx.text}"
    )
