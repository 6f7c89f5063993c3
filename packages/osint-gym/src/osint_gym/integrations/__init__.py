"""The integrations layer: OSINT-v0 for agent and training frameworks, and over the network.

Each adapter is thin (the env parses, budgets and scores; an adapter only translates) and imports its
framework only when it is imported itself. This package imports none of them, so ``import osint_gym`` and
``import osint_gym.integrations`` never import inspect_ai, verifiers, trl or fastapi.

- `osint_gym.integrations.trl_env` (no extra: it imports nothing from TRL): TRL's native tool loop,
  ``GRPOTrainer(environment_factory=OSINTToolEnv)`` with ``task_rows(...)`` as the dataset rows.
- `osint_gym.integrations.inspect_task` and `osint_gym.integrations.inspect_tools` (the ``inspect`` extra):
  the Inspect AI task ``inspect eval osint_gym/osint_v0``, found through the ``inspect_ai`` entry point in
  osint-gym's pyproject (``osint_gym = "osint_gym.integrations.inspect_task"``).
- `osint_gym.integrations.verifiers_env` (the ``verifiers`` extra): the verifiers taskset, harness and env,
  ``vf-eval osint-gym`` (and ``from osint_gym import load_environment``), through ``osint_gym.__all__``.
- `osint_gym.integrations.serve` (the ``serve`` extra for the server, ``client`` for the client): the
  FastAPI server ``osint-gym serve`` (``python -m osint_gym serve``), `OSINTClient` / `AsyncOSINTClient`,
  ``gym.make("osint_gym:OSINT-Remote-v0", base_url=...)`` and `RemoteToolEnv` (TRL's ``environment_factory``
  over the wire), and `ServerProcess` (a server as a child process).

The old paths (``osint_gym.trl_env``, ``osint_gym.serve.client``, ...) still import, as these same modules,
with a ``FutureWarning`` (`osint_gym._moved`).
"""
