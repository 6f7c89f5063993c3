"""Single-turn contexts, offers' distractors and the single-turn answer format."""

from __future__ import annotations

import random

from osint_gym import proposals
from osint_gym.schema import canonical_edge
from osint_gym.single_turn import (
    Context,
    answer_messages,
    answer_prompt,
    build_context,
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


def test_contexts_show_each_edge_once_and_all_gold_evidence(world):
    for task in TaskSampler(world, 0).generate(100):
        ctx = build_context(world, task, n_distractors=6)
        assert len(set(ctx.edges)) == len(ctx.edges)
        assert {canonical_edge(e) for e in task.evidence} <= set(ctx.edges)
        assert len(ctx.edges) <= len(task.evidence) + 6


def test_parse_answer_reads_the_labelled_line_cites_lines_before_it_and_ignores_prose_after(world):
    task = TaskSampler(world, 0).sample(0)
    ctx = build_context(world, task)
    cited = ctx.lines[ctx.edges.index(canonical_edge(task.evidence[0]))]
    parsed = parse_answer(f"{cited}\nAnswer: {task.answer}\nthree word prose\n{ctx.lines[-1]}", ctx)
    assert parsed.answer == task.answer and parsed.evidence == (canonical_edge(task.evidence[0]),) and parsed.error is None
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
    assert answer_messages(task, ctx)[1]["content"] == answer_prompt(task, ctx) == f"Question: {task.question}\nContext:\n{ctx.text}"
