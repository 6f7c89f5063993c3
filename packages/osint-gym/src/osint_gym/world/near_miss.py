"""Near-miss decoys (`WorldConfig.decoy_density`): people planted around a person so that only the
question's own constraints tell them apart from that person.

OSINT is the work of telling a target from the people who almost match it. A group of
`NEAR_MISS_GROUP` near-misses is planted around one person P (the group's ``of``): each knows every
acquaintance of P, works where P works, lives where P lives and attended P's events, except for one
fact, its pivot, which it holds through another relation or at another time (and it knows the near-misses of
P's acquaintances, so that it has as many acquaintances as P, who knows theirs):

* ``employer``: it *worked* at P's employer (``worked_at``, a former employer) and works elsewhere now;
* ``city``: it *lived* in P's city (``lived_in``, a former home) and lives elsewhere now;
* ``event``: it was ``interested_in`` one of P's events and went to another one instead.

Every person of such a world, P and the near-misses included, has a past: a former employer, a former home
and an event it was interested in but missed (`past`); a near-miss's pivot is one of these, so having a
past marks nobody as a decoy.

A question about P that names an acquaintance of P and P's employer then has near-misses that touch
both named entities (a shortcut that counts the named entities a candidate touches cannot tell them
from P), and the pivot's constraint is load-bearing: dropping it makes them answers too. The
near-misses are people like any other (names, accounts, posts and threads come from the same stages),
so their degree matches P's; they are true facts of the world, and records show them.

Every choice is drawn from the builder's one rng, after the base people and their acquaintances, so a
world with ``decoy_density = 0`` draws exactly what it drew before the knob existed. Near-misses are made
after everyone else, so a world with them is shuffled at the end (`shuffle_people`): people get their ids
in a random order and every listing is in id order, so that neither an id nor a position tells them apart.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NEAR_MISS_GROUP = 4  # near-misses planted around one person: a shortcut that ties them picks P 1 time in 5
PIVOTS = ("employer", "city", "event")
FORMER = {"employer": "worked_at", "city": "lived_in", "event": "interested_in"}  # the pivot's other relation


@dataclass(frozen=True)
class NearMiss:
    """One planted person: its facts, read by the world generator (which adds its name and birth year)."""

    of: str  # the person it mirrors
    pivot: str  # one of PIVOTS
    employer: str
    home: str
    events: tuple[str, ...]  # attended
    knows: tuple[str, ...]
    former: str  # the entity of its pivot fact, held through FORMER[pivot]


def decoy_count(n_people: int, density: float) -> int:
    """How many of ``n_people`` are near-misses: ``density`` of them, in whole groups."""
    return NEAR_MISS_GROUP * round(density * n_people / NEAR_MISS_GROUP)


@dataclass(frozen=True)
class BasePeople:
    """The base people's facts (the generator's own tables), as the planting reads them."""

    persons: Sequence[str]
    employer: Mapping[str, str]
    home: Mapping[str, str]
    attended: Mapping[str, Sequence[str]]
    knows: Mapping[str, Sequence[str]]
    orgs: Sequence[str]
    locs: Sequence[str]
    events: Sequence[str]


def plan_near_misses(rng: random.Random, base: BasePeople, n_decoys: int) -> list[NearMiss]:
    """``n_decoys`` near-misses in groups of `NEAR_MISS_GROUP`, around distinct base people with an acquaintance
    (a near-miss mirrors them), chosen by ``rng``; within a group every near-miss has the same pivot."""
    anchors = [p for p in base.persons if base.knows.get(p)]
    groups = min(n_decoys // NEAR_MISS_GROUP, len(anchors))
    planted: list[NearMiss] = []
    for person in rng.sample(anchors, groups):
        events = tuple(base.attended[person])
        pivot = rng.choice(PIVOTS if events else PIVOTS[:2])
        # the fact the whole group holds otherwise: P's employer, P's city, or one event of P's they all missed
        former = {"employer": base.employer[person], "city": base.home[person]}.get(pivot) or rng.choice(events)
        for _ in range(NEAR_MISS_GROUP):
            planted.append(_near_miss(rng, base, person, pivot, former))
    return planted


def _near_miss(rng: random.Random, base: BasePeople, person: str, pivot: str, former: str) -> NearMiss:
    employer, home, events = base.employer[person], base.home[person], tuple(base.attended[person])
    if pivot == "employer":
        employer = rng.choice([o for o in base.orgs if o != former])
    elif pivot == "city":
        home = rng.choice([loc for loc in base.locs if loc != former])
    else:  # it went to another event instead, so that it attended as many as P did
        other = [e for e in base.events if e not in events]
        events = tuple(e for e in events if e != former) + ((rng.choice(other),) if other else ())
    return NearMiss(of=person, pivot=pivot, employer=employer, home=home, events=events,
                    knows=tuple(base.knows[person]), former=former)


def mutual_acquaintances(planted: Sequence[NearMiss]) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)``, ``i < j``, of planted near-misses that know each other: those mirroring two
    people who know each other. With them a near-miss knows as many people as the person it mirrors (P's
    acquaintances and their near-misses), and a question that starts from a near-miss of P's acquaintance
    finds P's near-misses beside P."""
    members: dict[str, list[int]] = {}
    for i, near in enumerate(planted):
        members.setdefault(near.of, []).append(i)
    pairs = []
    for i, near in enumerate(planted):
        pairs += [(i, j) for other in near.knows for j in members.get(other, ()) if i < j]
    return pairs


def past(rng: random.Random, base: BasePeople, employer: str, home: str, attended: Sequence[str],
         given: Mapping[str, str]) -> dict[str, str]:
    """A person's past, by pivot kind: a former employer other than ``employer``, a former home other than
    ``home``, an event it missed (not in ``attended``), each drawn by ``rng`` unless ``given`` (a near-miss's
    pivot fact); a kind with nothing left to draw from is left out."""
    pools = {"employer": [o for o in base.orgs if o != employer], "city": [loc for loc in base.locs if loc != home],
             "event": [e for e in base.events if e not in attended]}
    found = {}
    for kind, pool in pools.items():
        if kind in given or pool:
            found[kind] = given[kind] if kind in given else rng.choice(pool)
    return found


_NUMBERED = re.compile(r"(.*?)(\d+)\Z")


def _id_order(entity_id: str) -> tuple[str, int]:
    found = _NUMBERED.match(entity_id)
    return (found.group(1), int(found.group(2))) if found else (entity_id, -1)


def shuffle_people(rng: random.Random, nodes: list[tuple[str, dict[str, Any]]], edges: list[tuple[str, str, str]],
                   people: Sequence[str]) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str, str]]]:
    """The world's nodes and edges (networkx's ``(head, tail, relation)``) with ``people`` renamed by a random
    permutation of their ids, people listed by id, and every edge in the order of its ends' ids (so every record
    lists its people in id order): a near-miss, made last, is then neither the highest id nor the last listed."""
    numbers = list(range(len(people)))
    rng.shuffle(numbers)
    prefix = _id_order(people[0])[0] if people else ""
    rename = {p: f"{prefix}{n}" for p, n in zip(people, numbers)}
    kinds = list(dict.fromkeys(_id_order(n)[0] for n, _ in nodes))
    renamed = [(rename.get(n, n), attrs) for n, attrs in nodes]
    renamed.sort(key=lambda node: (kinds.index(_id_order(node[0])[0]), _id_order(node[0])[1]))
    moved = [(rename.get(h, h), rename.get(t, t), r) for h, t, r in edges]
    moved.sort(key=lambda e: (_id_order(e[0]), _id_order(e[1]), e[2]))
    return renamed, moved
