"""Choose-mode proposals: the generator names a path by the numbers of offered edges, and osint-gym
resolves, phrases and verifies it; nothing it could miscopy reaches the task."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osint_gym import proposals as P
from osint_gym.schema import canonical_edge
from osint_gym.tasks import FailureReason
from osint_gym.world import WorldConfig
from osint_gym.world.cache import cached_world


@pytest.fixture(scope="module")
def world():
    return cached_world(WorldConfig(), 1)


@pytest.fixture(scope="module")
def offers(world):
    return [P.make_offer(world, 7, i, mode="choose", max_hops=2) for i in range(30)]


def _verdict(world, offer, text, max_hops=2):
    return P.validate_proposal(world, P.parse_proposal(text), offer=offer, max_hops=max_hops)


def test_an_offer_numbers_its_edges_and_shows_several_paths_from_one_start(world, offers):
    assert P.make_offer(world, 7, 3, mode="choose", max_hops=2) == offers[3]  # pure in (seed, index)
    for offer in offers:
        assert set(offer.path) <= set(offer.context) and len(set(offer.context)) == len(offer.context)
        user = P.generator_messages(world, offer)[1]["content"]
        assert user.startswith(f"Start: {world.surface(offer.start)} = {offer.start}\nEdges: 1 ")
        for k, e in enumerate(offer.context, 1):
            assert f"{k} {e.head} {e.relation} {e.tail}" in user
    # more than the gold path starts at the start in most offers: the generator has a choice
    starts = [sum(offer.start in (e.head, e.tail) for e in offer.context) for offer in offers]
    assert sum(n >= 2 for n in starts) >= len(offers) // 2


def test_the_gold_choice_is_valid_and_is_exactly_the_offered_path(world, offers):
    for offer in offers:
        gold = P.gold_proposal(world, offer)
        assert gold.startswith("P: ") and all(part.isdigit() for part in gold[3:].split())
        verdict, task = _verdict(world, offer, gold)
        assert verdict.ok, (offer.offer_id, verdict)
        assert task.evidence == tuple(canonical_edge(e) for e in offer.path)
        assert world.surface(offer.start) in task.question and task.answers[0] not in task.question


def test_each_number_resolves_to_exactly_the_edge_it_names(world, offers):
    checked = 0
    for offer in offers:
        for k, edge in enumerate(offer.context, 1):
            if offer.start not in (edge.head, edge.tail):
                continue
            resolved = P.resolve_choice(world, P.Proposal("", "", (), (k,)), offer)
            assert isinstance(resolved, P.Proposal) and resolved.evidence == (edge,) and resolved.refs == (k,)
            assert resolved.answer == (edge.tail if edge.head == offer.start else edge.head)
            assert world.surface(offer.start) in resolved.question
            checked += 1
    assert checked >= len(offers)


def test_bad_references_get_a_typed_reason(world, offers):
    offer = offers[0]
    n = len(offer.context)
    off_start = next(k for k, e in enumerate(offer.context, 1) if offer.start not in (e.head, e.tail))
    cases = {
        "P: 0": FailureReason.OUT_OF_RANGE, f"P: {n + 1}": FailureReason.OUT_OF_RANGE, "P: 99999": FailureReason.MALFORMED,
        "P: two": FailureReason.MALFORMED, "P:": FailureReason.MALFORMED, "P: -1": FailureReason.MALFORMED,
        "P: 1 2 3": FailureReason.TOO_LARGE, f"P: {off_start}": FailureReason.NOT_A_PATH,
        "Q: Who is it?\nA: person_1": FailureReason.MALFORMED,  # a choose offer takes numbers, not a phrased question
        "": FailureReason.MALFORMED,
    }
    for text, reason in cases.items():
        verdict, task = _verdict(world, offer, text)
        assert (verdict.reason, task) == (reason, None), text
        assert verdict.detail
    assert "edges 1.." in _verdict(world, offer, "P: 0")[0].detail
    fixed = P.make_offer(world, 7, 0, mode="fixed", max_hops=2)
    verdict, _ = _verdict(world, fixed, "P: 1")
    assert verdict.reason is FailureReason.MALFORMED and "choose-mode" in verdict.detail


def test_a_path_that_revisits_or_breaks_is_not_a_path(world, offers):
    for offer in offers:
        first = next((k for k, e in enumerate(offer.context, 1) if offer.start in (e.head, e.tail)), None)
        if first is not None:
            verdict, _ = _verdict(world, offer, f"P: {first} {first}")
            assert verdict.reason is FailureReason.NOT_A_PATH
            return
    pytest.fail("no offer has an edge at its start")


def test_format_and_parse_round_trip():
    proposal = P.Proposal("", "", (), (3, 1))
    assert P.format_proposal(proposal) == "P: 3 1"
    assert P.parse_proposal("P: 3 1") == proposal and P.parse_proposal("p: 3, 1") == proposal


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(max_size=80), st.lists(st.integers(-3, 40), max_size=5).map(lambda ks: "P: " + " ".join(map(str, ks)))))
def test_any_completion_gets_a_verdict_and_never_raises(world, offers, text):
    offer = offers[len(text) % len(offers)]
    verdict, task = _verdict(world, offer, text)
    assert isinstance(verdict.reason, FailureReason)
    assert (task is not None) == verdict.ok
    if task is not None:
        assert set(task.evidence) <= {canonical_edge(e) for e in offer.context}
