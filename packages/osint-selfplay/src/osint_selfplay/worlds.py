"""The training worlds: many generated worlds, so that models read their context instead of
memorising the facts of one world (which would not transfer to the held-out benchmark world)."""

from __future__ import annotations

from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world
from osint_selfplay.streams import WORLDS, stream_seed

# Training world seeds are drawn from the run's `train_worlds` stream above this base; the
# benchmark worlds use seeds 1001, 2002, 3003, 4004, below it, so a training world is never one of them.
TRAIN_SEED_BASE = 100_000


class WorldPool:
    """The run's training worlds, built on first use through osint-gym's one world cache."""

    def __init__(self, n: int, run_seed: int, config: WorldConfig | None = None) -> None:
        self.config = config or WorldConfig()
        self.seeds = [TRAIN_SEED_BASE + stream_seed(run_seed, WORLDS, k, bits=30) for k in range(n)]

    def world(self, world_seed: int) -> World:
        return cached_world(self.config, world_seed)

    def pick(self, index: int) -> World:
        """The world of item ``index`` (round robin over the pool)."""
        return self.world(self.seeds[index % len(self.seeds)])
