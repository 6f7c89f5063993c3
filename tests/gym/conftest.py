from __future__ import annotations

import pytest

from osint_gym.world import WorldConfig
from osint_gym.world.cache import cached_world


@pytest.fixture(scope="session")
def world():
    """The embedded default world (seed 0)."""
    return cached_world(WorldConfig(), 0)


@pytest.fixture(scope="session")
def clean_world():
    """A world with every adversarial knob off."""
    return cached_world(WorldConfig.clean(n_people=120), 5)
