"""OSINT-v0 as a network service (the optional ``serve`` extra; the core env needs none of it).

- `osint_gym.integrations.serve.protocol`: what each frame of OpenEnv's WebSocket protocol means (pure Python).
- `osint_gym.integrations.serve.app`: the FastAPI + uvicorn server (``osint-gym serve``).
- `osint_gym.integrations.serve.client`: `OSINTClient` / `AsyncOSINTClient` (needs only ``websockets``).
- `osint_gym.integrations.serve.remote`: ``gym.make("osint_gym:OSINT-Remote-v0", base_url=...)`` and TRL's
  ``environment_factory`` (`RemoteToolEnv`).

Nothing is imported here, so ``import osint_gym`` stays free of web dependencies.
"""
