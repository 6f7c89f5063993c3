"""Entity types, relations and edges: the vocabulary every other module shares.

An edge is always stored in its canonical direction (``account alias_of person``); a query
may walk it either way (``OUT`` follows head -> tail, ``IN`` follows tail -> head).
``knows`` is symmetric: it is stored in both directions and compared as an unordered pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
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


ID_PREFIX: dict[EntityType, str] = {
    EntityType.PERSON: "person_",
    EntityType.ACCOUNT: "account_",
    EntityType.ORGANIZATION: "org_",
    EntityType.LOCATION: "loc_",
    EntityType.EVENT: "event_",
    EntityType.POST: "post_",
    EntityType.THREAD: "thread_",
}

PLATFORMS: tuple[str, ...] = ("microblog", "forum")


class Direction(str, Enum):
    OUT = "out"  # head -> tail
    IN = "in"  # tail -> head


@dataclass(frozen=True)
class RelationSpec:
    name: str
    heads: tuple[EntityType, ...]
    tails: tuple[EntityType, ...]
    symmetric: bool = False


_P, _A, _O, _L, _E, _PO, _T = (
    EntityType.PERSON,
    EntityType.ACCOUNT,
    EntityType.ORGANIZATION,
    EntityType.LOCATION,
    EntityType.EVENT,
    EntityType.POST,
    EntityType.THREAD,
)

RELATIONS: dict[str, RelationSpec] = {
    spec.name: spec
    for spec in (
        RelationSpec("alias_of", (_A,), (_P,)),
        RelationSpec("works_at", (_P,), (_O,)),
        RelationSpec("lives_in", (_P,), (_L,)),
        RelationSpec("based_in", (_O,), (_L,)),
        RelationSpec("knows", (_P,), (_P,), symmetric=True),
        RelationSpec("follows", (_A,), (_A,)),
        RelationSpec("authored", (_A,), (_PO, _T)),
        RelationSpec("mentions", (_PO,), (_A,)),
        RelationSpec("references", (_PO, _T), (_E, _O, _L)),
        RelationSpec("attended", (_P,), (_E,)),
        RelationSpec("held_in", (_E,), (_L,)),
        RelationSpec("discusses", (_T,), (_E,)),
        RelationSpec("commented_on", (_A,), (_T,)),
    )
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
