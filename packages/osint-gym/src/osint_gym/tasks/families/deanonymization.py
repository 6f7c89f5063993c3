"""deanonymization: an unlisted account described by its traces (employer, city, events) -> the person.

The account's owner is never shown by any tool; the question states traits of the owner that
the account itself gives away, and exactly one person in the directory has all of them.
A question states only what the world makes true and the tools show: each trait is a true fact
of the owner that one of the account's own posts names (a post about no other account; rumours
and shout-outs mention the friend they are about), or the city its profile gives, where that
city is the owner's real one (stale profiles give another).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from osint_gym.schema import Direction, EntityType
from osint_gym.tasks.families.base import FamilyConfig, TaskFamily
from osint_gym.tasks.paths import DISAMBIGUATORS, Template, make_task
from osint_gym.tasks.phrasing import filter_clauses
from osint_gym.tasks.query import Filter, Query
from osint_gym.tasks.task import Task
from osint_gym.tools import MAX_LIMIT
from osint_gym.world.graph import World

_O = Direction.OUT
# The person facts a directory search can combine: employer, city, events (in this order).
TRAITS = tuple(rel for rel, d in DISAMBIGUATORS[EntityType.PERSON.value] if d is _O)
QUESTIONS = (
    "The anonymous {platform} account {handle} says its owner is the person{traits}. Who operates it?",
    "{handle} never gives a real name, but it lets slip that its owner is the person{traits}. "
    "Which person is behind {handle}?",
    "Deanonymize {handle}: going by what this {platform} account says, its owner is the person{traits}. Who is it?",
)


@dataclass(frozen=True)
class DeanonymizationConfig(FamilyConfig):
    min_traits: int = 2
    max_traits: int = 3


def stated_traits(world: World, account: str, person: str) -> list[Filter]:
    """The owner's true traits that the account's own records show, in a fixed order.

    Only the posts ``get_user_posts`` returns count (the first MAX_LIMIT), so every trait can be
    checked through the tools.
    """
    found: dict[Filter, None] = {}
    for post in world.neighbors(account, "authored", _O)[:MAX_LIMIT]:
        if world.type_of(post) != EntityType.POST.value or world.neighbors(post, "mentions", _O):
            continue
        for value in world.neighbors(post, "references", _O):
            found.update((Filter(rel, _O, value), None) for rel in TRAITS if world.has_edge(person, rel, value))
    city = world.entity(account).get("location")
    for loc in world.by_name.get(str(city).lower(), ()):
        if world.has_edge(person, "lives_in", loc):
            found[Filter("lives_in", _O, loc)] = None
    return list(found)


class Deanonymization(TaskFamily):
    name = "deanonymization"
    description = "Name the person behind an anonymous account from the traces it left."
    difficulties = ("medium", "hard")
    config_class = DeanonymizationConfig

    def templates(self, difficulty: str) -> list[Template]:
        return []  # intersection queries, built in propose()

    def hop_counts(self, difficulty: str) -> set[int]:
        cfg: DeanonymizationConfig = self.config  # type: ignore[assignment]
        return {cfg.min_traits} if difficulty == "medium" else {cfg.min_traits, cfg.max_traits}

    def difficulties_for(self, world: World) -> tuple[str, ...]:
        # medium = two traits in a clean world; with rumours and stale profiles it is hard
        if not super().difficulties_for(world):
            return ()
        return ("hard",) if self._noisy(world) else self.difficulties

    @staticmethod
    def _noisy(world: World) -> bool:
        return world.config is not None and world.config.noise_level > 0

    def propose(self, world: World, rng: random.Random, difficulty: str, provenance: dict[str, Any],
                hops: int | None = None) -> Task | None:
        cfg: DeanonymizationConfig = self.config  # type: ignore[assignment]
        anonymous = [a for a in world.ids("account") if world.entity(a).get("listed") is False]
        if not anonymous or difficulty not in self.difficulties_for(world):
            return None
        account = rng.choice(anonymous)
        owners = world.neighbors(account, "alias_of", _O)
        if not owners:  # a decoy: nobody behind it
            return None
        person = owners[0]
        facts = stated_traits(world, account, person)
        rng.shuffle(facts)
        # a noisy world makes even min_traits traits hard; a clean one needs max_traits for hard
        few = difficulty == "medium" or (self._noisy(world) and len(facts) < cfg.max_traits)
        n_traits = hops if hops is not None else cfg.min_traits if few else cfg.max_traits
        if len(facts) < n_traits:
            return None
        chosen = sorted(facts[:n_traits], key=lambda f: TRAITS.index(f.relation))
        query = Query(None, (), EntityType.PERSON.value, tuple(chosen))
        if query.evaluate(world) != [person]:
            return None
        question = rng.choice(QUESTIONS).format(
            platform=world.entity(account)["platform"],
            handle=world.surface(account),
            traits=filter_clauses(world, query.filters),
        )
        return make_task(world, query, [person], self.name, rng, provenance, difficulty=difficulty, question=question)
