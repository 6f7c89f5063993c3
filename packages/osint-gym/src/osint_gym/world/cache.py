"""The one in-process cache of generated worlds, so many envs (and vector envs, and a training
run's pool of worlds) share each world instead of regenerating it."""

from __future__ import annotations

from functools import lru_cache

from osint_gym.errors import ConfigError
from osint_gym.world.config import WorldConfig, check_seed
from osint_gym.world.generate import generate_world
from osint_gym.world.graph import World

# Large enough for a training run's pool (osint-selfplay's train_worlds, 32 by default) used round
# robin: an LRU smaller than the pool would regenerate every world on every pass.
CACHE_SIZE = 256


def cached_world(config: WorldConfig, seed: int) -> World:
    """``generate_world(config, seed)``, built once per process (worlds are never mutated)."""
    if not isinstance(config, WorldConfig):  # checked before the cache hashes it
        raise ConfigError(f"world_config must be a WorldConfig, got {type(config).__name__}")
    return _cached_world(config, check_seed(seed))


@lru_cache(maxsize=CACHE_SIZE)
def _cached_world(config: WorldConfig, seed: int) -> World:
    return generate_world(config, seed)
