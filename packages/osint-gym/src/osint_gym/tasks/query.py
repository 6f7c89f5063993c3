"""Structured queries: what a question means, evaluated on the true world.

A query starts at a named entity and walks relation hops; each hop may carry filters that the
entity reached must satisfy ("the acquaintance of X *who works at O*"). A query with no start
selects, among all entities of one type, those passing its filters (deanonymisation:
"the person who works at O, lives in L and attended E").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from osint_gym.schema import Direction, Edge
from osint_gym.world.graph import World

ATTRIBUTE_FILTERS = ("platform", "type")  # filters on an attribute rather than an edge
# A constraint of a query: (hop index, or None for the query's own filters; index of the filter there).
Constraint = tuple[int | None, int]


@dataclass(frozen=True)
class Filter:
    relation: str  # an edge relation, or an attribute name from ATTRIBUTE_FILTERS
    direction: Direction
    value: str  # an entity id, or the attribute value

    def holds(self, world: World, entity_id: str) -> bool:
        if self.relation in ATTRIBUTE_FILTERS:
            return world.entity(entity_id).get(self.relation) == self.value
        if self.direction is Direction.OUT:
            return world.has_edge(entity_id, self.relation, self.value)
        return world.has_edge(self.value, self.relation, entity_id)

    def edge(self, entity_id: str) -> Edge | None:
        """The world edge that proves the filter (None for attribute filters)."""
        if self.relation in ATTRIBUTE_FILTERS:
            return None
        if self.direction is Direction.OUT:
            return Edge(entity_id, self.relation, self.value)
        return Edge(self.value, self.relation, entity_id)


@dataclass(frozen=True)
class Hop:
    relation: str
    direction: Direction
    filters: tuple[Filter, ...] = ()

    def step(self, world: World, entity_id: str) -> list[str]:
        nbrs = world.neighbors(entity_id, self.relation, self.direction)
        return [n for n in nbrs if all(f.holds(world, n) for f in self.filters)]

    def edge(self, src: str, dst: str) -> Edge:
        return Edge(src, self.relation, dst) if self.direction is Direction.OUT else Edge(dst, self.relation, src)


@dataclass(frozen=True)
class Query:
    start: str | None
    hops: tuple[Hop, ...] = ()
    select_type: str | None = None  # with start=None: the entity type to select from
    filters: tuple[Filter, ...] = ()  # with start=None: what the selected entity satisfies
    exclude_start: bool = False  # MetaQA-style: no hop returns to the topic, so it is never its own answer

    @property
    def n_hops(self) -> int:
        return len(self.hops) if self.start is not None else len(self.filters)

    def named_entities(self) -> list[str]:
        """Entities the question must name: the start and every filter value."""
        named = [self.start] if self.start is not None else []
        for f in self.filters + tuple(f for h in self.hops for f in h.filters):
            if f.relation not in ATTRIBUTE_FILTERS:
                named.append(f.value)
        return named

    # ------------------------------------------------------------------ evaluation
    def initial(self, world: World) -> list[str]:
        if self.start is not None:
            return [self.start]
        edge_filters = [f for f in self.filters if f.relation not in ATTRIBUTE_FILTERS]
        if edge_filters:  # start from the filter with an index-backed reverse lookup
            first = edge_filters[0]
            back = Direction.IN if first.direction is Direction.OUT else Direction.OUT
            pool = world.neighbors(first.value, first.relation, back)
        else:
            pool = list(world.ids(self.select_type or "entity"))
        return [
            e for e in pool if world.type_of(e) == self.select_type and all(f.holds(world, e) for f in self.filters)
        ]

    def evaluate(self, world: World) -> list[str]:
        """Every entity the query determines (set semantics: all paths are followed)."""
        frontier = dict.fromkeys(self.initial(world))
        for hop in self.hops:
            nxt: dict[str, None] = {}
            for node in frontier:
                for n in hop.step(world, node):
                    nxt[n] = None
            if self.exclude_start:  # the topic is never revisited, so never an answer either
                nxt.pop(self.start, None)  # type: ignore[arg-type]
            frontier = nxt
        return list(frontier)

    def chain(self, world: World) -> list[str] | None:
        """The entities visited when every step is unique, else None."""
        nodes = self.initial(world)
        if len(nodes) != 1:
            return None
        path = [nodes[0]]
        for hop in self.hops:
            nxt = hop.step(world, path[-1])
            if len(nxt) != 1:
                return None
            path.append(nxt[0])
        return path

    def evidence(self, path: list[str]) -> list[Edge]:
        """Edges that prove a chain: each hop's edge plus each filter's edge."""
        edges: list[Edge] = []
        if self.start is None:
            edges += [e for f in self.filters if (e := f.edge(path[0])) is not None]
        for hop, src, dst in zip(self.hops, path, path[1:]):
            edges.append(hop.edge(src, dst))
            edges += [e for f in hop.filters if (e := f.edge(dst)) is not None]
        return edges

    # ------------------------------------------------------------------ constraints
    def constraints(self) -> list[Constraint]:
        """Every filter that narrows what the question asks for: the entity filters and platform filters of the
        query and of its hops (a ``type`` filter only says which kind of entity a hop reaches)."""
        found: list[Constraint] = [(None, i) for i, f in enumerate(self.filters) if f.relation != "type"]
        for h, hop in enumerate(self.hops):
            found += [(h, i) for i, f in enumerate(hop.filters) if f.relation != "type"]
        return found

    def without(self, constraint: Constraint) -> Query:
        """This query with one constraint dropped."""
        where, i = constraint
        if where is None:
            return replace(self, filters=self.filters[:i] + self.filters[i + 1:])
        hop = self.hops[where]
        lighter = replace(hop, filters=hop.filters[:i] + hop.filters[i + 1:])
        return replace(self, hops=self.hops[:where] + (lighter,) + self.hops[where + 1:])

    def load_bearing(self, world: World) -> bool:
        """Whether every constraint reaches the question: dropping any one of them leaves more than one answer."""
        return all(len(self.without(c).evaluate(world)) > 1 for c in self.constraints())

    def minimal(self, world: World) -> Query:
        """This query without the constraints its chain does not need: while dropping one (the first, in
        order) leaves the same unique chain of entities, it is dropped. A filter added to single out an entity
        can be made redundant by a later one. A query without a unique chain is returned as it is."""
        path = self.chain(world)
        query = self
        while path is not None:
            lighter = next((q for c in query.constraints() if (q := query.without(c)).chain(world) == path), None)
            if lighter is None:
                break
            query = lighter
        return query

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        def fl(fs: tuple[Filter, ...]) -> list[list[str]]:
            return [[f.relation, f.direction.value, f.value] for f in fs]

        return {
            "start": self.start,
            "hops": [
                {"relation": h.relation, "direction": h.direction.value, "filters": fl(h.filters)} for h in self.hops
            ],
            "select_type": self.select_type,
            "filters": fl(self.filters),
            "exclude_start": self.exclude_start,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Query:
        def fl(items: list[list[str]]) -> tuple[Filter, ...]:
            return tuple(Filter(r, Direction(d), v) for r, d, v in items)

        hops = tuple(
            Hop(h["relation"], Direction(h["direction"]), fl(h.get("filters", []))) for h in data.get("hops", [])
        )
        return cls(
            data.get("start"),
            hops,
            data.get("select_type"),
            fl(data.get("filters", [])),
            bool(data.get("exclude_start", False)),
        )
