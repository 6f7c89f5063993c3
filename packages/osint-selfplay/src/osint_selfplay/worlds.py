"""The training worlds: many generated worlds, so that models read their context instead of
memorising the facts of one world (which would not transfer to the held-out benchmark world)."""

from __future__ import annotations

from typing import Any

from osint_gym.benchmark import BENCHMARKS
from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world
from osint_selfplay.streams import WORLDS, stream_seed

# Training world seeds are drawn from the run's `train_worlds` stream above this base; the
# benchmark worlds use seeds 1001, 2002, 3003, 4004, below it, so a training world is never one of them.
TRAIN_SEED_BASE = 100_000


class WorldPool:
    """The run's training worlds, built on first use through osint-gym's one world cache. ``minimal_constraints``:
    tasks sampled on them keep only the filters their answer needs (`osint_gym.tasks.TaskSampler`)."""

    def __init__(self, n: int, run_seed: int, config: WorldConfig | None = None,
                 minimal_constraints: bool = False) -> None:
        self.config = config or WorldConfig()
        self.minimal_constraints = minimal_constraints
        self.seeds = [TRAIN_SEED_BASE + stream_seed(run_seed, WORLDS, k, bits=30) for k in range(n)]

    @classmethod
    def for_run(cls, cfg: Any) -> WorldPool:
        """A run config's pool (`RunConfig`): ``train_worlds`` worlds with the world settings and task rules of the
        benchmark version ``train_world`` (v2: near-miss decoys, minimal constraints), on seeds of their own."""
        spec = BENCHMARKS[cfg.train_world]
        return cls(cfg.train_worlds, cfg.seed, spec.world_config, spec.minimal_constraints)

    def world(self, world_seed: int) -> World:
        return cached_world(self.config, world_seed)

    def pick(self, index: int) -> World:
        """The world of item ``index`` (round robin over the pool)."""
        return self.world(self.seeds[index % len(self.seeds)])
