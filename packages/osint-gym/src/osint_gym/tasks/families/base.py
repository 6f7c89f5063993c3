"""The task-family interface: a config dataclass, templates per difficulty, a proposer."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from osint_gym.tasks.paths import Template, make_task, realize
from osint_gym.tasks.task import Task
from osint_gym.world.graph import World


@dataclass(frozen=True)
class FamilyConfig:
    """Knobs shared by every family; families subclass it to add their own."""

    weight: float = 1.0  # relative frequency when a sampler mixes families


class TaskFamily(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    difficulties: ClassVar[tuple[str, ...]]
    config_class: ClassVar[type[FamilyConfig]] = FamilyConfig

    def __init__(self, config: FamilyConfig | None = None) -> None:
        self.config = config if config is not None else self.config_class()

    def difficulties_for(self, world: World) -> tuple[str, ...]:
        """The difficulties this family can produce in a given world."""
        return self.difficulties if world.kind.procedural_tasks else ()

    @abstractmethod
    def templates(self, difficulty: str) -> list[Template]:
        """Hop templates producing tasks of this difficulty."""

    def hop_counts(self, difficulty: str) -> set[int]:
        """How many hops this family's tasks of a difficulty can walk (a sampler asked for a number of hops draws
        only from the families that make it)."""
        return {len(t.steps) for t in self.templates(difficulty)}

    def propose(self, world: World, rng: random.Random, difficulty: str, provenance: dict[str, Any],
                hops: int | None = None) -> Task | None:
        """One candidate task (unverified), or None when this draw led nowhere; ``hops``: from the templates that
        walk that many hops only (`hop_counts` says which exist; a sampler passes it only when asked for it)."""
        templates = [t for t in self.templates(difficulty) if hops is None or len(t.steps) == hops]
        if not templates:
            return None
        realized = realize(world, rng.choice(templates), rng)
        if realized is None:
            return None
        query, path = realized
        return make_task(world, query, path, self.name, rng, provenance)
