"""What the question's named entities tell a reader who does not follow the question: a task's near-misses.

A candidate *touches* an entity when one world edge joins them (any relation, either direction). The
question-reading shortcut (osint-eval's ``next-to-named`` audit rule, and the ``overlap-search`` baseline
that plays it through the tools) answers the candidate of the answer type touching the most entities the
question names. A *near-miss* of a task is another entity of the answer type that touches every named
entity the gold touches: to that shortcut it is the gold's equal, and only the question's constraints (a
current employer rather than a former one, an event attended rather than missed) tell them apart. The
world generator plants them (`osint_gym.world.near_miss`). Benchmark v2 keeps a task only where the
shortcut neither finds the gold nor rules it out (`Reading.fair`): where the gold touches a named entity,
nothing touches more and the gold has at least `MIN_NEAR_MISSES` near-misses; where it touches none (a chain
of hops away from them), no other entity of its type on the gold's own chain touches one.
"""

from __future__ import annotations

from dataclasses import dataclass

from osint_gym.tasks.task import Task
from osint_gym.world.graph import World

MIN_NEAR_MISSES = 4  # the shortcut then picks the gold at most 1 time in 5


def touched(world: World, entity: str, named: list[str]) -> set[str]:
    """The entities of ``named`` that ``entity`` shares a world edge with."""
    near = {n for e in world.incident_edges(entity) for n in (e.head, e.tail)}
    return {n for n in named if n in near and n != entity}


@dataclass(frozen=True)
class Reading:
    """How the question-reading shortcut sees a task in its world."""

    gold: int  # named entities the gold touches
    most: int  # the most named entities another candidate of the answer type touches
    on_chain: int  # the most named entities another entity of the answer type on the gold's evidence touches
    near_misses: tuple[str, ...]  # the other candidates touching every named entity the gold touches

    def fair(self, min_near_misses: int = MIN_NEAR_MISSES) -> bool:
        """The shortcut neither finds nor rules out the gold. Where the gold touches a named entity: nothing
        touches more, and the gold has ``min_near_misses`` near-misses (the shortcut then picks it at most 1 time
        in ``min_near_misses + 1``). Where it touches none: no other entity of its type on its own evidence
        touches one (every context shows the evidence, so that entity would be the shortcut's answer, and
        the gold the one it never picks: ``the forum account of the owner of the author of post_5``)."""
        if self.gold == 0:
            return self.on_chain == 0
        return self.most <= self.gold and len(self.near_misses) >= min_near_misses


def named_in_world(world: World, task: Task) -> list[str]:
    """The entities the task's question names (its query's start and filter values)."""
    return [n for n in dict.fromkeys(task.query.named_entities() if task.query else ()) if n in world]


def reading(world: World, task: Task) -> Reading:
    """The task as the question-reading shortcut sees it (`Reading`)."""
    named = named_in_world(world, task)
    touches: dict[str, set[str]] = {}  # every neighbour of a named entity -> the named entities it touches
    for entity in named:
        for e in world.incident_edges(entity):
            other = e.tail if e.head == entity else e.head
            if other != entity:
                touches.setdefault(other, set()).add(entity)
    gold = touches.get(task.answer, set())
    others = {c: t for c, t in touches.items()
              if c != task.answer and c not in named and world.type_of(c) == task.answer_type}
    near = tuple(c for c, t in others.items() if gold and gold <= t)
    chain = {n for e in task.evidence for n in (e.head, e.tail)}
    return Reading(len(gold), max((len(t) for t in others.values()), default=0),
                   max((len(t) for c, t in others.items() if c in chain), default=0), near)


def near_misses(world: World, task: Task) -> tuple[str, ...]:
    """The task's near-misses, in a fixed order (none where the gold touches no named entity)."""
    return reading(world, task).near_misses
