"""Turning hop templates into unique chains through the world, and chains into tasks.

A template is a start type plus a list of `Step`s. `realize` walks it from a random start,
choosing one neighbour per hop; where several neighbours fit, it adds filters taken from the
chosen neighbour's own facts ("... who works at O") until exactly one remains, or gives up.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from osint_gym.schema import PLATFORMS, RELATIONS, Direction
from osint_gym.tasks.phrasing import question_text
from osint_gym.tasks.query import Filter, Hop, Query
from osint_gym.tasks.task import Task, difficulty_for_hops
from osint_gym.world.graph import World

_O, _I = Direction.OUT, Direction.IN


def _disambiguators() -> dict[str, tuple[tuple[str, Direction], ...]]:
    """entity type -> the facts (relation, direction from that entity) that can single it out:
    the relation sides marked ``singles_out``, by their rank."""
    found: dict[str, list[tuple[int, str, Direction]]] = {}
    for spec in RELATIONS.values():
        for direction in Direction:
            rank = spec.side(direction).singles_out
            if rank is not None:
                for etype in spec.heads if direction is _O else spec.tails:
                    found.setdefault(etype.value, []).append((rank, spec.name, direction))
    return {etype: tuple((r, d) for _, r, d in sorted(facts, key=lambda f: f[0])) for etype, facts in found.items()}


DISAMBIGUATORS = _disambiguators()


@dataclass(frozen=True)
class Step:
    relation: str
    direction: Direction
    target_type: str | None = None  # restrict the hop to one entity type (adds a type filter if needed)
    platform: str | None = None  # "same"/"other" (relative to the start account) or a platform name
    disambiguate: bool = True  # may add filters to make the hop unique


@dataclass(frozen=True)
class Template:
    start_type: str
    steps: tuple[Step, ...]
    start_if: Callable[[World, str], bool] | None = None


def _tails(relation: str, direction: Direction) -> tuple[str, ...]:
    spec = RELATIONS[relation]
    types = spec.tails if direction is _O else spec.heads
    return tuple(t.value for t in types)


def _disambiguate(
    world: World, target: str, cands: list[str], rng: random.Random, max_filters: int = 2
) -> tuple[Filter, ...] | None:
    options = []
    for rel, direction in DISAMBIGUATORS.get(world.type_of(target), ()):
        for value in world.neighbors(target, rel, direction):
            options.append(Filter(rel, direction, value))
    rng.shuffle(options)
    chosen: list[Filter] = []
    remaining = cands
    for f in options:
        if len(chosen) == max_filters:
            break
        narrowed = [c for c in remaining if f.holds(world, c)]
        if len(narrowed) < len(remaining):
            chosen.append(f)
            remaining = narrowed
            if len(remaining) == 1:
                return tuple(chosen)
    return None


def realize(
    world: World, template: Template, rng: random.Random, start: str | None = None
) -> tuple[Query, list[str]] | None:
    """A query whose every hop is unique, and the chain of entities it visits; None on failure.
    ``start``: from this entity (it must be of the template's start type) instead of a random one."""
    pool = (
        world.ids(template.start_type)
        if start is None
        else [start]
        if world.type_of(start) == template.start_type
        else []
    )
    if not pool:
        return None
    start = rng.choice(pool)
    if template.start_if is not None and not template.start_if(world, start):
        return None
    path, hops = [start], []
    for step in template.steps:
        nbrs = world.neighbors(path[-1], step.relation, step.direction)
        filters: list[Filter] = []
        if step.target_type and len(_tails(step.relation, step.direction)) > 1:
            filters.append(Filter("type", _O, step.target_type))
        if step.platform:
            # "same"/"other" are relative to the last account on the path so far
            seen = next((world.entity(n)["platform"] for n in reversed(path) if world.type_of(n) == "account"), None)
            if step.platform in ("same", "other"):
                if seen is None:
                    return None
                platform = seen if step.platform == "same" else next(p for p in PLATFORMS if p != seen)
            else:
                platform = step.platform
            filters.append(Filter("platform", _O, platform))
        cands = [n for n in nbrs if all(f.holds(world, n) for f in filters)]
        fresh = [n for n in cands if n not in path]  # a chain never revisits an entity
        if not fresh:
            return None
        target = rng.choice(fresh)
        if len(cands) > 1:
            extra = _disambiguate(world, target, cands, rng) if step.disambiguate else None
            if extra is None:
                return None
            filters += extra
        hops.append(Hop(step.relation, step.direction, tuple(filters)))
        path.append(target)
    return Query(start, tuple(hops)), path


def make_task(
    world: World,
    query: Query,
    path: list[str],
    family: str,
    rng: random.Random,
    provenance: dict[str, object],
    difficulty: str | None = None,
    question: str | None = None,
) -> Task:
    """A task from a realised chain: question text, gold answer, gold evidence, metadata."""
    answer = path[-1]
    answer_type = world.type_of(answer)
    if question is None:
        targets = [world.type_of(n) for n in path[1:]]
        question = question_text(world, query, answer_type, targets, rng)
    return Task(
        task_id=f"{family}-{provenance.get('seed')}-{provenance.get('index')}",
        question=question,
        answers=(answer,),
        evidence=tuple(dict.fromkeys(query.evidence(path))),
        family=family,
        difficulty=difficulty or difficulty_for_hops(query.n_hops),
        query=query,
        answer_type=answer_type,
        provenance=provenance,
    )


def listed_account(world: World, account: str) -> bool:
    """Accounts whose owner lists them publicly: the only ones whose owner the tools can reveal."""
    return bool(world.entity(account).get("listed"))
