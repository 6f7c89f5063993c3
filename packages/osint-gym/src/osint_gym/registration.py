"""All OSINT environment ids, registered in one place (idempotently)."""

from __future__ import annotations

import gymnasium as gym

ENV_IDS: dict[str, dict[str, object]] = {
    "OSINT-v0": {},
    "OSINT-Easy-v0": {"difficulty": "easy"},
    "OSINT-Medium-v0": {"difficulty": "medium"},
    "OSINT-Hard-v0": {"difficulty": "hard"},
}


def register_envs() -> None:
    for env_id, kwargs in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="osint_gym.env:OSINTEnv", kwargs=dict(kwargs))
