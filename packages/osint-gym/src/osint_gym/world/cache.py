"""A small in-process cache of generated worlds, so many envs (and vector envs) share one."""

from __future__ import annotations

from functools import lru_cache

from osint_gym.errors import ConfigError
from osint_gym.world.config import WorldConfig, check_seed
from osint_gym.world.generate import generate_world
from osint_gym.world.graph import World


def cached_world(config: WorldConfig, seed: int) -> World:
    """``generate_world(config, seed)``, built once per process (worlds are never mutated)."""
    if not isinstance(config, WorldConfig):  # checked before the cache hashes it
        raise ConfigError(f"world_config must be a WorldConfig, got {type(config).__name__}")
    return _cached_world(config, check_seed(seed))


@lru_cache(maxsize=8)
def _cached_world(config: WorldConfig, seed: int) -> World:
    return generate_world(config, seed)
