"""The hidden world: generated OSINT worlds and imported knowledge graphs share one type."""

from osint_gym.world.config import WorldConfig
from osint_gym.world.generate import generate_world
from osint_gym.world.graph import World, tokenize

__all__ = ["World", "WorldConfig", "generate_world", "tokenize"]
