"""convoluted_trace: 3-5 mixed hops across every relation, each hop made unique by filters."""

from __future__ import annotations

import random
from dataclasses import dataclass

from osint_gym.schema import RELATIONS, Direction
from osint_gym.tasks.families.base import FamilyConfig, TaskFamily
from osint_gym.tasks.paths import Step, Template

_O, _I = Direction.OUT, Direction.IN
# Hops the tools can replay (alias_of OUT only from listed accounts, checked at verification); only walked ones.
_MOVES: dict[str, list[tuple[str, Direction, str]]] = {}
for _rel, _spec in RELATIONS.items():
    if not _spec.walked:
        continue
    for _h in _spec.heads:
        for _t in _spec.tails:
            _MOVES.setdefault(_h.value, []).append((_rel, _O, _t.value))
            if not _spec.symmetric:
                _MOVES.setdefault(_t.value, []).append((_rel, _I, _h.value))


@dataclass(frozen=True)
class ConvolutedTraceConfig(FamilyConfig):
    min_hops: int = 3
    max_hops: int = 5


class ConvolutedTrace(TaskFamily):
    name = "convoluted_trace"
    description = "Long traces mixing people, accounts, posts, threads, places and events."
    difficulties = ("hard",)
    config_class = ConvolutedTraceConfig

    def __init__(self, config: ConvolutedTraceConfig | None = None) -> None:
        super().__init__(config)
        # A fixed pool of shapes, the same in every process; the task's rng picks one.
        self._templates = [self._random_template(random.Random(i)) for i in range(64)]

    def templates(self, difficulty: str) -> list[Template]:
        return self._templates

    def hop_counts(self, difficulty: str) -> set[int]:
        cfg: ConvolutedTraceConfig = self.config  # type: ignore[assignment]
        return set(range(cfg.min_hops, cfg.max_hops + 1))

    def _random_template(self, rng: random.Random) -> Template:
        cfg: ConvolutedTraceConfig = self.config  # type: ignore[assignment]
        n = rng.randint(cfg.min_hops, cfg.max_hops)
        etype = rng.choice(["person", "account", "event", "organization", "post", "thread"])
        start, steps = etype, []
        last: tuple[str, Direction] | None = None
        for _ in range(n):
            # never walk straight back along the edge just taken
            moves = [m for m in _MOVES[etype] if last is None or (m[0], m[1]) != (last[0], _I if last[1] is _O else _O)]
            rel, direction, etype = rng.choice(moves)
            steps.append(Step(rel, direction, target_type=etype))
            last = (rel, direction)
        return Template(start, tuple(steps))
