"""What OSINT-v0's network frames mean: OpenEnv's WebSocket protocol over one env per session.

Pure Python, no web framework: the server (`osint_gym.integrations.serve.app`) only moves frames; this module
decides what each one means, so tests can drive it directly as well as over the wire.

Client frames (JSON text, as OpenEnv's ``EnvClient`` sends them)::

    {"type": "reset", "data": {"seed": 3, "options": {"task_index": 7}, "episode_id": "mine-1"}}
    {"type": "step",  "data": {"action": "get_profile @lina_brandt"}}      # any action the env accepts
    {"type": "state"}
    {"type": "close"}

Server frames::

    {"type": "observation", "data": {"observation": {"text": ..., "terminated": ..., "truncated": ..., "info": {...}},
                                     "reward": 0.0 | null on reset, "done": false}}
    {"type": "state", "data": {"session_id": ..., "episode_id": ..., "step_count": ..., ...}}
    {"type": "error", "data": {"message": "one line", "code": "VALIDATION_ERROR"}}

Every frame gets exactly one reply; a bad frame gets an ``error`` reply and the session goes on.
The observation text, reward and flags are the in-process env's, byte for byte. Nothing here reads
a session other than the one the frame arrived on: a session is its connection, and its id is
only ever reported to that connection.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from osint_gym.env import OSINTEnv
from osint_gym.errors import ConfigError, OSINTGymError

# OpenEnv's error codes (openenv.core.env_server.types.WSErrorCode), then the limits' own
INVALID_JSON, UNKNOWN_TYPE, VALIDATION_ERROR = "INVALID_JSON", "UNKNOWN_TYPE", "VALIDATION_ERROR"
EXECUTION_ERROR, CAPACITY_REACHED, SESSION_ERROR = "EXECUTION_ERROR", "CAPACITY_REACHED", "SESSION_ERROR"
RATE_LIMITED, MESSAGE_TOO_LARGE, UNAUTHORIZED, IDLE_TIMEOUT = (
    "RATE_LIMITED",
    "MESSAGE_TOO_LARGE",
    "UNAUTHORIZED",
    "IDLE_TIMEOUT",
)
INTERNAL_ERROR = "INTERNAL_ERROR"  # a bug in osint-gym: counted in /health, never expected

ENV_KEYS = ("max_steps", "max_parallel_calls", "max_observation_chars", "observation_format", "describe_tools",
            "start_depth", "action_format")
_RESET_KEYS = ("seed", "options", "episode_id")


@dataclass(frozen=True)
class ServeSettings:
    """One server: the world and tasks its sessions play, the env budgets, and the limits."""

    benchmark: str | None = "v0:test"  # a benchmark split; None: sampled tasks on the world below
    world_config: dict[str, Any] | None = None
    seed: int = 0
    env: dict[str, Any] = field(default_factory=dict)  # OSINTEnv keyword arguments (ENV_KEYS)
    max_sessions: int = 512
    idle_timeout_s: float = 300.0
    max_message_bytes: int = 65536
    rate_per_session: float = 500.0  # frames per second, a token bucket of 2 s of burst
    token: str | None = None  # bearer token; None: no auth

    def __post_init__(self) -> None:
        unknown = sorted(set(self.env) - set(ENV_KEYS))
        if unknown:
            raise ConfigError(f"unknown env setting(s) {unknown}; known: {', '.join(ENV_KEYS)}")
        if self.benchmark is not None and self.world_config is not None:
            raise ConfigError("a benchmark fixes its world: give a benchmark or a world config, not both")
        for name, low in (("max_sessions", 1), ("max_message_bytes", 256)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")
        for name in ("idle_timeout_s", "rate_per_session"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
        if self.token is not None and (not isinstance(self.token, str) or len(self.token) < 8):
            raise ConfigError("the bearer token must be a string of at least 8 characters")

    def env_factory(self) -> Callable[[], OSINTEnv]:
        """Builds the world and verifies the tasks under these budgets once; each call is then a fresh
        env on them (stamped tasks are not verified again): a session costs milliseconds. A session on sampled
        tasks generates its world from the config (the process's world cache holds it), so that its reset frames
        may set the world knobs (`osint_gym.knobs`) as well as hops."""
        if self.benchmark is not None:
            first = OSINTEnv(benchmark=self.benchmark, **self.env)
            world, tasks = first.world, first.tasks
            return lambda: OSINTEnv(world=world, tasks=tasks, **self.env)
        OSINTEnv(seed=self.seed, world_config=self.world_config, **self.env)  # builds the world; bad settings fail now
        return lambda: OSINTEnv(seed=self.seed, world_config=self.world_config, **self.env)


class CapacityError(OSINTGymError):
    """Every session slot is taken."""


def error(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "data": {"message": " ".join(str(message).split())[:500], "code": code}}


class Session:
    """One client's episode: its own env, a frame budget, and the time it was last heard from."""

    def __init__(self, env: OSINTEnv, settings: ServeSettings, now: float) -> None:
        self.id = secrets.token_urlsafe(24)  # 192 random bits: never guessable, never reused
        self.env, self.settings = env, settings
        self.episode_id: str | None = None
        self.started = False  # a reset has succeeded; the episode's counts are the env's record
        self.last_active = now
        self._tokens, self._stamp = 2.0 * settings.rate_per_session, now
        self.internal_errors = 0

    # -------------------------------------------------------------- limits
    def _allow(self, now: float) -> bool:
        rate = self.settings.rate_per_session
        self._tokens = min(2.0 * rate, self._tokens + (now - self._stamp) * rate)
        self._stamp = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def handle(self, raw: str | bytes | None, now: float) -> tuple[dict[str, Any], bool]:
        """(reply, close the session): the meaning of one frame."""
        self.last_active = now
        if raw is None:
            return error(VALIDATION_ERROR, "empty frame"), False
        if len(raw) > self.settings.max_message_bytes:
            return error(
                MESSAGE_TOO_LARGE, f"frame of {len(raw)} bytes; the limit is {self.settings.max_message_bytes}"
            ), False
        if not self._allow(now):
            return error(
                RATE_LIMITED, f"more than {self.settings.rate_per_session:g} frames per second; slow down"
            ), False
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            return error(INVALID_JSON, f"invalid JSON: {exc}"), False
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            return error(VALIDATION_ERROR, 'a frame is a JSON object with a string "type"'), False
        kind, data = message["type"], message.get("data", {})
        if kind == "close":
            return {"type": "closed", "data": {}}, True
        handler = _HANDLERS.get(kind)
        if handler is None:
            return error(UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}; known: reset, step, state, close"), False
        if data is None:
            data = {}
        if not isinstance(data, dict):
            return error(VALIDATION_ERROR, f'"data" must be an object, got {type(data).__name__}'), False
        try:
            return handler(self, data), False
        except Exception as exc:  # a bug, not bad input: reported, counted, and the session goes on
            self.internal_errors += 1
            return error(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"), False

    # -------------------------------------------------------------- messages
    def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(data) - set(_RESET_KEYS))
        if unknown:
            return error(VALIDATION_ERROR, f"unknown reset field(s) {unknown}; known: {', '.join(_RESET_KEYS)}")
        seed, options, episode_id = data.get("seed"), data.get("options"), data.get("episode_id")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
            return error(VALIDATION_ERROR, f"seed must be an integer in [0, 2**63) or null, got {seed!r:.60}")
        if options is not None and not isinstance(options, dict):
            return error(VALIDATION_ERROR, f"options must be an object or null, got {type(options).__name__}")
        if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > 128):
            return error(VALIDATION_ERROR, "episode_id must be a string of at most 128 characters")
        try:
            text, info = self.env.reset(seed=seed, options=options)
        except (OSINTGymError, ValueError, TypeError, KeyError) as exc:  # a bad seed, task dict or option
            return error(VALIDATION_ERROR, str(exc) or type(exc).__name__)
        self.episode_id = episode_id or secrets.token_urlsafe(12)
        self.started = True
        return _observation(text, None, False, False, info)

    def step(self, data: dict[str, Any]) -> dict[str, Any]:
        if not self.started:
            return error(SESSION_ERROR, "no episode in this session yet: send a reset frame first")
        if set(data) != {"action"}:
            return error(VALIDATION_ERROR, 'a step frame\'s data is {"action": <text or object>}')
        action = data["action"]
        if not isinstance(action, (str, dict, list)):
            return error(VALIDATION_ERROR, f"action must be text or a JSON object/list, got {type(action).__name__}")
        return _observation(*self.env.step(action))  # the env answers any action

    def state(self, data: dict[str, Any]) -> dict[str, Any]:
        env = self.env
        record = env.episode() if self.started else None
        task = record.task if record else None
        return {"type": "state", "data": {
            "session_id": self.id, "episode_id": self.episode_id, "step_count": record.critical_steps if record else 0,
            "done": record is not None and record.end != "running",
            "task_id": task.task_id if task else None, "family": task.family if task else None,
            "difficulty": task.difficulty if task else None,
            "episode_reward": float(record.reward) if record else None,
            "max_steps": env.max_steps, "max_parallel_calls": env.max_parallel_calls,
            "max_observation_chars": env.max_observation_chars, "observation_format": env.observation_format,
            "benchmark": self.settings.benchmark,
        }}


def _observation(
    text: str, reward: float | None, terminated: bool, truncated: bool, info: dict[str, Any]
) -> dict[str, Any]:
    return {"type": "observation", "data": {
        "observation": {"text": text, "terminated": terminated, "truncated": truncated, "info": info},
        "reward": reward, "done": bool(terminated or truncated)}}


_HANDLERS: dict[str, Callable[[Session, dict[str, Any]], dict[str, Any]]] = {
    "reset": Session.reset, "step": Session.step, "state": Session.state,
}


class SessionManager:
    """The server's sessions by id, capped at ``max_sessions``; idle ones are found for the reaper."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.sessions: dict[str, Session] = {}
        self.internal_errors = 0  # from closed sessions; live ones count their own
        self.make_env = settings.env_factory()  # now: a bad setting fails at start-up, not at the first client

    def open(self, now: float) -> Session:
        if len(self.sessions) >= self.settings.max_sessions:
            raise CapacityError(f"all {self.settings.max_sessions} sessions are in use; try again later")
        session = Session(self.make_env(), self.settings, now)
        self.sessions[session.id] = session
        return session

    def close(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.internal_errors += session.internal_errors

    def idle(self, now: float) -> list[str]:
        return [sid for sid, s in self.sessions.items() if now - s.last_active > self.settings.idle_timeout_s]

    def health(self) -> dict[str, Any]:
        return {"status": "healthy", "active_sessions": len(self.sessions), "max_sessions": self.settings.max_sessions,
                "internal_errors": self.internal_errors + sum(s.internal_errors for s in self.sessions.values())}
