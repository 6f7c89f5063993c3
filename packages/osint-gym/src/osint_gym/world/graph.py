"""`World`: the hidden graph (a networkx MultiDiGraph) plus the indices the tools need.

The agent never touches this object; tools read it and return platform records.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import networkx as nx

from osint_gym.errors import ConfigError, UnknownEntityError
from osint_gym.schema import Direction, Edge, EntityType, WorldKind, is_symmetric
from osint_gym.world.config import WorldConfig

_TOKEN = re.compile(r"[a-z0-9_]+")
# Display labels used by tools and questions, by entity type.
_LABEL_ATTR = {"person": "name", "organization": "name", "location": "name", "event": "name", "entity": "name"}


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens; ids like ``person_12`` and handles like ``alex_chen`` stay whole."""
    return _TOKEN.findall(text.lower())


class World:
    """A hidden world: typed entities with attributes and typed relations between them.

    Attributes:
        graph: the MultiDiGraph; node attribute ``type`` is an `EntityType` value, the edge key
            is the relation name (so ``graph.has_edge(u, v, key=rel)`` is O(1)).
        kind: a `WorldKind`: ``OSINT`` for generated worlds, ``KG`` for imported knowledge graphs;
            ask it what the world allows (``world.kind.directory_filters``), never compare names.
        config / seed: what generated it (``None`` for imported graphs).
    """

    def __init__(
        self,
        graph: nx.MultiDiGraph,
        *,
        kind: WorldKind | str = WorldKind.OSINT,
        config: WorldConfig | None = None,
        seed: int | None = None,
        name: str = "world",
    ) -> None:
        self.graph = graph
        try:
            self.kind = WorldKind(kind)
        except ValueError:
            raise ConfigError(f"unknown world kind {kind!r}; expected one of {', '.join(WorldKind)}") from None
        self.config = config
        self.seed = seed
        self.name = name
        # Hot-path adjacency: networkx's internal dicts avoid a view object per lookup.
        self._succ = graph._succ
        self._pred = graph._pred
        self._node = graph._node
        self.cache: dict[str, Any] = {}  # derived, rebuildable structures (text indices)
        self._build_indices()

    # ------------------------------------------------------------------ indices
    def _build_indices(self) -> None:
        by_type: dict[str, list[str]] = defaultdict(list)
        by_handle: dict[str, str] = {}
        name_tokens: dict[str, list[str]] = defaultdict(list)
        by_name: dict[str, list[str]] = defaultdict(list)
        for node, attrs in self.graph.nodes(data=True):
            etype = attrs["type"]
            by_type[etype].append(node)
            if etype == "account":
                by_handle[attrs["handle"].lower()] = node
            label_attr = _LABEL_ATTR.get(etype)
            if label_attr is not None:
                label = attrs.get(label_attr, node)
                by_name[label.lower()].append(node)
                for tok in dict.fromkeys(tokenize(label)):
                    name_tokens[tok].append(node)
        self.by_type = dict(by_type)
        self.by_handle = by_handle
        self.name_tokens = dict(name_tokens)
        self.by_name = dict(by_name)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["cache"] = {}
        del state["_succ"], state["_pred"], state["_node"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.kind = WorldKind(self.kind)  # worlds pickled before WorldKind stored a plain string
        self._succ = self.graph._succ
        self._pred = self.graph._pred
        self._node = self.graph._node

    # ------------------------------------------------------------------ lookups
    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and entity_id in self._succ

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def entity(self, entity_id: str) -> dict[str, Any]:
        try:
            return self._node[entity_id]  # networkx's node-attribute dict, without a view object
        except KeyError:
            raise UnknownEntityError(f"unknown entity {entity_id!r}") from None

    def type_of(self, entity_id: str) -> str:
        return self.entity(entity_id)["type"]

    def ids(self, etype: EntityType | str) -> list[str]:
        return self.by_type.get(EntityType(etype).value, [])

    def label(self, entity_id: str) -> str:
        """Human-readable name: a person's or place's name, an account's ``@handle``, else the id."""
        attrs = self.entity(entity_id)
        if attrs["type"] == "account":
            return "@" + attrs["handle"]
        attr = _LABEL_ATTR.get(attrs["type"])
        return attrs.get(attr, entity_id) if attr else entity_id

    def surface(self, entity_id: str) -> str:
        """How a question names an entity so that the name is unambiguous.

        Accounts by handle, posts and threads by id, other entities by name; a name shared by
        several entities (a name collision) gets the id appended.
        """
        attrs = self.entity(entity_id)
        etype = attrs["type"]
        if etype == "account":
            return "@" + attrs["handle"]
        if etype in ("post", "thread"):
            return entity_id
        label = self.label(entity_id)
        if len(self.by_name.get(label.lower(), ())) > 1 and label != entity_id:
            return f"{label} ({entity_id})"
        return label

    def resolve(self, ref: str) -> str | None:
        """An entity id from an id, an ``@handle``/handle, or an exact unique name; else ``None``."""
        ref = ref.strip()
        if ref in self._succ:
            return ref
        low = ref.lower()
        handle = low[1:] if low.startswith("@") else low
        if handle in self.by_handle:
            return self.by_handle[handle]
        named = self.by_name.get(low)
        if named and len(named) == 1:
            return named[0]
        return None

    def neighbors(self, entity_id: str, relation: str, direction: Direction | str) -> list[str]:
        """Entities one ``relation`` edge away, in insertion (hence deterministic) order."""
        adj = self._succ if direction in (Direction.OUT, "out") else self._pred
        try:
            nbrs = adj[entity_id]
        except KeyError:
            raise UnknownEntityError(f"unknown entity {entity_id!r}") from None
        return [v for v, keys in nbrs.items() if relation in keys]

    def relations_of(self, entity_id: str) -> Iterator[tuple[str, str, str]]:
        """Every (relation, direction, neighbour) incident to an entity."""
        for v, keys in self._succ[entity_id].items():
            for rel in keys:
                yield rel, "out", v
        for u, keys in self._pred[entity_id].items():
            for rel in keys:
                if not (is_symmetric(rel) and u in self._succ[entity_id] and rel in self._succ[entity_id][u]):
                    yield rel, "in", u

    def incident_edges(self, entity_id: str) -> Iterator[Edge]:
        """Every edge incident to an entity, in canonical form (symmetric relations once)."""
        for rel, direction, other in self.relations_of(entity_id):
            edge = Edge(entity_id, rel, other) if direction == "out" else Edge(other, rel, entity_id)
            yield edge.canonical(is_symmetric(rel))

    def has_edge(self, head: str, relation: str, tail: str) -> bool:
        nbrs = self._succ.get(head)
        return nbrs is not None and tail in nbrs and relation in nbrs[tail]

    def edges(self) -> Iterable[Edge]:
        for u, v, rel in self.graph.edges(keys=True):
            yield Edge(u, rel, v)

    # ------------------------------------------------------------------ identity
    def fingerprint(self) -> str:
        """sha256 of a canonical serialisation: equal iff the worlds are byte-identical."""
        h = hashlib.sha256()
        for node in sorted(self.graph.nodes):
            h.update(json.dumps([node, self.graph.nodes[node]], sort_keys=True).encode())
            h.update(b"\n")
        for u, v, rel in sorted(self.graph.edges(keys=True)):
            h.update(f"{u}\t{rel}\t{v}\n".encode())
        return h.hexdigest()

    def summary(self) -> dict[str, int]:
        counts = {etype: len(ids) for etype, ids in sorted(self.by_type.items())}
        counts["edges"] = self.graph.number_of_edges()
        return counts

    def __repr__(self) -> str:
        edges = self.graph.number_of_edges()
        return f"World(name={self.name!r}, kind={self.kind.value!r}, nodes={len(self)}, edges={edges})"
