"""The learned generator's scripted control: a frontier curriculum over the offered paths.

A choose-mode offer numbers verified paths from one start; the learned generator picks one by GRPO on
its frontier reward. The scripted curriculum picks one with probability proportional to p(1 - p), where p
is the frozen answerer's solve rate estimated for the path's bin of offer features (task family x hops x
filters), from the episodes the run already played for the generator's reward ("Learning to Reason at the
Frontier of Learnability", arXiv 2502.12272, samples tasks the same way). It learns nothing: the p of a bin
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


@dataclass(frozen=True, order=True)
class OfferBin:
    """What the curriculum sees of an offered path: its task family, its hops and its filters (0, 1, 2+)."""

    family: str
    hops: int
    filters: int

    def key(self) -> str:
        return f"{self.family}/{self.hops}/{self.filters}"

    @classmethod
    def from_key(cls, key: str) -> OfferBin:
        family, hops, filters = key.rsplit("/", 2)
        return cls(family, int(hops), int(filters))


def task_hops(task: Task) -> int:
    """A task's hops (a filter's edge is evidence, not a hop)."""
    return task.query.n_hops if task.query is not None else len(task.evidence)


def choice_bin(offer: Offer, k: int) -> OfferBin:
    """The bin of choice ``k`` (1-based) of a choose-mode offer."""
    if offer.mode != "choose" or not 1 <= k <= len(offer.choices):
        raise ConfigError(
            f"offer {offer.offer_id!r}: no choice {k} (a choose-mode offer numbers 1..{len(offer.choices)})"
        )
    query = offer.query(k)
    family = offer.families[k - 1] if offer.families else "any"
    if query is None:  # a filter-free offer: its path is its query
        return OfferBin(family, len(offer.choices[k - 1]), 0)
    return OfferBin(family, query.n_hops, min(FILTER_CAP, sum(len(h.filters) for h in query.hops)))


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
        """The unnormalised probability of each offered choice: p(1 - p) of its bin."""
        return [frontier_weight(self.rate(choice_bin(offer, k))) for k in range(1, len(offer.choices) + 1)]

    def pick(self, offer: Offer, rng: random.Random) -> int:
        """A choice of ``offer`` (1-based), drawn in proportion to its bin's p(1 - p)."""
        return rng.choices(range(1, len(offer.choices) + 1), weights=self.weights(offer))[0]

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
