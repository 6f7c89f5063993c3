"""The tool-only oracle: an agent that knows what the question means (its structured query) but
learns every fact through the agent's own tools.

It proves each task answerable within the step budget (task verification) and is the upper
bound in evaluations. It is written as a plan (a generator) that yields batches of tool calls
and receives their results, so the same plan runs directly against the tools (fast, for
verification) or through ``env.step`` as JSON actions (`osint_gym.agents.OracleAgent`).
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from osint_gym.compact import fit_compact_cut, parse_compact
from osint_gym.schema import RELATIONS, Direction, Edge, WorldKind
from osint_gym.tasks.query import ATTRIBUTE_FILTERS, Filter, Query
from osint_gym.text import fit_json_cut
from osint_gym.tools import MAX_LIMIT, TOOLS, Notes, ToolError, tools_for
from osint_gym.views import platforms_in, record_edges, records_in
from osint_gym.world.graph import World

Call = tuple[str, dict[str, Any]]
# A plan returns (entities its reading determined, evidence edges it read along the way).
Plan = Generator[list[Call], list[Any], "tuple[list[str], list[Edge]]"]
_BIG = MAX_LIMIT  # the largest page size a tool allows
_DIRECTORY = "search_people"  # the one search that combines several filters in one call

_O, _I = Direction.OUT, Direction.IN

class _Knowledge:
    """Everything the oracle has read so far: edges shown by records (indexed by endpoint and
    relation, since the plan asks for neighbours after every batch), and records by id."""

    def __init__(self) -> None:
        self.edges: set[Edge] = set()
        self._around: dict[tuple[str, str, Direction], set[str]] = {}  # (x, relation, direction) -> neighbours
        self.records: dict[str, dict[str, Any]] = {}
        self.platforms: dict[str, str] = {}
        self.done: set[str] = set()  # calls already made (repr of the call)

    def absorb(self, data: Any) -> None:
        around = self._around
        for record in records_in(data):
            if record["type"] not in ("activity", "connections"):  # those share their owner's id
                self.records.setdefault(record["id"], record)
            for edge in record_edges(record):
                if edge not in self.edges:
                    self.edges.add(edge)
                    around.setdefault((edge.head, edge.relation, _O), set()).add(edge.tail)
                    around.setdefault((edge.tail, edge.relation, _I), set()).add(edge.head)
        self.platforms.update(platforms_in(data))  # references to accounts carry their platform

    def neighbors(self, x: str, relation: str, direction: Direction) -> list[str]:
        return sorted(self._around.get((x, relation, direction), ()))

    def attribute(self, x: str, name: str) -> str | None:
        if name == "platform" and x in self.platforms:
            return self.platforms[x]
        return self.records.get(x, {}).get(name)

    def holds(self, f: Filter, x: str) -> bool:
        if f.relation in ATTRIBUTE_FILTERS:
            return self.attribute(x, f.relation) == f.value
        edge = f.edge(x)
        return edge in self.edges


def _reveal_calls(
    kind: str, relation: str, direction: Direction, x: str, hint: dict[str, str] | None = None
) -> list[Call]:
    """The calls whose results show ``relation`` around x, as the relation spec names them; a
    directory search also takes the question's other directory filters (``hint``)."""
    if WorldKind(kind).connections_by_relation:
        return [("get_connections", {"person_or_account": x, "relation": relation})]
    calls: list[Call] = []
    for tool, arg in RELATIONS[relation].side(direction).reveal:
        args: dict[str, Any] = {arg: x}
        if tool == _DIRECTORY:
            args.update((k, v) for k, v in (hint or {}).items() if k != arg)
        if "limit" in TOOLS[tool].parameters["properties"]:
            args["limit"] = _BIG
        calls.append((tool, args))
    return calls


def _hint(filters: tuple[Filter, ...]) -> dict[str, str]:
    """Directory-search arguments taken from filters: a filter ``works_at O`` on a person is the
    argument the spec's reverse lookup of works_at uses (``organization=O``)."""
    hint = {}
    for f in filters:
        spec = RELATIONS.get(f.relation)
        back = spec.side(_I if f.direction is _O else _O).reveal if spec else ()
        if len(back) == 1 and back[0].tool == _DIRECTORY:
            hint[back[0].arg] = f.value
    return hint


def _fetch(know: _Knowledge, calls: list[Call]) -> Generator[list[Call], list[Any], None]:
    fresh = []
    for call in calls:
        key = repr(call)
        if call[0] == "get_profile" and call[1]["handle_or_id"] in know.records:
            continue  # that page already came back inside an earlier result
        if key not in know.done:
            know.done.add(key)
            fresh.append(call)
    if fresh:
        for result in (yield fresh):
            know.absorb(result)


def _filtered(
    know: _Knowledge, kind: str, candidates: list[str], filters: tuple[Filter, ...]
) -> Generator[list[Call], list[Any], list[str]]:
    if not filters or not candidates:
        return candidates
    calls: list[Call] = []
    for c in candidates:
        for f in filters:
            if f.relation in ATTRIBUTE_FILTERS:
                if know.attribute(c, f.relation) is None:
                    calls.append(("get_profile", {"handle_or_id": c}))
            else:
                calls += _reveal_calls(kind, f.relation, f.direction, c)
    yield from _fetch(know, calls)
    return [c for c in candidates if all(know.holds(f, c) for f in filters)]


def _alias_owner(know: _Knowledge, account: str) -> Generator[list[Call], list[Any], list[str]]:
    """account -> person: nothing names an account's owner, so read the account's display name,
    search the directory for it, and keep the people whose directory entry lists the account."""
    yield from _fetch(know, [("get_profile", {"handle_or_id": account})])
    display = know.records.get(account, {}).get("display_name")
    if not display:
        return []
    yield from _fetch(know, [("search_people", {"name": display, "limit": _BIG})])
    return know.neighbors(account, "alias_of", _O)


def oracle_plan(query: Query, kind: str = "osint") -> Plan:
    """Yield tool-call batches, receive their results; return (entities reached, evidence read)."""
    know = _Knowledge()
    if query.start is not None:
        frontier = [query.start]
    else:
        edge_filters = [f for f in query.filters if f.relation not in ATTRIBUTE_FILTERS]
        if not edge_filters:
            return [], []
        first = edge_filters[0]
        back = _I if first.direction is _O else _O
        yield from _fetch(know, _reveal_calls(kind, first.relation, back, first.value, _hint(query.filters)))
        frontier = know.neighbors(first.value, first.relation, back)
        frontier = yield from _filtered(know, kind, frontier, query.filters)
    chain = [frontier]
    for hop in query.hops:
        nxt: list[str] = []
        if not WorldKind(kind).connections_by_relation and not RELATIONS[hop.relation].side(hop.direction).reveal:
            for node in frontier:
                nxt += yield from _alias_owner(know, node)
        else:
            calls = [
                c
                for node in frontier
                for c in _reveal_calls(kind, hop.relation, hop.direction, node, _hint(hop.filters))
            ]
            yield from _fetch(know, calls)
            for node in frontier:
                nxt += know.neighbors(node, hop.relation, hop.direction)
        frontier = yield from _filtered(know, kind, list(dict.fromkeys(nxt)), hop.filters)
        if query.exclude_start:  # as Query.evaluate: no hop returns to the topic
            frontier = [f for f in frontier if f != query.start]
        if not frontier:
            return [], []
        chain.append(frontier)
    evidence: list[Edge] = []
    if all(len(f) == 1 for f in chain):
        evidence = [e for e in query.evidence([f[0] for f in chain]) if e in know.edges]
    return frontier, evidence


@dataclass(frozen=True)
class OracleResult:
    found: tuple[str, ...]  # what the plan's last step determined
    critical_steps: int  # env steps used, the answer step included
    tool_calls: int
    out_of_budget: bool = False
    evidence: tuple[Edge, ...] = ()

    @property
    def answer(self) -> str | None:
        """The one id the oracle submits: the first entity its reading determined. A single-answer
        task is verified only when exactly one was determined; under Hits@1 (knowledge-graph
        questions with several gold answers) any one of them is a correct answer."""
        return self.found[0] if self.found and not self.out_of_budget else None


def _observed(step: int, max_steps: int, entries: list[dict[str, Any]], max_chars: int,
              observation_format: str = "json") -> list[Any]:
    """The results of one step as the agent sees them: through the env's observation budget, in the
    served format (a compact observation is read back through `parse_compact`, as `OracleAgent` reads it)."""
    obs = {"step": step, "steps_left": max_steps - step, "results": entries}
    if observation_format == "compact":
        seen = parse_compact(fit_compact_cut(obs, max_chars)[0]).get("results", [])
    else:
        text, cut = fit_json_cut(obs, max_chars)
        if not cut:  # the common case: nothing was cut, no need to decode what was just encoded
            return [e.get("result") if e["ok"] else None for e in entries]
        seen = json.loads(text).get("results", [])
    got = [e.get("result") if isinstance(e, dict) and e.get("ok") else None for e in seen]
    return (got + [None] * len(entries))[: len(entries)]


def run_oracle(world: World, query: Query, max_steps: int, max_parallel_calls: int,
               max_observation_chars: int = 16_384, observation_format: str = "json") -> OracleResult:
    """Run the plan directly against the tools, counting steps and cutting observations as the env would."""
    tools = tools_for(world)
    notes = Notes()
    plan = oracle_plan(query, world.kind)
    steps = calls = 0
    try:
        batch = next(plan)
        while True:
            results: list[Any] = []
            for start in range(0, len(batch), max_parallel_calls):
                steps += 1
                if steps >= max_steps:  # the answer still needs a step of its own
                    return OracleResult((), steps, calls, out_of_budget=True)
                entries: list[dict[str, Any]] = []
                for name, args in batch[start : start + max_parallel_calls]:
                    calls += 1
                    try:
                        entries.append({"call": name, "ok": True, "result": tools[name](world, notes, args).data})
                    except ToolError as exc:
                        entries.append({"call": name, "ok": False, "error": str(exc)})
                results += _observed(steps, max_steps, entries, max_observation_chars, observation_format)
            batch = plan.send(results)
    except StopIteration as stop:
        found, evidence = stop.value
        return OracleResult(tuple(found), steps + 1, calls, evidence=tuple(evidence))
