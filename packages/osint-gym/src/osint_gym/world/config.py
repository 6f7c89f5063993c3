"""`WorldConfig`: the size of the hidden world and its adversarial-realism knobs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from osint_gym.errors import ConfigError, from_table, read_toml


def _rate(help_text: str, default: float) -> Any:
    return field(default=default, metadata={"help": help_text, "range": (0.0, 1.0)})


@dataclass(frozen=True)
class WorldConfig:
    """Parameters of a generated world. ``generate_world(config, seed)`` is a pure function of both.

    Every adversarial knob is documented with its default; set any of them to 0 for a clean world.
    """

    n_people: int = field(default=200, metadata={"help": "Number of real people."})
    people_per_org: float = field(default=12.0, metadata={"help": "Average employees per organization."})
    people_per_location: float = field(default=25.0, metadata={"help": "Average residents per location."})
    people_per_event: float = field(default=8.0, metadata={"help": "People per event (sets the event count)."})
    knows_per_person: float = field(default=3.0, metadata={"help": "Average acquaintances per person."})
    events_per_person: float = field(default=1.2, metadata={"help": "Average events a person attended."})
    posts_per_account: float = field(default=3.0, metadata={"help": "Average microblog posts per account."})
    threads_per_event: float = field(default=0.9, metadata={"help": "Average forum threads per event."})
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

    def __post_init__(self) -> None:
        if not isinstance(self.n_people, int) or isinstance(self.n_people, bool) or self.n_people < 4:
            raise ConfigError(f"WorldConfig.n_people must be an integer >= 4, got {self.n_people!r}")
        for f in dataclasses.fields(self):
            if f.name == "n_people":
                continue
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"WorldConfig.{f.name} must be a number, got {value!r}")
            lo, hi = f.metadata.get("range", (0.0, float("inf")))
            if not lo <= value <= hi:
                raise ConfigError(f"WorldConfig.{f.name} must be in [{lo}, {hi}], got {value!r}")
        for name in ("people_per_org", "people_per_location", "people_per_event"):
            if getattr(self, name) < 1:
                raise ConfigError(f"WorldConfig.{name} must be >= 1, got {getattr(self, name)!r}")

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
        base = dict(
            name_collision_rate=0.0,
            decoy_rate=0.0,
            misattribution_rate=0.0,
            stale_profile_rate=0.0,
            noise_level=0.0,
        )
        base.update(overrides)
        return cls(**base)
