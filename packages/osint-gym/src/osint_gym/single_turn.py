"""Single-turn mode: the context is placed in the prompt and the model answers once.

Training (osint-selfplay) and evaluation (osint-eval) both use this module, so a model is scored
the same way in both. The context simulates records already retrieved: the gold evidence mixed
with decoy chains (the question's relation pattern walked from other start entities), edges around
the entities the question names and count padding, as id triples (``"triples"``) or as rendered
platform records (``"records"``). In triples mode every candidate of the answer type then appears
about as often as the gold and positions are shuffled, so frequency, position and adjacency to a name
say nothing about the answer (osint-eval's shortcut baselines measure it); every line is a world fact,
so the context's facts still determine exactly the gold (`context_answers`).
The answer is scored by `osint_gym.reward.score_episode`, like an env episode.

Layouts follow the benchmark version (`context_layout`); v0 and v1 show the same edges. v0 writes the
question's entities and the decoys' starts by name in triples, and renders each entity's public page in
records (a person's page lists no acquaintances, and pages show facts the context does not). v1 writes
every entity by id after a name line in triples, and in records one record per entity that lists exactly
the context's edges: every gold edge is shown, and counts, positions and adjacency carry what they carry
in triples. v2 writes as v1 and chooses edges for worlds with near-miss decoys: where the gold touches an entity
the question names, the gold's and every near-miss's edges to those entities (`near_miss_edges`) instead of
decoy chains; no other candidate beside a named entity (no typed distractors); and a named entity of the answer
type (the acquaintance of X: X) shows two facts of its own and counts towards the padding, so that it is no hub a
count singles out.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from osint_gym.actions import parse_action
from osint_gym.errors import ConfigError
from osint_gym.reward import RewardBreakdown, RewardConfig, labelled_answer, score_episode
from osint_gym.schema import ID_PREFIX, Direction, Edge, EntityType, canonical_edge, is_symmetric
from osint_gym.tasks.near_miss import named_in_world, near_misses, touched
from osint_gym.tasks.query import ATTRIBUTE_FILTERS, Filter, Query
from osint_gym.tasks.task import Task
from osint_gym.views import INVERSE, page, record_edges, ref
from osint_gym.world.graph import World

CONTEXT_MODES = ("triples", "records")
CONTEXT_LAYOUTS = ("v0", "v1", "v2")
SYSTEM_PROMPT = "Answer the question with one entity id from the context."


@dataclass(frozen=True)
class Context:
    text: str
    edges: tuple[Edge, ...]  # every edge the context shows (what an answer may cite)
    entities: tuple[str, ...]  # every entity the context shows by its id, in order of appearance
    lines: tuple[str, ...] = ()  # triples mode: line i shows edges[i]

    def to_json(self) -> str:
        """The context as one JSON string (a dataset column), read back by `from_json`."""
        return json.dumps({"text": self.text, "edges": [list(e) for e in self.edges], "entities": list(self.entities),
                           "lines": list(self.lines)})

    @classmethod
    def from_json(cls, text: str) -> Context:
        d = json.loads(text)
        return cls(d["text"], tuple(Edge(*e) for e in d["edges"]), tuple(d["entities"]), tuple(d.get("lines", ())))

    def line_edge(self, line: str) -> Edge | None:
        """The edge a line of this context shows (a citation copied from the context)."""
        try:
            return self.edges[self.lines.index(line.strip())]
        except ValueError:
            return None


def distractor_edges(
    world: World, around: Iterable[str], exclude: Iterable[Edge], rng: random.Random, n: int
) -> list[Edge]:
    """Up to ``n`` edges incident to the entities ``around``, shuffled by ``rng``: each edge once
    and none of ``exclude``, both up to symmetry (a ``knows`` edge is the same edge both ways).

    The one source of distractors: single-turn contexts and ``generate``-mode proposal offers."""
    gold = {canonical_edge(e) for e in exclude}
    # incident_edges yields canonical edges, so comparing against canonical `gold` is symmetric
    pool = list(dict.fromkeys(e for node in dict.fromkeys(around) for e in world.incident_edges(node) if e not in gold))
    rng.shuffle(pool)
    return pool[: max(0, n)]


class ContextGraph:
    """The facts a context shows, read the way a `Query` reads a `World`: edges from the context only,
    attributes (type, platform) from the world. `context_answers` evaluates a question on it."""

    def __init__(self, world: World, edges: Iterable[Edge]) -> None:
        self.world = world
        self._adj: dict[tuple[str, str, str], list[str]] = {}
        self._edges: set[tuple[str, str, str]] = set()
        for h, r, t in edges:
            for a, b in ((h, t), (t, h)) if is_symmetric(r) else ((h, t),):
                if (a, r, b) not in self._edges:
                    self._edges.add((a, r, b))
                    self._adj.setdefault((a, r, "out"), []).append(b)
                    self._adj.setdefault((b, r, "in"), []).append(a)
        self._nodes = list(dict.fromkeys(n for h, _, t in self._edges for n in (h, t)))

    def neighbors(self, entity_id: str, relation: str, direction: Direction | str) -> list[str]:
        return list(self._adj.get((entity_id, relation, Direction(direction).value), ()))

    def has_edge(self, head: str, relation: str, tail: str) -> bool:
        return (head, relation, tail) in self._edges

    def entity(self, entity_id: str) -> dict[str, Any]:
        return self.world.entity(entity_id)

    def type_of(self, entity_id: str) -> str:
        return self.world.type_of(entity_id)

    def ids(self, etype: EntityType | str) -> list[str]:
        return [n for n in self._nodes if self.world.type_of(n) == EntityType(etype).value]


def context_answers(world: World, query: Query, edges: Iterable[Edge]) -> list[str]:
    """Every entity the question's query determines from the context's facts alone."""
    return query.evaluate(cast(World, ContextGraph(world, edges)))  # duck-typed: the part of World a Query reads


def _filter_edges(world: World, filters: Iterable[Filter], node: str, rng: random.Random) -> list[Edge]:
    """A decoy's edges for the filters of its hop: the same fact where the world has it (the same named
    value), else the same relation to another value, so a decoy shows the gold's relation pattern."""
    out = []
    for f in filters:
        if f.relation in ATTRIBUTE_FILTERS:
            continue
        if f.holds(world, node):
            out.append(
                Edge(node, f.relation, f.value) if f.direction is Direction.OUT else Edge(f.value, f.relation, node)
            )
            continue
        values = world.neighbors(node, f.relation, f.direction)
        if values:
            v = rng.choice(values)
            out.append(Edge(node, f.relation, v) if f.direction is Direction.OUT else Edge(v, f.relation, node))
    return out


def decoy_chain(world: World, query: Query, start: str, avoid: set[str], rng: random.Random) -> list[Edge] | None:
    """The question's relation pattern walked from another start entity (``None`` where it breaks off):
    each hop prefers a neighbour that passes the hop's filters, so the decoy looks like the gold path."""
    node, edges = start, _filter_edges(world, query.filters, start, rng)
    for hop in query.hops:
        nbrs = [n for n in world.neighbors(node, hop.relation, hop.direction) if n not in avoid and n != start]
        if not nbrs:
            return None
        passing = [n for n in nbrs if all(f.holds(world, n) for f in hop.filters)]
        nxt = rng.choice(passing or nbrs)
        edges += [canonical_edge(hop.edge(node, nxt))] + _filter_edges(world, hop.filters, nxt, rng)
        node = nxt
    return list(dict.fromkeys(canonical_edge(e) for e in edges))  # a filter may repeat a hop's edge


def near_miss_edges(world: World, task: Task) -> list[Edge]:
    """The world edges that join the gold and each of its near-misses (`osint_gym.tasks.near_miss`) to the named
    entities the gold touches: shown, they make every near-miss the gold's equal to a reader of the named ones."""
    gold = touched(world, task.answer, named_in_world(world, task))
    return [e for c in (task.answer, *near_misses(world, task)) for e in world.incident_edges(c)
            if {e.head, e.tail} & gold]


def _context_edges(
    world: World, task: Task, rng: random.Random, n_distractors: int, decoys: int, layout: str
) -> tuple[list[Edge], list[str]]:
    """Gold evidence (in the v2 layout, with `near_miss_edges`), ``decoys`` decoy chains from other start
    entities, ``n_distractors`` edges around the entities the question names, then padding so that every
    candidate of the answer type appears as often as the most frequent one; and the decoys' start entities
    (written by name like the question's start). Every edge is a world fact, so the context determines what
    the world does: the gold (a subgraph holding the evidence cannot make a verified query ambiguous;
    `context_answers` checks it)."""
    edges = list(dict.fromkeys(canonical_edge(e) for e in task.evidence))
    # v2: where the gold touches a named entity, so do its near-misses, which are then the context's look-alikes
    # (no decoy chains); where it touches none, no other candidate is shown beside a named entity either (v1 showed
    # some there, so that the candidates beside the named entities were never the gold): no typed distractors
    shown = near_miss_edges(world, task) if layout == "v2" else []
    if shown:
        decoys = 0
    edges = list(dict.fromkeys(edges + shown))
    query = task.query
    named = [n for n in (query.named_entities() if query else []) if n in world]
    starts: list[str] = []
    if query is not None and decoys > 0:
        start_type = world.type_of(query.start) if query.start is not None else query.select_type
        path = {n for e in edges for n in (e.head, e.tail)}
        pool = [i for i in world.ids(start_type or "entity") if i not in path] if start_type else []
        for _ in range(min(len(pool), 8 * decoys)):
            if decoys == 0:
                break
            start = rng.choice(pool)
            chain = decoy_chain(world, query, start, path, rng)
            if chain and not set(chain) & set(edges):
                edges += chain
                starts.append(start)
                path |= {n for e in chain for n in (e.head, e.tail)}
                decoys -= 1
    # around the named entities, edges to other candidates of the answer type first: the named entity's
    # neighbourhood must not single out the gold
    near = distractor_edges(world, named, edges, rng, 10 * n_distractors + 50)
    typed = [e for e in near if any(n not in named and world.type_of(n) == task.answer_type for n in (e.head, e.tail))]
    untyped = [e for e in near if e not in set(typed)]
    edges += (untyped if layout == "v2" else typed + untyped)[: max(0, n_distractors)]
    edges += _padding(world, task, edges, set(named) | set(starts), rng, hubs=layout == "v2")
    return list(dict.fromkeys(edges)), starts


def _padding(world: World, task: Task, edges: list[Edge], named: set[str], rng: random.Random,
             hubs: bool = False) -> list[Edge]:
    """World edges that raise every candidate of the answer type to the count of the most frequent one
    (the other end of a padding edge is never of the answer type, so no new candidate appears). With
    ``hubs`` (v2) a named entity of the answer type is a candidate like the others (the acquaintance of X: X
    touches the gold and every near-miss): it shows two facts of its own first, and counts towards the target,
    so that neither the most frequent id nor the one with the fewest kinds of fact marks it."""
    atype = task.answer_type
    out: list[Edge] = []
    have = set(edges)

    def own_facts(cand: str) -> list[Edge]:
        found = [e for e in world.incident_edges(cand) if e not in have
                 and world.type_of(e.tail if e.head == cand else e.head) != atype]
        rng.shuffle(found)
        return found

    typed = Counter(n for e in edges for n in (e.head, e.tail) if n in world and world.type_of(n) == atype)
    for hub in [n for n in typed if n in named] if hubs else []:
        shown = {e.relation for e in edges if hub in (e.head, e.tail)}
        fresh = list({e.relation: e for e in own_facts(hub) if e.relation not in shown}.values())[:2]
        out += fresh
        have.update(fresh)
        typed[hub] += len(fresh)
    counts = Counter({n: c for n, c in typed.items() if n not in named})
    if not counts:
        return out
    target = max(typed.values() if hubs else counts.values())
    for cand in counts:
        out += own_facts(cand)[: target - counts[cand]]
        have.update(out)
    return out


def context_layout(task: Task) -> str:
    """The context layout a task gets by default: its benchmark version's (``"v1"``, ``"v2"`` for those splits'
    tasks, which carry ``provenance["benchmark"]``), else ``"v0"``."""
    version = str(task.provenance.get("benchmark", "v0:")).partition(":")[0]
    return version if version in CONTEXT_LAYOUTS else "v0"


def build_context(world: World, task: Task, *, mode: str = "triples", n_distractors: int = 6, decoys: int = 3,
                  seed: int = 0, layout: str | None = None) -> Context:
    """The context for a task, shuffled by its own rng (deterministic per task and seed): the evidence,
    ``decoys`` decoy chains, ``n_distractors`` edges around the named entities, and count padding
    (see `_context_edges`), so that neither frequency nor position singles out the answer. ``layout``
    (default: `context_layout` of the task) picks how they are written."""
    if mode not in CONTEXT_MODES:
        raise ConfigError(f"context mode must be one of {CONTEXT_MODES}, got {mode!r}")
    layout = context_layout(task) if layout is None else layout
    if layout not in CONTEXT_LAYOUTS:
        raise ConfigError(f"context layout must be one of {CONTEXT_LAYOUTS}, got {layout!r}")
    if isinstance(decoys, bool) or not isinstance(decoys, int) or decoys < 0:
        raise ConfigError(f"decoys must be an integer >= 0, got {decoys!r}")
    rng = random.Random(f"{seed}:{task.task_id}:{task.question}")
    edges, decoy_starts = _context_edges(world, task, rng, n_distractors, decoys, layout)
    rng.shuffle(edges)
    if mode == "triples":
        return _triples(world, task, edges, decoy_starts) if layout == "v0" else _id_triples(world, edges)
    if layout != "v0":
        return _fact_records(world, edges)
    entities = list(dict.fromkeys(n for e in edges for n in (e.head, e.tail)))
    records = [page(world, n) for n in entities]
    shown = tuple(dict.fromkeys(canonical_edge(e) for r in records for e in record_edges(r)))
    text = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    return Context(text, shown, tuple(entities))


def _triples(world: World, task: Task, edges: list[Edge], decoy_starts: list[str]) -> Context:
    """One line per edge. Entities the question names are written as the question writes them, and so
    are the decoys' starts (a name is then no marker of the start); every other entity (the answer among
    them) by its id. The answer is never named (verified)."""
    entities = list(dict.fromkeys(n for e in edges for n in (e.head, e.tail)))
    names = (task.query.named_entities() if task.query else []) + decoy_starts
    named = {n: world.surface(n) for n in names if n in world}
    lines = [f"{named.get(e.head, e.head)} {e.relation} {named.get(e.tail, e.tail)}" for e in edges]
    return Context("\n".join(lines), tuple(edges), tuple(n for n in entities if n not in named), tuple(lines))


def _id_triples(world: World, edges: list[Edge]) -> Context:
    """v1 triples: every entity by its id, after one ``<id> is <name>`` line for each entity that has a
    name (v0 writes only the question's entities and the decoys' starts by name, so an entity's count of
    neighbours written by name singled out the gold where the question names several)."""
    entities = list(dict.fromkeys(n for e in edges for n in (e.head, e.tail)))
    names = [f"{n} is {world.surface(n)}" for n in entities if world.surface(n) != n]
    lines = [f"{e.head} {e.relation} {e.tail}" for e in edges]
    return Context("\n".join(names + lines), tuple(edges), tuple(entities), tuple(lines))


def _fact_records(world: World, edges: list[Edge]) -> Context:
    """v1 records: one record per entity the edges touch, in order of first appearance, listing exactly
    those edges (an edge under both of its ends: ``works_at`` on the person, ``works_at (inverse)`` on the
    organisation). Every edge is shown, the gold's included, and an id is written once in its own record
    and once per edge, so counts, positions and adjacency say what they say in triples mode."""
    entities = list(dict.fromkeys(n for e in edges for n in (e.head, e.tail)))
    facts: dict[str, dict[str, list[str]]] = {n: {} for n in entities}
    incident: dict[str, list[Edge]] = {n: [] for n in entities}
    for e in edges:
        facts[e.head].setdefault(e.relation, []).append(e.tail)
        facts[e.tail].setdefault(e.relation if is_symmetric(e.relation) else e.relation + INVERSE, []).append(e.head)
        incident[e.head].append(e)
        incident[e.tail].append(e)
    records = [{"id": n, "type": world.type_of(n), **{k: v for k, v in ref(world, n).items() if k != "id"},
                "facts": facts[n]} for n in entities]
    text = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    in_reading_order = dict.fromkeys(e for n in entities for e in incident[n])
    return Context(text, tuple(in_reading_order), tuple(entities))


def answer_prompt(task: Task, context: Context) -> str:
    """The user turn of the single-turn answerer (also the prefix of tokenizer-corpus texts).
    The question comes first: a small model then reads the context knowing what it looks for."""
    return f"Question: {task.question}\nContext:\n{context.text}"


def answer_messages(task: Task, context: Context) -> list[dict[str, str]]:
    """The chat prompt of the single-turn answerer."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": answer_prompt(task, context)}]


def gold_completion(task: Task, context: Context | None = None, cite_evidence: bool = False) -> str:
    """What a perfect single-turn answer looks like (warm-start demonstrations): the answer id,
    optionally after the evidence lines it follows, copied from the context in path order
    (the format `parse_answer` reads)."""
    if not cite_evidence:
        return task.answer
    lines = []
    for e in task.evidence:
        shown = [ln for ln, edge in zip(context.lines, context.edges) if edge == canonical_edge(e)] if context else []
        lines.append(shown[0] if shown else f"{e.head} {e.relation} {e.tail}")
    return "\n".join(lines + [task.answer])


@dataclass(frozen=True)
class ParsedAnswer:
    answer: str | list[str] | None
    evidence: tuple[Edge, ...]
    error: str | None = None


def parse_answer(completion: str, context: Context | None = None) -> ParsedAnswer:
    """The single-turn answer format. The answer is on the first line labelled ``Answer:`` (to the
    end of that line; later lines are prose and ignored) or, without a label, on the last line;
    the lines before it may cite evidence, as a line copied from the context or as
    ``head relation tail`` ids. A JSON ``{"answer": ..., "evidence": [[h, r, t], ...]}`` (or any
    env action shape) works too. Lines are structure: only the answer line is judged, by
    `osint_gym.reward.judge_answer` (separators in it mean several candidates), so ids listed one
    per line score what the answer line alone scores. Never raises."""
    if not isinstance(completion, str) or not completion.strip():
        return ParsedAnswer(None, (), "empty completion")
    text = completion.strip()
    if text[0] in "{[<":
        return _parse_json_answer(text)
    found = labelled_answer(text)
    if found is not None:
        head, answer = found
        rest = [ln for ln in head.splitlines() if ln.strip()]
    else:
        *rest, answer = [ln.strip() for ln in text.splitlines() if ln.strip()]
    edges = []
    for line in rest:
        line = re.sub(r"^\s*evidence\s*:\s*", "", line, flags=re.IGNORECASE).strip()
        edge = context.line_edge(line) if context is not None else None
        if edge is None and len(line.split()) == 3:
            edge = Edge(*line.split())
        if edge is not None:
            edges.append(edge)
    if not answer:
        return ParsedAnswer(None, tuple(edges), "no answer after the Answer: label")
    return ParsedAnswer(answer, tuple(edges))


def _parse_json_answer(text: str) -> ParsedAnswer:
    parsed = parse_action(text)
    answers = [c for c in parsed.calls if c.name == "answer" and isinstance(c.args, dict)]
    edges = tuple(
        Edge(c.args["src"], c.args["rel"], c.args["dst"])
        for c in parsed.calls
        if c.name == "add_edge"
        and isinstance(c.args, dict)
        and all(isinstance(c.args.get(k), str) for k in ("src", "rel", "dst"))
    )
    if answers:
        value = answers[0].args.get("entity_id")
        if isinstance(value, (str, list)):
            return ParsedAnswer(value, edges)
    return ParsedAnswer(None, edges, parsed.error or "no answer in the JSON")


def score_completion(task: Task, completion: str, context: Context, cfg: RewardConfig | None = None) -> RewardBreakdown:
    """Score a single-turn completion with the env's reward: the answer, and F1 of the cited edges
    the context actually shows (a citation the context does not show counts as an invalid action)."""
    cfg = cfg or RewardConfig()
    parsed = parse_answer(completion, context)
    shown = set(context.edges)
    cited = {canonical_edge(e) for e in parsed.evidence}
    supported = cited & shown
    invalid = len(cited - shown) + (1 if parsed.error else 0)
    shown_entities = {n for e in context.edges for n in (e.head, e.tail)}  # a KG name with a comma is one entity
    return score_episode(
        gold_answers=task.answers,
        gold_evidence=task.evidence,
        submitted=parsed.answer,
        evidence=supported,
        critical_steps=1,
        max_steps=1,
        penalties_paid=invalid * cfg.invalid_action_penalty,
        cfg=cfg,
        known=shown_entities,
    )


def random_guess(task: Task, context: Context, rng: random.Random) -> str:
    """The chance baseline: a random context entity of the type the question asks for."""
    types = {t.value for t in ID_PREFIX}
    prefix = ID_PREFIX[EntityType(task.answer_type)] if task.answer_type in types else None
    pool = [e for e in context.entities if prefix and e.startswith(prefix)] or list(context.entities)
    return rng.choice(pool) if pool else ""


def adjacency_is_the_question(world: World, task: Task) -> bool:
    """A one-hop question whose start has, in the whole world, no neighbour of the answer type but the
    gold (``Which person operates @x?``: an account has one owner): there the adjacent entity is what the
    question asks for, and no context of true facts can hide it. v0 splits keep such tasks (``adjacent``
    is measured without them); v1 splits leave them out."""
    q = task.query
    if q is None or q.start is None or len(q.hops) != 1:
        return False
    near = {n for e in world.incident_edges(q.start) for n in (e.head, e.tail)
            if n != q.start and world.type_of(n) == task.answer_type}
    return near == {task.answer}
