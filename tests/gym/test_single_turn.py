"""Single-turn contexts, offers' distractors and the single-turn answer format."""

from __future__ import annotations

import random

from osint_gym import proposals
from osint_gym.schema import canonical_edge
from osint_gym.single_turn import build_context, distractor_edges
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
