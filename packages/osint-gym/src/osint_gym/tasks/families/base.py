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

    def propose(self, world: World, rng: random.Random, difficulty: str, provenance: dict[str, Any]) -> Task | None:
        """One candidate task (unverified), or None when this draw led nowhere."""
        realized = realize(world, rng.choice(self.templates(difficulty)), rng)
        if realized is None:
            return None
        query, path = realized
        return make_task(world, query, path, self.name, rng, provenance)
