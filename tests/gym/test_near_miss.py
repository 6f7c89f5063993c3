"""Near-miss decoys planted by the world generator, a person's past, load-bearing constraints and the
question-reading shortcut's view of a task (`osint_gym.world.near_miss`, `osint_gym.tasks.near_miss`)."""

from __future__ import annotations

import statistics

import pytest

from osint_gym.errors import ConfigError
from osint_gym.schema import Direction
from osint_gym.tasks import Filter, Hop, Query, TaskSampler
from osint_gym.tasks.near_miss import Reading, near_misses, reading
from osint_gym.world import WorldConfig, generate_world
from osint_gym.world.cache import cached_world
from osint_gym.world.near_miss import FORMER, NEAR_MISS_GROUP, decoy_count

OUT = Direction.OUT
PAST = ("worked_at", "lived_in", "interested_in")
CURRENT = {"worked_at": "works_at", "lived_in": "lives_in", "interested_in": "attended"}


@pytest.fixture(scope="module")
def decoy_world():
    return cached_world(WorldConfig(decoy_density=0.8), 11)


def _facts(world, person):
    return {rel: set(world.neighbors(person, rel, OUT)) for rel in ("works_at", "lives_in", "attended", *PAST)}


def _mirrored(world, person, other):
    """The near-miss relation: ``other`` knows every acquaintance of ``person`` and holds one of its facts
    (employer, city or an event) only through the past relation, every other current fact the same."""
    a, b = _facts(world, person), _facts(world, other)
    missed = [rel for rel in PAST if a[CURRENT[rel]] & b[rel] and not a[CURRENT[rel]] <= b[CURRENT[rel]]]
    return len(missed) == 1 and set(world.neighbors(person, "knows", OUT)) <= set(world.neighbors(other, "knows", OUT))


def test_a_world_without_decoys_draws_what_it_drew_before_the_knob():
    assert WorldConfig().decoy_density == 0.0 and decoy_count(200, 0.0) == 0
    plain = generate_world(WorldConfig(), 4)
    assert not any(e.relation in PAST for e in plain.edges())
    assert generate_world(WorldConfig(decoy_density=0.0), 4).fingerprint() == plain.fingerprint()


def test_decoys_come_in_groups_that_mirror_one_person_but_for_one_fact(decoy_world):
    people = decoy_world.ids("person")
    assert len(people) <= 200 and decoy_count(200, 0.8) == 160 and NEAR_MISS_GROUP == 4
    groups = {p: [q for q in people if q != p and _mirrored(decoy_world, p, q)] for p in people}
    anchors = {p: g for p, g in groups.items() if len(g) >= NEAR_MISS_GROUP}
    # every base person with an acquaintance has its group (a fifth of the people: 40 groups of 4 at most)
    decoys = {q for g in anchors.values() for q in g}
    assert len(anchors) >= 30 and len(decoys) >= 120
    # ids were shuffled: the decoys, made last, are spread over the id range (not the top 160 numbers)
    numbers = sorted(int(p.split("_")[1]) for p in anchors)
    assert numbers[0] < 40 and numbers[-1] > 160


def test_every_person_of_a_decoy_world_has_a_past_and_records_show_it(decoy_world):
    from osint_gym.views import page

    for person in decoy_world.ids("person"):
        facts = _facts(decoy_world, person)
        assert all(len(facts[rel]) == 1 for rel in PAST), person  # having a past marks nobody
        assert not facts["works_at"] & facts["worked_at"] and not facts["lives_in"] & facts["lived_in"]
        assert not facts["attended"] & facts["interested_in"]
        record = page(decoy_world, person)
        assert [r["id"] for r in record["former_employers"]] == sorted(facts["worked_at"])
    assert set(FORMER.values()) == set(PAST)


def test_near_misses_are_matched_on_degree_and_touch_every_named_entity_the_gold_touches(decoy_world):
    tasks = TaskSampler(decoy_world, 3, families=["network_discovery"], difficulty="easy").generate(120)
    found = [(t, near_misses(decoy_world, t)) for t in tasks]
    with_decoys = [(t, nm) for t, nm in found if len(nm) >= NEAR_MISS_GROUP]
    assert len(with_decoys) >= 20
    degree = lambda e: sum(1 for _ in decoy_world.incident_edges(e))  # noqa: E731
    gold = statistics.mean(degree(t.answer) for t, _ in with_decoys)
    near = statistics.mean(degree(c) for _, nm in with_decoys for c in nm)
    assert abs(near - gold) / gold < 0.15, (gold, near)
    for t, nm in with_decoys:
        named = set(t.query.named_entities())
        for c in nm:
            touched = {n for e in decoy_world.incident_edges(c) for n in (e.head, e.tail)} & named
            assert touched == named and c not in t.query.evaluate(decoy_world)  # a near-miss, not an answer


def test_load_bearing_constraints_and_minimal_queries(decoy_world):
    person = next(p for p in decoy_world.ids("person") if len(decoy_world.neighbors(p, "knows", OUT)) > 4)
    gold = decoy_world.neighbors(person, "knows", OUT)[0]
    employer, home = (decoy_world.neighbors(gold, rel, OUT)[0] for rel in ("works_at", "lives_in"))
    both = Query(person, (Hop("knows", OUT, (Filter("works_at", OUT, employer), Filter("lives_in", OUT, home))),))
    assert both.constraints() == [(0, 0), (0, 1)]
    assert both.without((0, 0)).hops[0].filters == (Filter("lives_in", OUT, home),)
    lighter = both.minimal(decoy_world)
    assert lighter.chain(decoy_world) == both.chain(decoy_world) and len(lighter.constraints()) <= 2
    if lighter.evaluate(decoy_world) == [gold]:
        # what minimal() leaves is load-bearing: dropping any constraint leaves more than one answer
        assert all(len(lighter.without(c).evaluate(decoy_world)) > 1 for c in lighter.constraints())
        assert lighter.load_bearing(decoy_world)
    free = Query(person, (Hop("knows", OUT),))
    assert free.constraints() == [] and free.load_bearing(decoy_world) and free.minimal(decoy_world) == free


def test_reading_is_fair_only_where_the_shortcut_neither_finds_nor_rules_out_the_gold():
    assert Reading(2, 2, 2, ("a", "b", "c", "d")).fair(4) and not Reading(2, 2, 2, ("a", "b", "c")).fair(4)
    assert not Reading(1, 2, 0, ("a",) * 5).fair(4)  # a candidate touches more named entities than the gold
    assert Reading(0, 3, 0, ()).fair(4) and not Reading(0, 3, 1, ()).fair(4)  # a chain: an entity on it touches one


def test_reading_counts_what_the_world_shows(decoy_world):
    task = next(t for t in TaskSampler(decoy_world, 5, families=["network_discovery"], difficulty="easy")
                .generate(60) if len(near_misses(decoy_world, t)) >= NEAR_MISS_GROUP)
    r = reading(decoy_world, task)
    assert r.gold == len(set(task.query.named_entities())) and r.most <= r.gold and r.fair()


def test_decoy_density_is_checked_like_every_world_knob():
    with pytest.raises(ConfigError, match=r"decoy_density must be in \[0.0, 0.8\]"):
        WorldConfig(decoy_density=0.9)
    with pytest.raises(ConfigError, match="decoy_density must be a number"):
        WorldConfig(decoy_density="high")
