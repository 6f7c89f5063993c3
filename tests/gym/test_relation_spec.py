"""One spec per relation: pages, the edges records show, question phrases and the oracle's reveal
calls all come from `osint_gym.schema.RELATIONS`, and these tests tie them together through the
real tools, for every (relation, direction)."""

from __future__ import annotations

import random
import re

import pytest

from osint_gym.schema import (
    ID_PATTERN,
    ID_PREFIX,
    PLATFORMS,
    RECORD_FIELDS,
    RELATIONS,
    Direction,
    Edge,
    EntityType,
    WorldKind,
    canonical_edge,
)
from osint_gym.tasks import TaskSampler
from osint_gym.tasks.oracle import _reveal_calls
from osint_gym.tasks.paths import DISAMBIGUATORS
from osint_gym.tasks.phrasing import NOUNS, question_text
from osint_gym.tasks.query import Filter, Hop, Query
from osint_gym.tools import DIRECTORY_FILTERS, MAX_LIMIT, TOOLS, Notes
from osint_gym.views import LIST_LIMIT, activity_record, connections, page, record_edges, records_in
from osint_gym.world import WorldConfig
from osint_gym.world.cache import cached_world

SIDES = [(rel, d) for rel in RELATIONS for d in Direction]


@pytest.fixture(scope="module")
def world():
    """A world with near-miss decoys: every relation has edges in it (a person's past exists only there)."""
    return cached_world(WorldConfig(decoy_density=0.5, people_per_location=8.0), 0)
SHOWN_SIDES = [(rel, d) for rel, d in SIDES if RELATIONS[rel].side(d).reveal]


def _near_far(edge: Edge, direction: Direction) -> tuple[str, str]:
    return (edge.head, edge.tail) if direction is Direction.OUT else (edge.tail, edge.head)


def _listed_with(relation: str, direction: Direction) -> tuple[str, ...]:
    """The relations whose entities one reveal call of ``relation`` lists together: the directory lists the people
    at an employer or city through every relation it searches (current and former), anything else one relation."""
    args = [lk.arg for lk in RELATIONS[relation].side(direction).reveal if lk.tool == "search_people"]
    return DIRECTORY_FILTERS[args[0]][1] if args else (relation,)


def _revealable_edges(world, relation: str, direction: Direction, cap: int = 25) -> list[Edge]:
    """Edges of a relation whose near end has few enough neighbours that no page or result limit cuts them."""
    found = []
    for edge in world.edges():
        if edge.relation != relation:
            continue
        near, far = _near_far(edge, direction)
        listed = sum(len(world.neighbors(near, rel, direction)) for rel in _listed_with(relation, direction))
        if listed > min(MAX_LIMIT, LIST_LIMIT):
            continue
        if relation == "alias_of" and not world.entity(far if direction is Direction.IN else near).get("listed"):
            continue  # only listed accounts appear on their owner's page
        found.append(edge)
        if len(found) == cap:
            break
    return found


def _shown_by_calls(world, calls) -> set[Edge]:
    notes, shown = Notes(), set()
    for tool, args in calls:
        data = TOOLS[tool](world, notes, args).data
        shown.update(canonical_edge(e) for r in records_in(data) for e in record_edges(r))
    return shown


@pytest.mark.parametrize(("relation", "direction"), SHOWN_SIDES, ids=[f"{r}-{d.value}" for r, d in SHOWN_SIDES])
def test_reveal_calls_of_each_relation_direction_show_its_edges(world, relation, direction):
    edges = _revealable_edges(world, relation, direction)
    assert edges, f"the world has no {relation} edge to test"
    for edge in edges:
        near, _ = _near_far(edge, direction)
        calls = _reveal_calls(world.kind, relation, direction, near)
        assert [c[0] for c in calls] == [lk.tool for lk in RELATIONS[relation].side(direction).reveal]
        assert canonical_edge(edge) in _shown_by_calls(world, calls), (edge, calls)


def test_an_account_owner_is_shown_by_no_call_on_the_account(world):
    spec = RELATIONS["alias_of"].out
    assert spec.reveal == () and spec.fields == ()
    anonymous = [a for a in world.ids("account") if world.entity(a).get("listed") is False][:30]
    assert anonymous
    for account in anonymous:
        calls = [(name, {arg: account}) for name in TOOLS for arg in ("account", "handle_or_id", "person_or_account")
                 if arg in TOOLS[name].parameters["properties"]]
        assert len(calls) == 5
        assert not [e for e in _shown_by_calls(world, calls) if e.relation == "alias_of" and e.head == account]


def test_every_record_field_that_lists_entities_is_a_relation_field(world):
    """Pages list related entities only in fields the specs declare, and show only true edges."""
    seen: set[tuple[str, str]] = set()
    for eid in world.ids("person")[:40] + world.ids("account")[:40] + [i for t in ("organization", "location",
               "event", "post", "thread") for i in world.ids(t)[:25]]:
        records = [page(world, eid)]
        if world.type_of(eid) in ("person", "account"):
            records.append(connections(world, eid))
        if world.type_of(eid) == "account":
            records.append(activity_record(world, eid, MAX_LIMIT))
        for record in records:
            for key, value in record.items():
                items = value if isinstance(value, list) else [value]
                refs = [i for i in items if isinstance(i, dict) and ("id" in i or "author" in i)]
                if refs:
                    assert (record["type"], key) in RECORD_FIELDS, (record["type"], key)
                    seen.add((record["type"], key))
            for edge in record_edges(record):
                assert world.has_edge(*edge), edge
    assert seen == set(RECORD_FIELDS)  # and every declared field appears on some page


def test_record_fields_list_exactly_the_neighbours_of_their_relation(world):
    pid = world.ids("person")[3]
    rec = page(world, pid)
    for (rtype, name), (rel, direction, _) in RECORD_FIELDS.items():
        if rtype != "person" or name == "accounts":
            continue
        assert name in rec  # in a world with a past, every person has one (a page lists a field only when it is set)
        many = isinstance(rec[name], list)
        shown = [r["id"] for r in (rec[name] if many else [rec[name]]) if r]
        assert shown == world.neighbors(pid, rel, direction)[: None if many else 1], name


@pytest.mark.parametrize(("relation", "direction"), SIDES, ids=[f"{r}-{d.value}" for r, d in SIDES])
def test_every_hop_phrase_of_the_spec_is_used_by_question_generation(world, relation, direction):
    side = RELATIONS[relation].side(direction)
    edge = next(e for e in world.edges() if e.relation == relation)
    start, target = _near_far(edge, direction)
    ttype = world.type_of(target)
    query = Query(start, (Hop(relation, direction),))
    questions = [question_text(world, query, ttype, [ttype], random.Random(i)) for i in range(40)]
    for phrase in side.phrases:
        text = phrase.format(x=world.surface(start), n=NOUNS[ttype])
        assert any(text in q for q in questions), (phrase, questions[:3])


@pytest.mark.parametrize(("relation", "direction"), [s for s in SIDES if RELATIONS[s[0]].side(s[1]).clause])
def test_every_filter_clause_of_the_spec_is_used_by_question_generation(world, relation, direction):
    edge = next(e for e in world.edges() if e.relation == relation)
    entity, value = _near_far(edge, direction)
    query = Query(None, (), world.type_of(entity), (Filter(relation, direction, value),))
    q = question_text(world, query, world.type_of(entity), [], random.Random(0))
    assert RELATIONS[relation].side(direction).clause.format(v=world.surface(value)) in q


def test_disambiguators_are_the_sides_marked_singles_out_in_rank_order():
    o = Direction.OUT
    assert DISAMBIGUATORS["person"] == (("works_at", o), ("lives_in", o), ("attended", o))
    assert DISAMBIGUATORS["post"] == (("references", o), ("mentions", o))
    assert DISAMBIGUATORS["thread"] == (("discusses", o), ("references", o))
    assert set(DISAMBIGUATORS) == {"person", "post", "thread", "event", "organization"}


def test_symmetric_relations_list_their_field_on_one_side_only():
    for spec in RELATIONS.values():
        if spec.symmetric:
            assert spec.out.fields and not spec.inward.fields


def test_reveal_calls_name_real_tool_arguments():
    for rel, d in SIDES:
        for tool, arg in RELATIONS[rel].side(d).reveal:
            assert arg in TOOLS[tool].parameters["properties"], (rel, d, tool, arg)


# ---------------------------------------------------------------------------- world kind, ids, platforms
def test_world_kind_answers_what_each_kind_allows(world):
    assert world.kind is WorldKind.OSINT
    assert world.kind.knows_relation("works_at") and not world.kind.knows_relation("directed_by")
    assert WorldKind.KG.knows_relation("directed_by")
    assert (world.kind.person_type, WorldKind.KG.person_type) == ("person", "entity")
    assert world.kind.procedural_tasks and not WorldKind.KG.procedural_tasks
    assert WorldKind.KG.connections_by_relation and not world.kind.connections_by_relation
    assert _reveal_calls(WorldKind.KG, "directed_by", Direction.IN, "e1") == [
        ("get_connections", {"person_or_account": "e1", "relation": "directed_by"})]


def test_unknown_world_kind_is_a_config_error(world):
    from osint_gym.errors import ConfigError
    from osint_gym.world.graph import World

    with pytest.raises(ConfigError, match="unknown world kind 'graph'; expected one of osint, kg"):
        World(world.graph, kind="graph")


def test_generated_ids_use_the_schema_prefixes_and_platforms(world):
    pattern = re.compile(ID_PATTERN)
    for etype, prefix in ID_PREFIX.items():
        ids = world.ids(etype)
        assert ids and all(i.startswith(prefix) and pattern.fullmatch(i) for i in ids), etype
    assert {world.entity(a)["platform"] for a in world.ids(EntityType.ACCOUNT)} == set(PLATFORMS)


# ---------------------------------------------------------------------------- defect (e)
def _account_in(world, question: str) -> str:
    handles = {world.resolve(h) for h in re.findall(r"@\w+", question)}
    assert len(handles) == 1, question
    return handles.pop()


def _account_states(world, account: str, f: Filter) -> bool:
    """Through the tools: one of the account's own posts (about nobody else) names the value, or,
    for a city, the account's profile gives it."""
    posts = TOOLS["get_user_posts"](world, Notes(), {"account": account, "limit": MAX_LIMIT}).data["posts"]
    label = world.label(f.value)
    if any(label in p["text"] and f.value in [r["id"] for r in p["references"]] and not p["mentions"] for p in posts):
        return True
    profile = TOOLS["get_profile"](world, Notes(), {"handle_or_id": account}).data
    return f.relation == "lives_in" and profile["location"] == label


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_deanonymization_questions_state_only_true_facts_the_account_shows(seed):
    noisy, clean = cached_world(WorldConfig(), seed), cached_world(WorldConfig.clean(n_people=150), seed + 10)
    checked = 0
    for world in (noisy, clean):
        for task in TaskSampler(world, seed, families=["deanonymization"]).generate(8):
            account, person = _account_in(world, task.question), task.answers[0]
            assert world.entity(account)["listed"] is False and world.has_edge(account, "alias_of", person)
            assert task.query.filters and len(task.query.filters) >= 2
            for f in task.query.filters:
                assert f.holds(world, person), (task.question, f)  # true of the owner
                assert _account_states(world, account, f), (task.question, f)  # and shown by the account
                assert world.surface(f.value) in task.question
                checked += 1
    assert checked >= 32
