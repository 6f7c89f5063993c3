"""A small in-process cache of generated worlds, so many envs (and vector envs) share one."""

from __future__ import annotations

from functools import lru_cache

from osint_gym.world.config import WorldConfig
from osint_gym.world.generate import generate_world
from osint_gym.world.graph import World


@lru_cache(maxsize=8)
def cached_world(config: WorldConfig, seed: int) -> World:
    """``generate_world(config, seed)``, built once per process (worlds are never mutated)."""
    return generate_world(config, seed)
