"""Platform records: what the agent may see of the hidden world.

Each view returns a JSON-ready record. `record_edges` reads back the world edges a record
exhibits; those are what ``add_edge`` may cite: an agent can only put into its evidence graph
what a record it retrieved actually shows (no reward for claims).

Hidden attributes (who owns an anonymous account, which accounts are decoys, which profile
fields are stale) never appear in a record.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from osint_gym.frozen import freeze, memo
from osint_gym.schema import RECORD_FIELDS, Direction, Edge
from osint_gym.world.graph import World

Record = dict[str, Any]
INVERSE = " (inverse)"  # suffix of inverse relations on knowledge-graph entity pages

LIST_LIMIT = 25  # members shown on an org/location/event page; keeps observations bounded
# Records kept per world (about 3 KB each): every page of a default world fits many times over,
# while a 100k-people world (840k entities) stays within a few hundred MB.
MAX_CACHED_RECORDS = 100_000


# ---------------------------------------------------------------------------- records built once per world
def cached_record(build: Callable[..., Record]) -> Callable[..., Record]:
    """Build a record once per (world, arguments) and share it read-only (`osint_gym.frozen`; worlds are never mutated).
    The cache lives in ``world.cache`` (dropped when a world is pickled); ``build.__wrapped__`` is the
    uncached builder."""
    name = build.__name__

    @functools.wraps(build)
    def cached(world: World, *args: Any) -> Record:
        store = world.cache.get("records")
        if store is None:
            store = world.cache["records"] = {}
        key = (name, *args)
        record = store.get(key)
        if record is None:
            if len(store) >= MAX_CACHED_RECORDS:
                store.clear()  # bounds memory on huge worlds; records are rebuilt identically
            record = store[key] = freeze(build(world, *args))
        return record

    return cached


@cached_record
def ref(world: World, entity_id: str) -> Record:
    """A short reference to another entity, as records embed them."""
    attrs = world.entity(entity_id)
    if attrs["type"] == "account":
        return {"id": entity_id, "handle": "@" + attrs["handle"], "platform": attrs["platform"]}
    if attrs["type"] in ("post", "thread"):
        return {"id": entity_id}
    return {"id": entity_id, "name": world.label(entity_id)}


def _refs(world: World, ids: list[str], limit: int | None = None) -> list[Record]:
    return [ref(world, i) for i in (ids if limit is None else ids[:limit])]


def _one(world: World, ids: list[str]) -> Record | None:
    return ref(world, ids[0]) if ids else None


def _linked(world: World, record: str, field: str, entity_id: str) -> list[str]:
    """The entities a record field lists: the relation and direction come from the relation spec."""
    relation, direction, _ = RECORD_FIELDS[(record, field)]
    return world.neighbors(entity_id, relation, direction)


@cached_record
def person_page(world: World, pid: str) -> Record:
    # only accounts their owner lists publicly: who runs an unlisted account stays hidden
    accounts = [a for a in _linked(world, "person", "accounts", pid) if world.entity(a).get("listed")]
    return {
        "id": pid,
        "type": "person",
        "name": world.entity(pid)["name"],
        "employer": _one(world, _linked(world, "person", "employer", pid)),
        "city": _one(world, _linked(world, "person", "city", pid)),
        "accounts": _refs(world, accounts),
        "events": _refs(world, _linked(world, "person", "events", pid)),
        **_listed(world, "person", ("former_employers", "former_cities", "interested_in"), pid),
    }


def _listed(world: World, record: str, fields: tuple[str, ...], entity_id: str) -> Record:
    """The fields of a person's past (worlds with near-miss decoys generate it), each only where it lists someone:
    the pages of a world without them are the pages it always had."""
    found = {name: _refs(world, _linked(world, record, name, entity_id), LIST_LIMIT) for name in fields}
    return {name: refs for name, refs in found.items() if refs}


@cached_record
def account_page(world: World, aid: str) -> Record:
    a = world.entity(aid)
    return {
        "id": aid,
        "type": "account",
        "platform": a["platform"],
        "handle": "@" + a["handle"],
        "display_name": a["display_name"],
        "bio": a["bio"],
        "location": a["location"],  # self-reported: may be outdated
        "joined": a["joined"],
        "following": len(world.neighbors(aid, "follows", "out")),
        "followers": len(world.neighbors(aid, "follows", "in")),
    }


@cached_record
def organization_page(world: World, oid: str) -> Record:
    return {
        "id": oid,
        "type": "organization",
        "name": world.entity(oid)["name"],
        "industry": world.entity(oid).get("industry"),
        "based_in": _one(world, _linked(world, "organization", "based_in", oid)),
    }


@cached_record
def location_page(world: World, lid: str) -> Record:
    return {
        "id": lid,
        "type": "location",
        "name": world.entity(lid)["name"],
        "country": world.entity(lid).get("country"),
        "organizations": _refs(world, _linked(world, "location", "organizations", lid), LIST_LIMIT),
        "events": _refs(world, _linked(world, "location", "events", lid), LIST_LIMIT),
    }


@cached_record
def event_page(world: World, eid: str) -> Record:
    return {
        "id": eid,
        "type": "event",
        "name": world.entity(eid)["name"],
        "date": world.entity(eid).get("date"),
        "held_in": _one(world, _linked(world, "event", "held_in", eid)),
        "attendees": _refs(world, _linked(world, "event", "attendees", eid), LIST_LIMIT),
        **_listed(world, "event", ("interested",), eid),
    }


@cached_record
def post_record(world: World, pid: str) -> Record:
    p = world.entity(pid)
    return {
        "id": pid,
        "type": "post",
        "author": _one(world, _linked(world, "post", "author", pid)),
        "date": p["date"],
        "text": p["text"],
        "mentions": _refs(world, _linked(world, "post", "mentions", pid)),
        "references": _refs(world, _linked(world, "post", "references", pid)),
    }


@cached_record
def thread_record(world: World, tid: str) -> Record:
    t = world.entity(tid)
    return {
        "id": tid,
        "type": "thread",
        "title": t["title"],
        "author": _one(world, _linked(world, "thread", "author", tid)),
        "date": t["date"],
        "discusses": _one(world, _linked(world, "thread", "discusses", tid)),
        "references": _refs(world, _linked(world, "thread", "references", tid)),
        "comments": [{"author": ref(world, c["author"]), "date": c["date"], "text": c["text"]} for c in t["comments"]],
    }


@cached_record
def activity_record(world: World, aid: str, limit: int) -> Record:
    started = [t for t in _linked(world, "activity", "threads_started", aid) if world.type_of(t) == "thread"]
    commented = _linked(world, "activity", "commented_on", aid)
    return {
        "id": aid,
        "type": "activity",
        "threads_started": [{"id": t, "title": world.entity(t)["title"]} for t in started[:limit]],
        "commented_on": [{"id": t, "title": world.entity(t)["title"]} for t in commented[:limit]],
    }


def kg_entity_page(world: World, eid: str, relation: str | None = None, limit: int = LIST_LIMIT) -> Record:
    """An imported knowledge-graph entity: its facts grouped by relation (inverse ones marked)."""
    return _kg_entity_page(world, eid, relation, limit)


@cached_record
def _kg_entity_page(world: World, eid: str, relation: str | None, limit: int) -> Record:
    facts: dict[str, list[str]] = {}
    for rel, direction, other in world.relations_of(eid):
        if relation is not None and rel != relation:
            continue
        bucket = facts.setdefault(rel if direction == "out" else rel + INVERSE, [])
        if len(bucket) < limit:
            bucket.append(other)
    return {"id": eid, "type": "entity", "name": world.label(eid), "facts": facts}


@cached_record
def connections(world: World, entity_id: str) -> Record:
    etype = world.type_of(entity_id)
    if etype == "person":
        knows = _linked(world, "connections", "knows", entity_id)
        return {"id": entity_id, "type": "connections", "knows": _refs(world, knows)}
    if etype == "account":
        return {
            "id": entity_id,
            "type": "connections",
            "following": _refs(world, _linked(world, "connections", "following", entity_id)),
            "followers": _refs(world, _linked(world, "connections", "followers", entity_id)),
        }
    if etype == "entity":
        return kg_entity_page(world, entity_id)
    raise ValueError(f"{entity_id!r} is a {etype}; connections exist for people and accounts")


_PAGES = {
    "person": person_page,
    "account": account_page,
    "organization": organization_page,
    "location": location_page,
    "event": event_page,
    "post": post_record,
    "thread": thread_record,
    "entity": kg_entity_page,
}


def page(world: World, entity_id: str) -> Record:
    """The public page of any entity."""
    return _PAGES[world.type_of(entity_id)](world, entity_id)


# ---------------------------------------------------------------------------- edges a record shows
def _ids(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [value["id"]] if isinstance(value.get("id"), str) else []
    if isinstance(value, list):
        return [v["id"] for v in value if isinstance(v, dict) and isinstance(v.get("id"), str)]
    return []


def record_edges(record: Record) -> list[Edge]:
    """The world edges a record exhibits, read from its fields alone.

    This is the single definition of "what a record shows": tools use it to decide which edges
    ``add_edge`` may cite, and the oracle agent uses it to read tool results. A cached (read-only)
    record computes them once.
    """
    return list(memo(record, _record_edges))


def _record_edges(record: Record) -> tuple[Edge, ...]:
    rid, rtype = record.get("id"), record.get("type")
    if not isinstance(rid, str):
        return ()
    edges: list[Edge] = []
    if rtype == "entity":
        for key, others in record.get("facts", {}).items():
            if key.endswith(INVERSE):
                edges += [Edge(o, key[: -len(INVERSE)], rid) for o in others]
            else:
                edges += [Edge(rid, key, o) for o in others]
        return tuple(edges)
    for fname, value in record.items():  # in field order, so the edges come out in page order
        shown = RECORD_FIELDS.get((rtype, fname))  # type: ignore[arg-type]
        if shown is None:
            continue
        rel, direction, field = shown
        if field.item is not None:  # a list of entries, each naming the entity under one key
            value = [v.get(field.item) for v in value if isinstance(v, dict)] if isinstance(value, list) else []
        for other in _ids(value):
            edges.append(Edge(rid, rel, other) if direction is Direction.OUT else Edge(other, rel, rid))
    return tuple(dict.fromkeys(edges))


def entities_in(data: Any) -> frozenset[str]:
    """Every entity id ``data`` shows (each appears as an ``"id"`` field somewhere); once per cached record."""
    return memo(data, _entities_in)


def _entities_in(data: Any) -> frozenset[str]:
    found: set[str] = set()
    if isinstance(data, dict):
        if isinstance(data.get("id"), str):
            found.add(data["id"])
        values: Any = data.values()
    else:
        values = data if isinstance(data, list) else ()
    for value in values:
        if isinstance(value, (dict, list)):
            found |= entities_in(value)
    return frozenset(found)


def platforms_in(data: Any) -> dict[str, str]:
    """id -> platform of every account (page or reference) inside ``data``; once per cached record."""
    return memo(data, _platforms_in)


def _platforms_in(data: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    if isinstance(data, dict):
        if isinstance(data.get("id"), str) and "platform" in data:
            found[data["id"]] = data["platform"]
        values: Any = data.values()
    else:
        values = data if isinstance(data, list) else ()
    for value in values:
        if isinstance(value, (dict, list)):
            found.update(platforms_in(value))
    return found


def records_in(data: Any) -> list[Record]:
    """Every typed record inside a tool result (search results nest them in lists)."""
    return list(memo(data, _records_in))


def _records_in(data: Any) -> list[Record]:
    found: list[Record] = []
    if isinstance(data, dict):
        if isinstance(data.get("type"), str) and "id" in data:
            found.append(data)
        for key in ("results", "posts"):
            for item in data.get(key, ()) if isinstance(data.get(key), list) else ():
                found += memo(item, _records_in)
    return found
