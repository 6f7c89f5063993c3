"""Entity types, relations and edges: the vocabulary every other module shares.

An edge is always stored in its canonical direction (``account alias_of person``); a query
may walk it either way (``OUT`` follows head -> tail, ``IN`` follows tail -> head).
``knows`` is symmetric: it is stored in both directions and compared as an unordered pair.

Each relation has one declarative `RelationSpec`; everything else reads it: the record pages
(which field lists the relation), the edges a record shows (`views.record_edges`), question
phrases (`tasks.phrasing`), the facts that single out an entity (`tasks.paths`) and the tool
calls through which the oracle sees the relation (`tasks.oracle`). A test walks every
(relation, direction) through the real tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import NamedTuple


class EntityType(str, Enum):
    PERSON = "person"
    ACCOUNT = "account"
    ORGANIZATION = "organization"
    LOCATION = "location"
    EVENT = "event"
    POST = "post"
    THREAD = "thread"
    # Imported knowledge graphs (MetaQA, TSV) have untyped entities.
    ENTITY = "entity"


# Generated entity ids are ``<prefix><number>``: the only place the prefixes are spelt.
ID_PREFIX: dict[EntityType, str] = {
    EntityType.PERSON: "person_",
    EntityType.ACCOUNT: "account_",
    EntityType.ORGANIZATION: "org_",
    EntityType.LOCATION: "loc_",
    EntityType.EVENT: "event_",
    EntityType.POST: "post_",
    EntityType.THREAD: "thread_",
}

# An id pattern (for regular expressions) matching any generated entity id.
ID_PATTERN = r"\b(?:" + "|".join(p.rstrip("_") for p in ID_PREFIX.values()) + r")_\d+\b"


def entity_id(etype: EntityType, number: int) -> str:
    """The id of the ``number``-th generated entity of a type (``person_12``)."""
    return f"{ID_PREFIX[etype]}{number}"


MICROBLOG, FORUM = "microblog", "forum"
PLATFORMS: tuple[str, ...] = (MICROBLOG, FORUM)


class Direction(str, Enum):
    OUT = "out"  # head -> tail
    IN = "in"  # tail -> head


class WorldKind(StrEnum):
    """What a world is, and what that lets tools, tasks and the oracle do in it.

    ``OSINT``: a generated world that follows this module's vocabulary (typed entities, the
    relations below, platforms). ``KG``: an imported knowledge graph (untyped entities, any
    relation names). Callers ask the kind, never compare its name.
    """

    OSINT = "osint"
    KG = "kg"

    def knows_relation(self, relation: str) -> bool:
        """Whether ``relation`` can exist here (an imported graph may use any name)."""
        return self is not WorldKind.OSINT or relation in RELATIONS

    @property
    def procedural_tasks(self) -> bool:
        """The task families (templates over RELATIONS) can make tasks in such a world."""
        return self is WorldKind.OSINT

    @property
    def person_type(self) -> str:
        """The entity type ``search_people`` searches by name."""
        return EntityType.PERSON.value if self is WorldKind.OSINT else EntityType.ENTITY.value

    @property
    def directory_filters(self) -> bool:
        """``search_people`` can filter by employer and city (works_at / lives_in exist)."""
        return self is WorldKind.OSINT

    @property
    def connections_by_relation(self) -> bool:
        """``get_connections(x, relation)`` lists x's neighbours over one relation; that one call
        reveals any hop, so the oracle reveals every edge with it (entity pages are generic)."""
        return self is WorldKind.KG

    @property
    def all_tools(self) -> bool:
        """Every tool applies; otherwise only those marked for imported graphs (`ToolSpec.kg`)."""
        return self is WorldKind.OSINT


class Field(NamedTuple):
    """A field of a record that lists the entities at the other end of a relation.

    ``item`` names a key inside each list element (a thread's ``comments`` carry an ``author``).
    """

    record: str
    name: str
    item: str | None = None


class Lookup(NamedTuple):
    """A tool call, on entity x as argument ``arg``, whose result shows the relation around x."""

    tool: str
    arg: str


PROFILE = (Lookup("get_profile", "handle_or_id"),)
CONNECTIONS = (Lookup("get_connections", "person_or_account"),)


@dataclass(frozen=True)
class Side:
    """A relation walked one way from an entity x (``OUT``: x is the head; ``IN``: x is the tail).

    phrases: hop noun phrases; ``{x}`` is the phrase for x, ``{n}`` the noun of the entity reached.
    clause: a filter clause on x ("who works at {v}": x reaches v this way), if questions use one.
    fields: record fields that list, on a record about x, the entities reached this way.
    reveal: tool calls on x whose results show every edge this way (empty: no tool shows it).
    singles_out: a fact this way may be added to a question to single x out among look-alikes;
        the number ranks it among x's type's facts (the ranked list seeds a shuffle; the ranks
        keep generated tasks byte-identical to the tables they replace). None: never.

    A symmetric relation lists its fields on the ``OUT`` side only.
    """

    phrases: tuple[str, ...]
    clause: str | None = None
    fields: tuple[Field, ...] = ()
    reveal: tuple[Lookup, ...] = ()
    singles_out: int | None = None


@dataclass(frozen=True)
class RelationSpec:
    name: str
    heads: tuple[EntityType, ...]
    tails: tuple[EntityType, ...]
    out: Side
    inward: Side
    symmetric: bool = False
    walked: bool = True  # task templates may walk it (False: a fact that records and searches show, no hop asks for)

    def side(self, direction: Direction) -> Side:
        return self.out if direction is Direction.OUT else self.inward


_P, _A, _O, _L, _E, _PO, _T = (
    EntityType.PERSON,
    EntityType.ACCOUNT,
    EntityType.ORGANIZATION,
    EntityType.LOCATION,
    EntityType.EVENT,
    EntityType.POST,
    EntityType.THREAD,
)
_R = RelationSpec

RELATIONS: dict[str, RelationSpec] = {
    spec.name: spec
    for spec in (
        # An account's owner is hidden: no record shows it from the account's side.
        _R("alias_of", (_A,), (_P,),
           out=Side(("the person who operates {x}", "the real person behind {x}", "the owner of {x}")),
           inward=Side(("the {n} of {x}", "the {n} run by {x}"), "who operates {v}",
                       (Field("person", "accounts"),), PROFILE)),
        _R("works_at", (_P,), (_O,),
           out=Side(("the employer of {x}", "the organization where {x} works"), "who works at {v}",
                    (Field("person", "employer"),), PROFILE, singles_out=1),
           inward=Side(("the employee of {x}", "the person working at {x}"),
                       reveal=(Lookup("search_people", "organization"),))),
        _R("lives_in", (_P,), (_L,),
           out=Side(("the city where {x} lives", "the home city of {x}"), "who lives in {v}",
                    (Field("person", "city"),), PROFILE, singles_out=2),
           inward=Side(("the person living in {x}", "the resident of {x}"),
                       reveal=(Lookup("search_people", "location"),))),
        _R("based_in", (_O,), (_L,),
           out=Side(("the city where {x} is based", "the headquarters city of {x}"), "based in {v}",
                    (Field("organization", "based_in"),), PROFILE, singles_out=1),
           inward=Side(("the organization based in {x}",), fields=(Field("location", "organizations"),),
                       reveal=PROFILE)),
        _R("knows", (_P,), (_P,), symmetric=True,
           out=Side(("the acquaintance of {x}", "the person {x} knows"), "who knows {v}",
                    (Field("connections", "knows"),), CONNECTIONS),
           # symmetric: the one field shows both directions (edges are compared as pairs)
           inward=Side(("the acquaintance of {x}", "the person who knows {x}"), reveal=CONNECTIONS)),
        _R("follows", (_A,), (_A,),
           out=Side(("the {n} followed by {x}", "the {n} that {x} follows"), "that follows {v}",
                    (Field("connections", "following"),), CONNECTIONS),
           inward=Side(("the {n} following {x}", "the follower of {x}"), "followed by {v}",
                       (Field("connections", "followers"),), CONNECTIONS)),
        _R("authored", (_A,), (_PO, _T),
           out=Side(("the {n} written by {x}", "the {n} by {x}"), fields=(Field("activity", "threads_started"),),
                    reveal=(Lookup("get_user_posts", "account"), Lookup("get_user_activity", "account"))),
           inward=Side(("the author of {x}", "the account that wrote {x}"), "written by {v}",
                       (Field("post", "author"), Field("thread", "author")), PROFILE)),
        _R("mentions", (_PO,), (_A,),
           out=Side(("the account mentioned in {x}", "the account tagged in {x}"), "that mentions {v}",
                    (Field("post", "mentions"),), PROFILE, singles_out=3),
           inward=Side(("the post mentioning {x}", "the post that tags {x}"),
                       reveal=(Lookup("get_mentions", "account"),))),
        _R("references", (_PO, _T), (_E, _O, _L),
           out=Side(("the {n} referenced in {x}", "the {n} that {x} refers to"), "that references {v}",
                    (Field("post", "references"), Field("thread", "references")), PROFILE, singles_out=2),
           inward=Side(("the {n} referring to {x}", "the {n} that references {x}"),
                       reveal=(Lookup("search_posts", "query"), Lookup("search_threads", "query")))),
        _R("attended", (_P,), (_E,),
           out=Side(("the event attended by {x}", "the event {x} went to"), "who attended {v}",
                    (Field("person", "events"),), PROFILE, singles_out=3),
           inward=Side(("the person who attended {x}", "the attendee of {x}"),
                       fields=(Field("event", "attendees"),), reveal=PROFILE)),
        _R("held_in", (_E,), (_L,),
           out=Side(("the city where {x} took place", "the city that hosted {x}"), "held in {v}",
                    (Field("event", "held_in"),), PROFILE, singles_out=1),
           inward=Side(("the event held in {x}", "the event hosted in {x}"),
                       fields=(Field("location", "events"),), reveal=PROFILE)),
        _R("discusses", (_T,), (_E,),
           out=Side(("the event discussed in {x}", "the event that {x} is about"), "about {v}",
                    (Field("thread", "discusses"),), PROFILE, singles_out=1),
           inward=Side(("the forum thread about {x}", "the forum thread discussing {x}"),
                       reveal=(Lookup("search_threads", "query"),))),
        _R("commented_on", (_A,), (_T,),
           out=Side(("the forum thread {x} commented on",), fields=(Field("activity", "commented_on"),),
                    reveal=(Lookup("get_user_activity", "account"),)),
           inward=Side(("the account that commented on {x}", "the commenter on {x}"), "commented on by {v}",
                       (Field("thread", "comments", "author"),), PROFILE)),
        # A person's past, generated only with `WorldConfig.decoy_density` (every person then has one of each, so
        # that having one marks nobody as a near-miss decoy): a person page lists them, the directory finds former
        # employees and residents beside current ones, an event page lists who was interested in it.
        _R("worked_at", (_P,), (_O,), walked=False,
           out=Side(("the former employer of {x}",), fields=(Field("person", "former_employers"),), reveal=PROFILE),
           inward=Side(("the former employee of {x}",), reveal=(Lookup("search_people", "organization"),))),
        _R("lived_in", (_P,), (_L,), walked=False,
           out=Side(("the former home city of {x}",), fields=(Field("person", "former_cities"),), reveal=PROFILE),
           inward=Side(("the former resident of {x}",), reveal=(Lookup("search_people", "location"),))),
        _R("interested_in", (_P,), (_E,), walked=False,
           out=Side(("the event {x} was interested in but missed",), fields=(Field("person", "interested_in"),),
                    reveal=PROFILE),
           inward=Side(("the person interested in {x} who missed it",), fields=(Field("event", "interested"),),
                       reveal=PROFILE)),
    )
}

# (record type, field) -> (relation, direction from the record's entity): read by the page
# builders and by `views.record_edges`, so a page shows exactly the edges its fields list.
RECORD_FIELDS: dict[tuple[str, str], tuple[str, Direction, Field]] = {
    (f.record, f.name): (spec.name, d, f)
    for spec in RELATIONS.values()
    for d in Direction
    for f in spec.side(d).fields
}


class Edge(NamedTuple):
    head: str
    relation: str
    tail: str

    def canonical(self, symmetric: bool) -> Edge:
        """The form used for comparison: symmetric edges as an ordered pair."""
        if symmetric and self.tail < self.head:
            return Edge(self.tail, self.relation, self.head)
        return self


def is_symmetric(relation: str) -> bool:
    spec = RELATIONS.get(relation)
    return bool(spec and spec.symmetric)


def canonical_edge(edge: Edge | tuple[str, str, str]) -> Edge:
    e = Edge(*edge)
    return e.canonical(is_symmetric(e.relation))
