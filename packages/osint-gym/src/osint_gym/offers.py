"""What a task generator is shown: `Offer`s built from the world (`make_offer`), and their text.

An offer is a verified path (``fixed``), a context subgraph around one (``generate``), or a start and
`CHOOSE_PATHS` numbered verified paths from it (``choose``; with ``filters``, the task families' own
paths, narrowed by filters). `osint_gym.proposals` reads a generator's answer to one and validates it.
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass

from osint_gym.errors import ConfigError, TaskError
from osint_gym.schema import Direction, Edge, canonical_edge
from osint_gym.single_turn import distractor_edges
from osint_gym.tasks.families import create_family, list_families
from osint_gym.tasks.paths import Template, realize
from osint_gym.tasks.phrasing import question_text
from osint_gym.tasks.query import ATTRIBUTE_FILTERS, Hop, Query
from osint_gym.tasks.task import Budgets, Task, difficulty_for_hops
from osint_gym.tasks.verify import verify_task
from osint_gym.world.graph import World

OFFER_MODES = ("fixed", "generate", "choose")
CHOOSE_PATHS = 3  # verified paths from one start a choose-mode offer shows by default (a start with fewer is skipped)
MAX_CHOICES = 9  # a choice is one digit on the P: line
MAX_PROPOSAL_HOPS = 4


@dataclass(frozen=True)
class Offer:
    """What the generator is shown. ``path`` is a verified chain (its last entity is a valid answer);
    in ``generate`` mode it is hidden among ``context`` edges and the generator must find a path; in
    ``choose`` mode it is one of the numbered ``choices``, verified paths from the same start."""

    mode: str
    start: str
    path: tuple[Edge, ...]
    context: tuple[Edge, ...]
    offer_id: str = ""
    choices: tuple[tuple[Edge, ...], ...] = ()
    # choose mode with filters: the query of each choice (its evidence, hop and filter edges, is in choices)
    queries: tuple[Query, ...] = ()
    # choose mode: the task family whose template each choice realises (a curriculum's bins read it)
    families: tuple[str, ...] = ()
    # choose mode with rungs: each choice's number of demonstrator steps under the budgets the offer was made for; a
    # proposal then also names how many of them the answerer plays (`osint_gym.rungs`)
    steps: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("queries", "families", "steps"):
            if getattr(self, name) and len(getattr(self, name)) != len(self.choices):
                raise ConfigError(f"offer {self.offer_id!r}: {len(getattr(self, name))} {name} for "
                                  f"{len(self.choices)} choices")

    def query(self, k: int) -> Query | None:
        """The query of choice ``k`` (1-based) of a filtered offer; None for a filter-free one."""
        return self.queries[k - 1] if self.queries else None

    def to_json(self) -> str:
        return json.dumps({"mode": self.mode, "start": self.start, "path": [list(e) for e in self.path],
                           "context": [list(e) for e in self.context], "offer_id": self.offer_id,
                           "choices": [[list(e) for e in c] for c in self.choices],
                           "queries": [q.to_dict() for q in self.queries], "families": list(self.families),
                           **({"steps": list(self.steps)} if self.steps else {})})

    @classmethod
    def from_json(cls, text: str) -> Offer:
        d = json.loads(text)
        return cls(
            d["mode"],
            d["start"],
            tuple(Edge(*e) for e in d["path"]),
            tuple(Edge(*e) for e in d["context"]),
            d.get("offer_id", ""),
            tuple(tuple(Edge(*e) for e in c) for c in d.get("choices", [])),
            tuple(Query.from_dict(q) for q in d.get("queries", [])),
            tuple(d.get("families", [])),
            tuple(d.get("steps", [])),
        )


def chain_query(start: str, edges: tuple[Edge, ...]) -> tuple[Query, list[str]] | None:
    """The filterless query an ordered edge chain from ``start`` spells, and the entities it visits."""
    path, hops = [start], []
    for e in edges:
        if e.head == path[-1]:
            hops.append(Hop(e.relation, Direction.OUT))
            path.append(e.tail)
        elif e.tail == path[-1]:
            hops.append(Hop(e.relation, Direction.IN))
            path.append(e.head)
        else:
            return None
    return Query(start, tuple(hops)), path


def walk_path(start: str, edges: tuple[Edge, ...], query: Query | None = None) -> tuple[Query, list[str]] | None:
    """(query, entities visited) of an offered path from ``start``: a filtered choice's own query,
    its entities read from its evidence, or the filterless query the edges spell; None if neither fits."""
    if query is None:
        return chain_query(start, edges)
    nodes = _query_nodes(query, edges) if query.start == start else None
    return None if nodes is None else (query, nodes)


def _query_nodes(query: Query, evidence: tuple[Edge, ...]) -> list[str] | None:
    """The entities a filtered query visits, read from its evidence (`Query.evidence`: each hop's
    edge, then the edges of that hop's filters), or None if the evidence is not that query's."""
    if query.start is None:
        return None
    nodes, i = [query.start], 0
    for hop in query.hops:
        if i >= len(evidence):
            return None
        e = evidence[i]
        if hop.direction is Direction.OUT and e.head == nodes[-1] and e.relation == hop.relation:
            nodes.append(e.tail)
        elif hop.direction is Direction.IN and e.tail == nodes[-1] and e.relation == hop.relation:
            nodes.append(e.head)
        else:
            return None
        i += 1 + sum(f.relation not in ATTRIBUTE_FILTERS for f in hop.filters)
    return nodes if i == len(evidence) else None


def _path_templates(world: World, max_hops: int, filters: bool = False) -> list[tuple[str, Template]]:
    """(family, template) for every family's path templates of at most ``max_hops`` hops, without filters
    (a proposal that writes its evidence can express a relation path but no filters, so only paths unique
    without them are offered), or as the families use them (``filters``: choose-mode offers, where osint-gym
    phrases the chosen query itself)."""
    templates: list[tuple[str, Template]] = []
    for name in list_families():
        fam = create_family(name)
        for difficulty in fam.difficulties_for(world):
            templates += [
                (name, t)
                if filters
                else (name, Template(
                    t.start_type,
                    tuple(dataclasses.replace(s, target_type=None, platform=None, disambiguate=False) for s in t.steps),
                    t.start_if,
                ))
                for t in fam.templates(difficulty)
                if len(t.steps) <= max_hops
            ]
    if not templates:
        raise ConfigError(f"no path templates of at most {max_hops} hops in this world")
    return templates


def _verified_path(world: World, template: Template, rng: random.Random,
                   start: str | None = None) -> tuple[tuple[Edge, ...], list[str], Query] | None:
    """(evidence edges, entities visited, query) of a path realised from ``template`` that is unique
    and that the oracle solves, or None."""
    realized = realize(world, template, rng, start)
    if realized is None:
        return None
    query, path = realized
    if query.evaluate(world) != [path[-1]]:
        return None
    edges = tuple(query.evidence(path))
    task = Task(
        "offer",
        question_text(world, query, world.type_of(path[-1]), [world.type_of(n) for n in path[1:]], rng),
        (path[-1],),
        edges,
        "generated",
        difficulty_for_hops(query.n_hops),
        query,
    )
    return (edges, path, query) if verify_task(world, task).ok else None


def make_offer(world: World, seed: int, index: int, *, mode: str = "fixed", max_hops: int = 2,
               n_context: int = 10, max_attempts: int = 400, filters: bool = False,
               choices: int = CHOOSE_PATHS, rungs: Budgets | None = None) -> Offer:
    """Offer ``index``: a path unique without filters (so that a proposal can express it), verified
    by the oracle; in ``generate`` mode with nearby distractor edges; in ``choose`` mode among
    `CHOOSE_PATHS` verified paths from the same start, shuffled, numbered in the prompt. ``filters``
    (choose mode only): the paths are the task families' own, narrowed by filters where a hop has
    several candidates ("the acquaintance of X who lives in L"), as hard as the seed tasks; ``choices``: how
    many paths a choose-mode offer numbers (a start with fewer verified paths is skipped). ``rungs`` (choose mode):
    the budgets the answerer plays under; each choice then carries its demonstrator's number of steps under them
    (``steps``), and a start whose paths the demonstrator does not all solve there is skipped. Pure in (seed,
    index)."""
    if mode not in OFFER_MODES:
        raise ConfigError(f"offer mode must be one of {OFFER_MODES}, got {mode!r}")
    if not 1 <= max_hops <= MAX_PROPOSAL_HOPS:
        raise ConfigError(f"max_hops must be in 1..{MAX_PROPOSAL_HOPS}, got {max_hops}")
    if filters and mode != "choose":
        raise ConfigError(f"filtered offers need choose mode (a proposal in {mode!r} mode cannot state filters)")
    if isinstance(choices, bool) or not isinstance(choices, int) or not 2 <= choices <= MAX_CHOICES:
        raise ConfigError(f"choices must be an integer in 2..{MAX_CHOICES}, got {choices!r}")
    rng = random.Random(f"offer:{seed}:{index}")
    templates = _path_templates(world, max_hops, filters)
    for _ in range(max_attempts):
        family, template = rng.choice(templates)
        found = _verified_path(world, template, rng)
        if found is None:
            continue
        edges, path, query = found
        start = path[0]
        if mode == "choose":  # more verified paths from the same start: the choice the generator makes
            own = [(f, t) for f, t in templates if t.start_type == world.type_of(start)]
            paths, queries, families = [edges], [query], [family]
            for _ in range(8 * choices):
                if len(paths) == choices:
                    break
                other, template = rng.choice(own)
                more = _verified_path(world, template, rng, start)
                if more is not None and more[0] not in paths:
                    paths.append(more[0])
                    queries.append(more[2])
                    families.append(other)
            if len(paths) < choices:  # every offer numbers the same count, so any number in range is a task
                continue
            # one permutation of (path, query, family) triples draws what shuffling the paths alone drew,
            # so offers are unchanged by what travels with their paths
            triples = list(zip(paths, queries, families))
            rng.shuffle(triples)
            offer = Offer(mode, start, edges, tuple(dict.fromkeys(e for p, _, _ in triples for e in p)),
                          f"{seed}-{index}", tuple(p for p, _, _ in triples),
                          tuple(q for _, q, _ in triples) if filters else (), tuple(f for _, _, f in triples))
            if rungs is None:
                return offer
            steps = _demonstrated(world, offer, rungs)
            if steps is not None:
                return dataclasses.replace(offer, steps=steps)
            continue
        context = edges
        if mode == "generate":
            context = edges + tuple(distractor_edges(world, path, edges, rng, n_context - len(edges)))
            context = tuple(rng.sample(context, len(context)))
        return Offer(mode, start, edges, context, f"{seed}-{index}")
    raise ConfigError(f"no offer found at index {index} after {max_attempts} attempts")


def choice_task(world: World, offer: Offer, k: int, task_id: str = "offer") -> Task | None:
    """Choice ``k`` (1-based) of a choose-mode offer as the task it stands for, its question phrased by osint-gym
    (seeded by the offer and the number, so a proposal and its offer read the same question); None if it does not
    walk from the offer's start."""
    chain = walk_path(offer.start, offer.choices[k - 1], offer.query(k))
    if chain is None:
        return None
    query, path = chain
    rng = random.Random(f"choose:{offer.offer_id}:{k}")
    question = question_text(world, query, world.type_of(path[-1]), [world.type_of(n) for n in path[1:]], rng)
    return Task(task_id, question, (path[-1],), tuple(canonical_edge(e) for e in offer.choices[k - 1]), "generated",
                difficulty_for_hops(query.n_hops), query, world.type_of(path[-1]))


def _demonstrated(world: World, offer: Offer, budgets: Budgets) -> tuple[int, ...] | None:
    """Each choice's number of demonstrator steps under ``budgets`` (`OSINTEnv.demonstration`), or None if the
    demonstrator does not solve every choice within them."""
    from osint_gym.env import OSINTEnv  # offers sit below the env for everything else; only rungs need it

    steps = []
    for k in range(1, len(offer.choices) + 1):
        task = choice_task(world, offer, k)
        try:
            if task is None:
                return None
            env = OSINTEnv(world=world, tasks=[task], start_depth=0, max_steps=budgets.max_steps,
                           max_parallel_calls=budgets.max_parallel_calls,
                           max_observation_chars=budgets.max_observation_chars,
                           observation_format=budgets.observation_format)
            env.reset(seed=0, options={"task_index": 0})
            steps.append(len(env.demonstration()))
        except TaskError:
            return None
    return tuple(steps)


def walk_text(offer: Offer, path: tuple[Edge, ...] | None = None, query: Query | None = None) -> str:
    """The offered path (or another ``path`` from the offer's start) in walking order, e.g.
    ``thread_1 <authored< account_55 >alias_of> person_33``: the answer is its last entity. A
    filtered choice (``query``) shows each hop's filters after the entity they narrow:
    ``person_3 >knows> person_8 [>lives_in> loc_5]``."""
    chain = walk_path(offer.start, offer.path if path is None else path, query)
    if chain is None:
        raise ConfigError(f"offer {offer.offer_id!r}: its path is not a walk from its start")
    query, nodes = chain
    parts = [nodes[0]]
    for hop, node in zip(query.hops, nodes[1:]):
        parts.append(f">{hop.relation}>" if hop.direction is Direction.OUT else f"<{hop.relation}<")
        parts.append(node)
        shown = [f"{f.relation} {f.value}" if f.relation in ATTRIBUTE_FILTERS else
                 (f">{f.relation}> {f.value}" if f.direction is Direction.OUT else f"<{f.relation}< {f.value}")
                 for f in hop.filters if f.relation != "type"]
        if shown:
            parts.append("[" + "; ".join(shown) + "]")
    return " ".join(parts)
