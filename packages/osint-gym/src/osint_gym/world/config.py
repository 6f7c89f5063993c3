"""`WorldConfig`: the size of the hidden world and its adversarial-realism knobs."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from osint_gym.errors import ConfigError, from_table, read_toml

MAX_PEOPLE = 1_000_000  # bounds build time and memory, both about linear in people (benchmarks/RESULTS.md)
MAX_PER_ENTITY = 100.0  # a bound on the per-person/per-event averages: past it a typo would hang


def check_seed(seed: object, what: str = "world seed") -> int:
    """A seed is an integer (not a bool, a float or a list), or a `ConfigError` naming it."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigError(f"{what} must be an integer, got {seed!r}")
    return seed


def _rate(help_text: str, default: float) -> Any:
    return field(default=default, metadata={"help": help_text, "range": (0.0, 1.0)})


def _average(help_text: str, default: float, lo: float = 0.0, hi: float = MAX_PER_ENTITY) -> Any:
    return field(default=default, metadata={"help": help_text, "range": (lo, hi)})


@dataclass(frozen=True)
class WorldConfig:
    """Parameters of a generated world. ``generate_world(config, seed)`` is a pure function of both.

    Every adversarial knob is documented with its default; set any of them to 0 for a clean world.
    Every value is checked against its range (``metadata["range"]``, finite), so ``inf``, NaN or a
    huge value is a `ConfigError` rather than an OverflowError or a build that never ends.
    """

    n_people: int = field(default=200, metadata={"help": "Number of real people.", "range": (4, MAX_PEOPLE)})
    people_per_org: float = _average("Average employees per organization.", 12.0, 1.0, float(MAX_PEOPLE))
    people_per_location: float = _average("Average residents per location.", 25.0, 1.0, float(MAX_PEOPLE))
    people_per_event: float = _average("People per event (sets the event count).", 8.0, 1.0, float(MAX_PEOPLE))
    knows_per_person: float = _average("Average acquaintances per person.", 3.0)
    events_per_person: float = _average("Average events a person attended (at most 5 each).", 1.2)
    posts_per_account: float = _average("Average microblog posts per account.", 3.0)
    threads_per_event: float = _average("Average forum threads per event.", 0.9)
    alias_density: float = field(
        default=1.6,
        metadata={"help": "Average accounts per person (at least one each).", "range": (1.0, 6.0)},
    )
    public_link_rate: float = _rate(
        "Share of accounts whose owner lists them on the people directory; the rest are anonymous.", 0.8
    )
    name_collision_rate: float = _rate(
        "Share of people who deliberately share the full name of someone else (on top of chance collisions).",
        0.06,
    )
    decoy_rate: float = _rate(
        "Look-alike decoy accounts per person: a copied display name, a similar handle, no real owner.", 0.15
    )
    misattribution_rate: float = _rate(
        "Share of posts about another person's activity written from a third account.", 0.1
    )
    stale_profile_rate: float = _rate(
        "Share of account profiles whose self-reported city or employer is outdated.", 0.2
    )
    noise_level: float = _rate("Share of posts that are rumours contradicting the true world.", 0.08)
    decoy_density: float = field(
        default=0.0,
        metadata={"help": "Share of the people who are near-miss decoys, planted in groups of 4 around a person: "
                          "each matches that person but for one fact held at another time (a former employer or "
                          "home) or through another relation (an event it was interested in but missed); "
                          "0 leaves the world as it was (benchmark v2 sets it).",
                  "range": (0.0, 0.8)},
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            lo, hi = f.metadata["range"]
            if f.name == "n_people":
                if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                    raise ConfigError(f"WorldConfig.n_people must be an integer >= {lo} and <= {hi:_}, got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"WorldConfig.{f.name} must be a number, got {value!r}")
            if not (math.isfinite(value) and lo <= value <= hi):  # NaN fails every comparison
                raise ConfigError(f"WorldConfig.{f.name} must be in [{lo}, {hi}] (a finite number), got {value!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorldConfig:
        """Build from a mapping (TOML table); unknown keys are errors that name the closest key."""
        return from_table(cls, data, "world config")

    @classmethod
    def from_toml(cls, path: str) -> WorldConfig:
        """Load a ``[world]`` table (or a file holding only world keys) from TOML."""
        data = read_toml(path, "world config")
        return cls.from_dict(data.get("world", data))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def clean(cls, **overrides: Any) -> WorldConfig:
        """A world with every adversarial knob off (useful for tests and tutorials)."""
        base: dict[str, Any] = dict(
            name_collision_rate=0.0,
            decoy_rate=0.0,
            misattribution_rate=0.0,
            stale_profile_rate=0.0,
            noise_level=0.0,
        )
        base.update(overrides)
        return cls(**base)
