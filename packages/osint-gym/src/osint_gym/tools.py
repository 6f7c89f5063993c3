"""The agent's tools: searches and lookups over platform records, with OpenAI-style schemas.

Every tool reads the world through `osint_gym.views`, so what it returns is a platform record,
never the hidden graph. Searches go through indices (name tokens, handles, a lazily built
inverted index over posts and threads), never a scan over every record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from osint_gym import views
from osint_gym.errors import UnknownEntityError
from osint_gym.schema import RELATIONS, Edge, canonical_edge
from osint_gym.world.graph import World, tokenize

MAX_LIMIT = 20
DEFAULT_LIMIT = 10
# search_people's filters, as argument -> (entity type, relations): the relations whose reverse lookup the
# relation specs give to the directory ("the people who work at O", then those who worked there).
def _directory_filters() -> dict[str, tuple[str, tuple[str, ...]]]:
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for spec in RELATIONS.values():
        for lookup in spec.inward.reveal:
            if lookup.tool == "search_people":
                etype, rels = found.get(lookup.arg, (spec.tails[0].value, ()))
                found[lookup.arg] = (etype, (*rels, spec.name))
    return found


DIRECTORY_FILTERS = _directory_filters()


class ToolError(Exception):
    """A tool call the env answers with an error observation (bad arguments, unknown entity)."""


@dataclass
class Notes:
    """What this episode has retrieved: the only data ``search_notes`` may search, and the only
    edges ``add_edge`` may cite. Derived data (edges, search text) is computed on demand so that
    a plain lookup step stays cheap."""

    records: dict[tuple[str, str], views.Record] = field(default_factory=dict)  # (type, id) -> record
    _pending: list[views.Record] = field(default_factory=list)
    _supported: set[Edge] = field(default_factory=set)
    _texts: dict[tuple[str, str], str] = field(default_factory=dict)

    def add_result(self, data: Any) -> None:
        for record in views.records_in(data):
            key = (record["type"], record["id"])
            if key not in self.records:
                self.records[key] = record
                self._pending.append(record)

    def supported(self) -> set[Edge]:
        """Canonical edges shown by the records retrieved so far."""
        for record in self._pending:
            self._supported.update(canonical_edge(e) for e in views.record_edges(record))
        self._pending.clear()
        return self._supported

    def text(self, key: tuple[str, str]) -> str:
        if key not in self._texts:
            self._texts[key] = json.dumps(self.records[key], ensure_ascii=False).lower()
        return self._texts[key]


@dataclass(frozen=True)
class ToolOutput:
    data: dict[str, Any]

    @property
    def edges(self) -> list[Edge]:
        return [e for r in views.records_in(self.data) for e in views.record_edges(r)]

    @property
    def entities(self) -> frozenset[str]:
        """Every entity id the result shows: records and every reference inside them."""
        return views.entities_in(self.data)


# ---------------------------------------------------------------------------- argument checks
# A hand-written checker instead of jsonschema: the runtime dependencies stay gymnasium, networkx
# and numpy, and a step must stay cheap (this runs on every tool call).
def _check_args(spec: ToolSpec, args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise ToolError(f"{spec.name}: arguments must be a JSON object, got {type(args).__name__}")
    props = spec.parameters["properties"]
    unknown = [k for k in args if k not in props]
    if unknown:
        raise ToolError(f"{spec.name}: unknown argument {unknown[0]!r}; expected {', '.join(props)}")
    out: dict[str, Any] = {}
    for name, schema in props.items():
        if name not in args or args[name] is None:
            if name in spec.parameters.get("required", ()):
                raise ToolError(f"{spec.name}: missing required argument {name!r}")
            out[name] = schema.get("default")
            continue
        value = args[name]
        if schema["type"] == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ToolError(f"{spec.name}: {name!r} must be an integer, got {value!r:.40}")
            if not schema.get("minimum", value) <= value <= schema.get("maximum", value):
                raise ToolError(f"{spec.name}: {name!r} must be in [{schema['minimum']}, {schema['maximum']}]")
        elif not isinstance(value, str):
            raise ToolError(f"{spec.name}: {name!r} must be a string, got {type(value).__name__}")
        elif len(value) > 200:
            raise ToolError(f"{spec.name}: {name!r} is longer than 200 characters")
        out[name] = value
    return out


def _entity(world: World, ref: str, want: tuple[str, ...], arg: str) -> str:
    eid = world.resolve(ref)
    if eid is None:
        raise ToolError(f"no entity matches {arg}={ref!r:.60}")
    etype = world.type_of(eid)
    if want and etype not in want:
        raise ToolError(f"{arg}={ref!r:.60} is a {etype}; expected {' or '.join(want)}")
    return eid


def _output(data: dict[str, Any], notes: Notes) -> ToolOutput:
    notes.add_result(data)
    return ToolOutput(data)


_RENDER = {"post": views.post_record, "thread": views.thread_record}


def _text_index(world: World, etype: str) -> dict[str, dict[str, None]]:
    """token -> ordered set of post/thread ids, built on first use and cached on the world."""
    key = f"text_index:{etype}"
    index = world.cache.get(key)
    if index is None:
        index = {}
        # not cached: the index reads every record once
        render = _RENDER[etype].__wrapped__  # type: ignore[attr-defined]
        for rid in world.ids(etype):
            for tok in dict.fromkeys(tokenize(json.dumps(render(world, rid), ensure_ascii=False))):
                index.setdefault(tok, {})[rid] = None
        world.cache[key] = index
    return index


def _search_text(world: World, etype: str, query: str, limit: int, notes: Notes) -> ToolOutput:
    tokens = list(dict.fromkeys(tokenize(query)))
    if not tokens:
        raise ToolError("query has no searchable words")
    index = _text_index(world, etype)
    postings = sorted((index.get(t, {}) for t in tokens), key=len)
    hits = [rid for rid in postings[0] if all(rid in p for p in postings[1:])]
    results = [_RENDER[etype](world, rid) for rid in hits[:limit]]
    return _output({"query": query, "total": len(hits), "results": results}, notes)


# ---------------------------------------------------------------------------- the tools
def search_posts(world: World, notes: Notes, query: str, limit: int) -> ToolOutput:
    return _search_text(world, "post", query, limit, notes)


def search_threads(world: World, notes: Notes, query: str, limit: int) -> ToolOutput:
    return _search_text(world, "thread", query, limit, notes)


def get_post(world: World, notes: Notes, post_id: str) -> ToolOutput:
    return _output(views.post_record(world, _entity(world, post_id, ("post",), "post_id")), notes)


def get_thread(world: World, notes: Notes, thread_id: str) -> ToolOutput:
    return _output(views.thread_record(world, _entity(world, thread_id, ("thread",), "thread_id")), notes)


@views.cached_record
def _posts_page(world: World, aid: str, relation: str, direction: str, limit: int) -> views.Record:
    posts = [p for p in world.neighbors(aid, relation, direction) if world.type_of(p) == "post"]
    return {
        "account": views.ref(world, aid),
        "total": len(posts),
        "posts": [views.post_record(world, p) for p in posts[:limit]],
    }


def _posts_about(world: World, notes: Notes, account: str, relation: str, direction: str, limit: int) -> ToolOutput:
    aid = _entity(world, account, ("account",), "account")
    return _output(_posts_page(world, aid, relation, direction, limit), notes)


def get_user_posts(world: World, notes: Notes, account: str, limit: int) -> ToolOutput:
    return _posts_about(world, notes, account, "authored", "out", limit)


def get_mentions(world: World, notes: Notes, account: str, limit: int) -> ToolOutput:
    return _posts_about(world, notes, account, "mentions", "in", limit)


def get_user_activity(world: World, notes: Notes, account: str, limit: int) -> ToolOutput:
    aid = _entity(world, account, ("account",), "account")
    return _output(views.activity_record(world, aid, limit), notes)


def get_profile(world: World, notes: Notes, handle_or_id: str) -> ToolOutput:
    return _output(views.page(world, _entity(world, handle_or_id, (), "handle_or_id")), notes)


def search_people(
    world: World, notes: Notes, name: str | None, organization: str | None, location: str | None, limit: int
) -> ToolOutput:
    if not (name or organization or location):
        raise ToolError("search_people: give at least one of name, organization, location")
    person_type = world.kind.person_type
    candidates: dict[str, None] | None = None
    if name:
        tokens = list(dict.fromkeys(tokenize(name)))
        if not tokens:
            raise ToolError("search_people: name has no searchable words")
        for tok in tokens:
            ids = {i: None for i in world.name_tokens.get(tok, ()) if world.type_of(i) == person_type}
            candidates = ids if candidates is None else {i: None for i in candidates if i in ids}
    for arg, (etype, rels) in DIRECTORY_FILTERS.items():
        value = {"organization": organization, "location": location}[arg]
        if value:
            if not world.kind.directory_filters:
                raise ToolError(f"search_people: {arg} filters exist only in OSINT worlds")
            target = _entity(world, value, (etype,), arg)
            # current and former ones alternately: a cut page shows both (a world without a past lists the current)
            found = zip_longest(*(world.neighbors(target, rel, "in") for rel in rels))
            ids = dict.fromkeys(p for group in found for p in group if p is not None)
            candidates = ids if candidates is None else {i: None for i in candidates if i in ids}
    hits = list(candidates or {})
    return _output({"total": len(hits), "results": [views.page(world, p) for p in hits[:limit]]}, notes)


def get_connections(world: World, notes: Notes, person_or_account: str, relation: str | None) -> ToolOutput:
    eid = _entity(world, person_or_account, ("person", "account", "entity"), "person_or_account")
    if relation is not None and world.kind.connections_by_relation:
        return _output(views.kg_entity_page(world, eid, relation=relation, limit=200), notes)
    return _output(views.connections(world, eid), notes)


def search_notes(world: World, notes: Notes, query: str, limit: int) -> ToolOutput:
    tokens = tokenize(query)
    if not tokens:
        raise ToolError("query has no searchable words")
    # A scan is right here: notes hold only what this episode retrieved (tens of records).
    hits = [record for key, record in notes.records.items() if all(t in notes.text(key) for t in tokens)]
    # results are copies of earlier records: nothing new is retrieved, so nothing is added to notes
    return ToolOutput({"query": query, "total": len(hits), "results": hits[:limit]})


# ---------------------------------------------------------------------------- registry
def _str(desc: str) -> dict[str, Any]:
    return {"type": "string", "description": desc}


_LIMIT = {
    "type": "integer",
    "description": "Maximum results.",
    "minimum": 1,
    "maximum": MAX_LIMIT,
    "default": DEFAULT_LIMIT,
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., ToolOutput]
    kg: bool = False  # also offered for imported knowledge graphs

    def schema(self) -> dict[str, Any]:
        """OpenAI-style function schema for chat templates."""
        params = {
            "type": "object",
            "properties": {
                k: {kk: vv for kk, vv in v.items() if kk != "default"} for k, v in self.parameters["properties"].items()
            },
            "required": list(self.parameters.get("required", [])),
        }
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    def __call__(self, world: World, notes: Notes, args: Any) -> ToolOutput:
        checked = _check_args(self, args)
        try:
            return self.fn(world, notes, **checked)
        except UnknownEntityError as exc:
            raise ToolError(str(exc)) from None
        except ValueError as exc:  # e.g. connections of an entity type that has none
            raise ToolError(str(exc)) from None


def _spec(
    tool_name: str, description: str, fn: Callable[..., ToolOutput], required: list[str], kg: bool = False, **props: Any
) -> ToolSpec:
    return ToolSpec(tool_name, description, {"type": "object", "properties": props, "required": required}, fn, kg)


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        _spec(
            "search_posts",
            "Full-text search over microblog posts (all words must match).",
            search_posts,
            ["query"],
            query=_str("Words, handles, names or ids to look for."),
            limit=_LIMIT,
        ),
        _spec(
            "get_post",
            "Fetch one post: author, text, mentioned accounts, referenced entities.",
            get_post,
            ["post_id"],
            post_id=_str("A post id such as post_12."),
        ),
        _spec(
            "get_user_posts",
            "Posts written by an account.",
            get_user_posts,
            ["account"],
            account=_str("Account id or @handle."),
            limit=_LIMIT,
        ),
        _spec(
            "get_mentions",
            "Posts that mention an account.",
            get_mentions,
            ["account"],
            account=_str("Account id or @handle."),
            limit=_LIMIT,
        ),
        _spec(
            "search_threads",
            "Full-text search over forum threads and their comments.",
            search_threads,
            ["query"],
            query=_str("Words, handles, names or ids to look for."),
            limit=_LIMIT,
        ),
        _spec(
            "get_thread",
            "Fetch one forum thread with its comments.",
            get_thread,
            ["thread_id"],
            thread_id=_str("A thread id such as thread_3."),
        ),
        _spec(
            "get_user_activity",
            "Forum threads an account started and threads it commented on.",
            get_user_activity,
            ["account"],
            account=_str("Account id or @handle."),
            limit=_LIMIT,
        ),
        _spec(
            "get_profile",
            "The public page of any entity: a person's directory entry, an account profile, "
            "an organization, location, event, post or thread.",
            get_profile,
            ["handle_or_id"],
            kg=True,
            handle_or_id=_str("An entity id, an @handle or an exact name."),
        ),
        _spec(
            "search_people",
            "Search the people directory by name, employer and/or city (all given filters must match).",
            search_people,
            [],
            kg=True,
            name=_str("Words of the person's name."),
            organization=_str("Organization id or exact name."),
            location=_str("Location id or exact name."),
            limit=_LIMIT,
        ),
        _spec(
            "get_connections",
            "Who a person knows, or whom an account follows and is followed by.",
            get_connections,
            ["person_or_account"],
            kg=True,
            person_or_account=_str("Person id, account id or @handle."),
            relation=_str("Imported graphs only: restrict to one relation."),
        ),
        _spec(
            "search_notes",
            "Search the records you already retrieved in this episode.",
            search_notes,
            ["query"],
            kg=True,
            query=_str("Words to look for."),
            limit=_LIMIT,
        ),
    )
}

# Actions that are not lookups; their schemas go to the agent with the tools.
CONTROL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "add_edge",
            "description": "Add an edge shown by a record you retrieved to your evidence graph.",
            "parameters": {
                "type": "object",
                "properties": {
                    "src": _str("Head entity id."),
                    "rel": _str("Relation name, e.g. alias_of."),
                    "dst": _str("Tail entity id."),
                },
                "required": ["src", "rel", "dst"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "answer",
            "description": "Submit one entity id as the final answer; ends the episode.",
            "parameters": {
                "type": "object",
                "properties": {"entity_id": _str("The id of the entity the question asks for.")},
                "required": ["entity_id"],
            },
        },
    },
]


def tools_for(world: World) -> dict[str, ToolSpec]:
    return TOOLS if world.kind.all_tools else {k: v for k, v in TOOLS.items() if v.kg}


def tool_schemas(world: World) -> list[dict[str, Any]]:
    """OpenAI-style schemas of every action available in this world (tools + add_edge + answer)."""
    return [spec.schema() for spec in tools_for(world).values()] + CONTROL_SCHEMAS


def world_shell(world: World) -> tuple[dict[str, ToolSpec], list[dict[str, Any]], str]:
    """(tools, schemas, the tool help line): derived once per world, shared by every env on it."""
    shell = world.cache.get("env_shell")
    if shell is None:
        tools, schemas = tools_for(world), tool_schemas(world)
        help_line = ", ".join(f"{s['function']['name']}({', '.join(s['function']['parameters']['properties'])})"
                              for s in schemas)
        shell = world.cache["env_shell"] = (tools, schemas, help_line)
    return shell
