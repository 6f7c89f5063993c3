import gymnasium as gym

import osint_gym  # noqa: F401


def test_make_and_reset():
    env = gym.make("OSINT-v0")
    obs, info = env.reset(seed=0)
    assert "Investigate with tools" in obs
    assert info["tools"]
