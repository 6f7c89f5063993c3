"""OSINT-v0 on a server, as a Gymnasium env (``OSINT-Remote-v0``) and as TRL's ``environment_factory``.

    env = gym.make("osint_gym:OSINT-Remote-v0", base_url="http://127.0.0.1:8000")
    obs, info = env.reset(seed=0, options={"task_index": 3})

    GRPOTrainer(..., environment_factory=lambda: RemoteToolEnv("http://127.0.0.1:8000"))

Both are one server session each and return what the in-process env returns (the server's
observation budget sets the observation space). `RemoteToolEnv` is `osint_gym.integrations.trl_env.OSINTToolEnv`
with its steps, reset and reward taken over the wire: the same generated tool methods.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

from osint_gym.actions import MAX_ACTION_CHARS
from osint_gym.errors import ConfigError
from osint_gym.integrations.serve.client import OSINTClient, StepTuple
from osint_gym.integrations.trl_env import OSINTToolEnv, reset_options
from osint_gym.spaces import text_space


class RemoteOSINTEnv(gym.Env[str, str]):
    """``gym.Env`` whose episodes run on an OSINT-v0 server (`osint_gym.integrations.serve`)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self, base_url: str, *, token: str | None = None, timeout: float = 30.0, render_mode: str | None = None
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.client = OSINTClient(base_url, token=token, timeout=timeout)
        self.server_state = self.client.state()
        self.observation_space = text_space(int(self.server_state["max_observation_chars"]))
        self.action_space = text_space(MAX_ACTION_CHARS)
        self._last = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        obs, info = self.client.reset(seed=seed, options=options)
        self._last = obs
        return obs, info

    def step(self, action: Any) -> StepTuple:
        result = self.client.step(action)
        self._last = result[0]
        return result

    def state(self) -> dict[str, Any]:
        """The server session's state (episode id, step count, the episode's reward so far)."""
        return self.client.state()

    def render(self) -> str | None:
        return self._last + "\n" if self.render_mode == "ansi" else None

    def close(self) -> None:
        self.client.close()
        super().close()


class RemoteToolEnv(OSINTToolEnv):
    """`OSINTToolEnv` over the wire: TRL's tool loop drives a server session (`OSINTClient.step` has
    the env's signature, so the adapter's tool methods and ``_step`` run unchanged). The server's world must
    be the one the rows' tasks belong to (its ``--benchmark``, e.g. ``v0:train``); a task from another
    world fails verification there and the reset raises `RemoteError`."""

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 30.0,
                 start_depth: int | None = None) -> None:
        super().__init__(start_depth=start_depth)
        self.client = OSINTClient(base_url, token=token, timeout=timeout)
        self.server_benchmark = self.client.state()["benchmark"]

    def reset(self, **row: Any) -> str:
        world = row.get("world")
        if world is not None and self.server_benchmark is not None and world != self.server_benchmark:
            raise ConfigError(f"this row's task belongs to {world!r}, but the server serves {self.server_benchmark!r}")
        task = json.loads(row["task"]) if isinstance(row["task"], str) else row["task"]
        options = {k: v for k, v in reset_options(row, self.start_depth).items() if k != "task_index"}
        obs, _ = self.client.reset(seed=0, options={"task": task, **options})
        self.env, self.done = self.client, False  # the client's step() is the env's: the adapter's _step drives it
        return obs

    def get_reward(self) -> float:
        """The episode's osint-gym reward as the server's env records it (unanswered: its penalties only)."""
        return 0.0 if self.env is None else float(self.client.state()["episode_reward"])
