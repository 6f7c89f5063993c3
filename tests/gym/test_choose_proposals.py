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


def test_an_offer_numbers_verified_paths_from_one_start(world, offers):
    assert P.make_offer(world, 7, 3, mode="choose", max_hops=2) == offers[3]  # pure in (seed, index)
    assert P.Offer.from_json(offers[3].to_json()) == offers[3]
    for offer in offers:
        assert offer.path in offer.choices and len(set(offer.choices)) == len(offer.choices)
        user = P.generator_messages(world, offer)[1]["content"]
        assert user.startswith(f"Start: {world.surface(offer.start)} = {offer.start}\n1: {offer.start} ")
        for k, choice in enumerate(offer.choices, 1):
            assert f"{k}: {P.walk_text(offer, choice)}" in user
    assert {len(o.choices) for o in offers} == {P.CHOOSE_PATHS}  # the same range everywhere: any number in it is a task
    assert {len(c) for o in offers for c in o.choices} == {1, 2}  # of difficulty, too


def test_every_offered_choice_is_a_valid_task_and_exactly_that_path(world, offers):
    for offer in offers:
        assert P.gold_proposal(world, offer) == f"P: {offer.choices.index(offer.path) + 1}"
        for k, choice in enumerate(offer.choices, 1):
            verdict, task = _verdict(world, offer, f"P: {k}")
            assert verdict.ok, (offer.offer_id, k, verdict)
            assert task.evidence == tuple(canonical_edge(e) for e in choice)
            end = P.chain_query(offer.start, choice)[1][-1]
            assert task.answers == (end,) and world.surface(offer.start) in task.question and end not in task.question


def test_bad_references_get_a_typed_reason(world, offers):
    offer = offers[0]
    n = len(offer.choices)
    cases = {
        "P: 0": FailureReason.OUT_OF_RANGE,
        f"P: {n + 1}": FailureReason.OUT_OF_RANGE,
        "P: 99999": FailureReason.MALFORMED,
        "P: two": FailureReason.MALFORMED,
        "P:": FailureReason.MALFORMED,
        "P: -1": FailureReason.MALFORMED,
        "P: 1 2": FailureReason.MALFORMED,  # one path, not two
        "Q: Who is it?\nA: person_1": FailureReason.MALFORMED,  # a choose offer takes a number, not a phrased question
        "": FailureReason.MALFORMED,
    }
    for text, reason in cases.items():
        verdict, task = _verdict(world, offer, text)
        assert (verdict.reason, task) == (reason, None), text
        assert verdict.detail
    assert f"paths 1..{n}" in _verdict(world, offer, "P: 0")[0].detail
    fixed = P.make_offer(world, 7, 0, mode="fixed", max_hops=2)
    verdict, _ = _verdict(world, fixed, "P: 1")
    assert verdict.reason is FailureReason.MALFORMED and "choose-mode" in verdict.detail


def test_a_hand_made_offer_whose_path_does_not_walk_from_its_start_is_not_a_path(world, offers):
    import dataclasses

    offer = offers[0]
    elsewhere = next(o.path for o in offers if offer.start not in {x for e in o.path for x in (e.head, e.tail)})
    verdict, task = _verdict(world, dataclasses.replace(offer, choices=(elsewhere,), families=()), "P: 1")
    assert (verdict.reason, task) == (FailureReason.NOT_A_PATH, None)


def test_format_and_parse_round_trip():
    proposal = P.Proposal("", "", (), (3,))
    assert P.format_proposal(proposal) == "P: 3"
    assert P.parse_proposal("P: 3") == proposal and P.parse_proposal("p: 3") == proposal
    assert P.parse_proposal("P: 3, 1").refs == (3, 1)  # parsed; validation then says it is not one path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.one_of(
        st.text(max_size=80), st.lists(st.integers(-3, 40), max_size=5).map(lambda ks: "P: " + " ".join(map(str, ks)))
    )
)
def test_any_completion_gets_a_verdict_and_never_raises(world, offers, text):
    offer = offers[len(text) % len(offers)]
    verdict, task = _verdict(world, offer, text)
    assert isinstance(verdict.reason, FailureReason)
    assert (task is not None) == verdict.ok
    if task is not None:
        assert task.evidence in {tuple(canonical_edge(e) for e in c) for c in offer.choices}


@pytest.fixture(scope="module")
def filtered(world):
    return [P.make_offer(world, 7, i, mode="choose", max_hops=3, filters=True) for i in range(30)]


def test_a_filtered_offer_shows_the_families_constrained_paths_and_each_number_is_exactly_that_query(world, filtered):
    assert P.make_offer(world, 7, 3, mode="choose", max_hops=3, filters=True) == filtered[3]
    assert P.Offer.from_json(filtered[3].to_json()) == filtered[3]
    narrowed = 0
    for offer in filtered:
        assert len(offer.queries) == len(offer.choices) == P.CHOOSE_PATHS
        assert (
            P.gold_proposal(world, offer) == f"P: {offer.choices.index(offer.path) + 1}"
        )  # the demonstrations' answer
        user = P.generator_messages(world, offer)[1]["content"]
        for k, (choice, query) in enumerate(zip(offer.choices, offer.queries), 1):
            assert f"{k}: {P.walk_text(offer, choice, query)}" in user
            verdict, task = _verdict(world, offer, f"P: {k}", max_hops=3)
            assert verdict.ok, (offer.offer_id, k, verdict)
            assert task.query == query and task.evidence == tuple(canonical_edge(e) for e in choice)
            assert task.answers == tuple(query.evaluate(world)) and task.answers[0] not in task.question
            shown = [f for hop in query.hops for f in hop.filters if f.relation != "type"]
            narrowed += bool(shown)
            for f in shown:  # every filter is shown to the generator and stated in the question
                assert f" {f.value}" in P.walk_text(offer, choice, query)
                if f.relation != "platform":
                    assert world.surface(f.value) in task.question
    assert narrowed >= 10  # the point of filtered offers: constrained hops, as in the seed tasks


def test_filtered_offers_need_choose_mode_and_a_hand_made_query_that_does_not_walk_is_not_a_path(world, filtered):
    import dataclasses

    from osint_gym.errors import ConfigError

    with pytest.raises(ConfigError, match="choose mode"):
        P.make_offer(world, 7, 0, mode="fixed", filters=True)
    offer = filtered[0]
    with pytest.raises(ConfigError, match="2 queries for 3 choices"):  # each choice has its query, or none has
        dataclasses.replace(offer, queries=offer.queries[:2])
    other = next(o for o in filtered if o.start != offer.start)
    verdict, task = _verdict(world, dataclasses.replace(offer, queries=other.queries), "P: 1", max_hops=3)
    assert (verdict.reason, task) == (FailureReason.NOT_A_PATH, None)
    verdict, _ = _verdict(world, offer, "P: 4", max_hops=3)
    assert verdict.reason is FailureReason.OUT_OF_RANGE
    long = next((o, k) for o in filtered for k, q in enumerate(o.queries, 1) if q.n_hops == 3)
    verdict, _ = _verdict(world, long[0], f"P: {long[1]}", max_hops=2)  # a filter's edge is evidence, not a hop
    assert verdict.reason is FailureReason.TOO_LARGE and "3 hops" in verdict.detail
