"""The learned generator's scripted control: a frontier curriculum over the offered paths.

A choose-mode offer numbers verified paths from one start; the learned generator picks one by GRPO on
its frontier reward. The scripted curriculum picks one with probability proportional to p(1 - p), where p
is the frozen answerer's solve rate estimated for the path's bin of offer features (task family x hops x
filters, and with rungs the steps the answerer plays), from the episodes the run already played for the
generator's reward ("Learning to Reason at the Frontier of Learnability", arXiv 2502.12272, samples tasks the same
way). It learns nothing: the p of a bin
is counted, not trained, so it shows what choosing by observed solve rates alone reaches.

A bin's p is the posterior mean under a uniform Beta(1, 1) prior, (solved + 1) / (played + 2): a bin never
played weighs 1/4 (p = 1/2), so the curriculum explores it; a bin always or never solved in many episodes
weighs little.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from osint_gym.proposals import Offer
from osint_gym.tasks import Task
from osint_selfplay.errors import ConfigError

FILTER_CAP = 2  # bins count a path's filters as 0, 1 or 2+ (more would split the episodes too thinly)
LEFT_CAP = 5  # and a rung's steps left as 1, 2, 3, 4 or 5+


@dataclass(frozen=True, order=True)
class OfferBin:
    """What the curriculum sees of an offered path: its task family, its hops, its filters (0, 1, 2+) and, with
    rungs, the steps of its demonstration the answerer plays (1 .. 5+; 0: no rungs, the whole episode)."""

    family: str
    hops: int
    filters: int
    left: int = 0

    def key(self) -> str:
        return f"{self.family}/{self.hops}/{self.filters}" + (f"/{self.left}" if self.left else "")

    @classmethod
    def from_key(cls, key: str) -> OfferBin:
        parts = key.split("/")
        family, hops, filters = parts[:3]
        return cls(family, int(hops), int(filters), int(parts[3]) if len(parts) > 3 else 0)


def task_hops(task: Task) -> int:
    """A task's hops (a filter's edge is evidence, not a hop)."""
    return task.query.n_hops if task.query is not None else len(task.evidence)


def choice_bin(offer: Offer, k: int, left: int | None = None) -> OfferBin:
    """The bin of choice ``k`` (1-based) of a choose-mode offer, and with rungs of its ``left`` steps the answerer
    plays (None: all of them)."""
    if offer.mode != "choose" or not 1 <= k <= len(offer.choices):
        raise ConfigError(
            f"offer {offer.offer_id!r}: no choice {k} (a choose-mode offer numbers 1..{len(offer.choices)})"
        )
    left = min(LEFT_CAP, offer.steps[k - 1] if left is None else left) if offer.steps else 0
    query = offer.query(k)
    family = offer.families[k - 1] if offer.families else "any"
    if query is None:  # a filter-free offer: its path is its query
        return OfferBin(family, len(offer.choices[k - 1]), 0, left)
    return OfferBin(family, query.n_hops, min(FILTER_CAP, sum(len(h.filters) for h in query.hops)), left)


def picks(offer: Offer) -> list[tuple[int, ...]]:
    """Every pick a proposal can make of a choose-mode offer: each choice, and with rungs each of its steps left."""
    if not offer.steps:
        return [(k,) for k in range(1, len(offer.choices) + 1)]
    return [(k, left) for k, steps in enumerate(offer.steps, 1) for left in range(1, steps + 1)]


def frontier_weight(p: float) -> float:
    """p(1 - p): the variance of a task's outcome, highest where the answerer solves half the time."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a solve rate is in [0, 1], got {p}")
    return p * (1.0 - p)


class FrontierCurriculum:
    """Solve rates per `OfferBin` from observed episodes; picks an offered path in proportion to p(1 - p)."""

    def __init__(self) -> None:
        self.played: Counter[OfferBin] = Counter()
        self.solved: Counter[OfferBin] = Counter()

    def observe(self, bin_: OfferBin, solved: int, played: int) -> None:
        """``played`` episodes of a task in ``bin_``, ``solved`` of them correct."""
        if not 0 <= solved <= played:
            raise ValueError(f"solved must be in [0, played]; got {solved} of {played}")
        self.played[bin_] += played
        self.solved[bin_] += solved

    def rate(self, bin_: OfferBin) -> float:
        """The bin's estimated solve rate: the posterior mean under a Beta(1, 1) prior."""
        return (self.solved[bin_] + 1) / (self.played[bin_] + 2)

    def weights(self, offer: Offer) -> list[float]:
        """The unnormalised probability of each pick of the offer (`picks`): p(1 - p) of its bin."""
        return [frontier_weight(self.rate(choice_bin(offer, *refs))) for refs in picks(offer)]

    def pick(self, offer: Offer, rng: random.Random) -> tuple[int, ...]:
        """A pick of ``offer`` (a choice, 1-based, and with rungs its steps left), drawn in proportion to its bin's
        p(1 - p)."""
        return rng.choices(picks(offer), weights=self.weights(offer))[0]

    def to_dict(self) -> dict[str, Any]:
        return {b.key(): {"played": self.played[b], "solved": self.solved[b], "rate": self.rate(b)}
                for b in sorted(self.played)}

    @classmethod
    def from_observations(cls, observations: list[dict[str, Any]]) -> FrontierCurriculum:
        """A curriculum from observation records ({"bin", "solved", "played"}, as the generator's reward keeps them)."""
        out = cls()
        for o in observations:
            out.observe(OfferBin.from_key(o["bin"]), int(o["solved"]), int(o["played"]))
        return out
