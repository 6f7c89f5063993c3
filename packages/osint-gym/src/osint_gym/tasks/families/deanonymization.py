"""deanonymization: an unlisted account described by its traces (employer, city, events) -> the person.

The account's owner is never shown by any tool; the question states the traces the account left,
and exactly one person in the directory matches all of them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from osint_gym.schema import Direction
from osint_gym.tasks.families.base import FamilyConfig, TaskFamily
from osint_gym.tasks.paths import Template, make_task
from osint_gym.tasks.query import Filter, Query
from osint_gym.tasks.task import Task
from osint_gym.world.graph import World

_O = Direction.OUT
TRAITS = (("works_at", "works at {v}"), ("lives_in", "lives in {v}"), ("attended", "attended {v}"))
QUESTIONS = (
    "The anonymous {platform} account {handle} says its owner {traits}. Who operates it?",
    "{handle} never gives a real name, but its posts say the owner {traits}. Which person is behind {handle}?",
    "Deanonymize {handle}: the person behind this {platform} account {traits}. Who is it?",
)


@dataclass(frozen=True)
class DeanonymizationConfig(FamilyConfig):
    min_traits: int = 2
    max_traits: int = 3


class Deanonymization(TaskFamily):
    name = "deanonymization"
    description = "Name the person behind an anonymous account from the traces it left."
    difficulties = ("medium", "hard")
    config_class = DeanonymizationConfig

    def templates(self, difficulty: str) -> list[Template]:
        return []  # intersection queries, built in propose()

    def difficulties_for(self, world: World) -> tuple[str, ...]:
        # medium = two traits in a clean world; with rumours and stale profiles it is hard
        if not super().difficulties_for(world):
            return ()
        noisy = world.config is not None and world.config.noise_level > 0
        return ("hard",) if noisy else self.difficulties

    def propose(self, world: World, rng: random.Random, difficulty: str, provenance: dict[str, Any]) -> Task | None:
        cfg: DeanonymizationConfig = self.config  # type: ignore[assignment]
        anonymous = [a for a in world.ids("account") if world.entity(a).get("listed") is False]
        if not anonymous:
            return None
        account = rng.choice(anonymous)
        owners = world.neighbors(account, "alias_of", _O)
        if not owners:  # a decoy: nobody behind it
            return None
        person = owners[0]
        facts = [Filter(rel, _O, v) for rel, _ in TRAITS for v in world.neighbors(person, rel, _O)]
        rng.shuffle(facts)
        if difficulty not in self.difficulties_for(world):
            return None
        n_traits = cfg.min_traits if difficulty == "medium" else cfg.max_traits
        chosen = sorted(facts[:n_traits], key=lambda f: [r for r, _ in TRAITS].index(f.relation))
        if len(chosen) < n_traits:
            return None
        query = Query(None, (), "person", tuple(chosen))
        if query.evaluate(world) != [person]:
            return None
        phrases = dict(TRAITS)
        traits = [phrases[f.relation].format(v=world.surface(f.value)) for f in chosen]
        question = rng.choice(QUESTIONS).format(
            platform=world.entity(account)["platform"],
            handle=world.surface(account),
            traits=", ".join(traits[:-1]) + " and " + traits[-1],
        )
        return make_task(world, query, [person], self.name, rng, provenance, difficulty=difficulty, question=question)
