"""All OSINT environment ids, registered in one place (idempotently)."""

from __future__ import annotations

import gymnasium as gym

ENV_IDS: dict[str, dict[str, object]] = {
    "OSINT-v0": {},
    "OSINT-Easy-v0": {"difficulty": "easy"},
    "OSINT-Medium-v0": {"difficulty": "medium"},
    "OSINT-Hard-v0": {"difficulty": "hard"},
}


# OSINT-v0 on a server (`osint_gym.integrations.serve`):
# gym.make("osint_gym:OSINT-Remote-v0", base_url="http://127.0.0.1:8000")
REMOTE_ENV_ID = "OSINT-Remote-v0"


def register_envs() -> None:
    for env_id, kwargs in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="osint_gym.env:OSINTEnv", kwargs=dict(kwargs))
    if REMOTE_ENV_ID not in gym.registry:  # the entry point is imported by gym.make only, so no web import here
        gym.register(id=REMOTE_ENV_ID, entry_point="osint_gym.integrations.serve.remote:RemoteOSINTEnv")
