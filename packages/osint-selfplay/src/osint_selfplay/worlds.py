"""The training worlds: many generated worlds, so that models read their context instead of
memorising the facts of one world (which would not transfer to the held-out benchmark world)."""

from __future__ import annotations

from osint_gym.world import World, WorldConfig, generate_world

TRAIN_SEED_BASE = 100_000  # benchmark worlds use seeds 1001, 2002, 3003: never reached from here


class WorldPool:
    def __init__(self, n: int, run_seed: int, config: WorldConfig | None = None) -> None:
        self.config = config or WorldConfig()
        self.seeds = [TRAIN_SEED_BASE + 1000 * run_seed + k for k in range(n)]
        self._worlds: dict[int, World] = {}

    def world(self, world_seed: int) -> World:
        if world_seed not in self._worlds:
            self._worlds[world_seed] = generate_world(self.config, world_seed)
        return self._worlds[world_seed]

    def pick(self, index: int) -> World:
        """The world of item ``index`` (round robin over the pool)."""
        return self.world(self.seeds[index % len(self.seeds)])

    def __getstate__(self) -> dict[str, object]:  # pickled without the built worlds (rebuilt on use)
        return {"config": self.config, "seeds": self.seeds, "_worlds": {}}
