"""The one episode loop every driver uses, and the agent protocols it drives.

`run_episodes` steps a batch of envs in lock step (one `BatchAgent.act` call per turn, so a model
generates all pending turns together) and returns each env's `EpisodeRecord`; `run_episode` is the
same loop for one env and one per-episode `Agent`. Training rollouts, evaluation, demonstrations,
the demo and the TRL adapter all run episodes through these: none of them re-scores an episode or
reads env internals. An agent that returns ``None`` instead of an action stops its episode (a
token budget ran out), which the env scores as its own truncation.

The tool-only oracle (`OracleAgent`, `unseen_ids`) lives in `osint_gym.oracle_agent` and is importable from here
as before; `oracle_continuation` (the oracle as a teacher on another agent's state) is here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import gymnasium as gym

from osint_gym.env import OSINTEnv
from osint_gym.episode import ACTION_FORMATS, EndReason, EpisodeRecord
from osint_gym.errors import ConfigError
from osint_gym.oracle_agent import OracleAgent, read_observation, unseen_ids

__all__ = ["ACTION_FORMATS", "Agent", "BatchAgent", "OracleAgent", "PerEpisode", "oracle_continuation",
           "read_observation", "run_episode", "run_episodes", "unseen_ids"]


class Agent(Protocol):
    """A per-episode policy: ``reset`` at the start of each episode, then one ``act`` per turn."""

    def reset(self, env: OSINTEnv, observation: str, info: dict[str, Any]) -> None: ...

    def act(self, observation: str) -> str | None: ...


class BatchAgent(Protocol):
    """A policy over many episodes at once (for batched generation)."""

    def reset(self, index: int, env: OSINTEnv, observation: str, info: dict[str, Any]) -> None: ...

    def act(self, pending: list[tuple[int, str]]) -> list[str | None]:
        """One action (or None: stop that episode) per (episode index, latest observation)."""
        ...


class PerEpisode:
    """A `BatchAgent` made of one `Agent` per episode, built by ``factory``."""

    def __init__(self, factory: Callable[[], Agent]) -> None:
        self.factory = factory
        self.agents: dict[int, Agent] = {}

    def reset(self, index: int, env: OSINTEnv, observation: str, info: dict[str, Any]) -> None:
        self.agents[index] = agent = self.factory()
        agent.reset(env, observation, info)

    def act(self, pending: list[tuple[int, str]]) -> list[str | None]:
        return [self.agents[i].act(obs) for i, obs in pending]


def run_episodes(
    envs: Sequence[gym.Env[str, str]],
    agent: BatchAgent,
    *,
    seeds: Sequence[int | None] | None = None,
    options: Sequence[dict[str, Any] | None] | None = None,
    on_end: Callable[[int, EpisodeRecord], None] | None = None,
    max_active: int | None = None,
) -> list[EpisodeRecord]:
    """Reset every env (with ``seeds[i]`` / ``options[i]``), then step all running episodes together
    until each ends; return their records in order. ``on_end(i, record)`` is called as each ends.

    ``max_active``: at most this many episodes run at once; the next env is reset as soon as one
    ends, so every ``agent.act`` batch stays full (episode-level continuous batching: a model's
    batch is not held up by a few long episodes while most slots sit idle). Records, seeds and
    options keep the envs' order either way."""
    n = len(envs)
    for name, given in (("seeds", seeds), ("options", options)):
        if given is not None and len(given) != n:
            raise ConfigError(f"run_episodes: {name} has {len(given)} entries for {n} envs")
    if max_active is not None and max_active < 1:
        raise ConfigError(f"run_episodes: max_active must be >= 1, got {max_active}")
    cores = [e.unwrapped for e in envs]
    if not all(isinstance(c, OSINTEnv) for c in cores):
        raise ConfigError("run_episodes drives OSINT-v0 envs (OSINTEnv, possibly wrapped)")
    records: list[EpisodeRecord | None] = [None] * n
    latest: dict[int, str] = {}
    queued = iter(range(n))

    def fill() -> None:  # reset queued envs into the free slots
        while (max_active is None or len(latest) < max_active) and (i := next(queued, None)) is not None:
            obs, info = envs[i].reset(seed=seeds[i] if seeds else None, options=options[i] if options else None)
            agent.reset(i, cores[i], obs, info)  # type: ignore[arg-type]
            latest[i] = obs

    fill()
    while latest:
        pending = list(latest.items())
        actions = agent.act(pending)
        if len(actions) != len(pending):
            raise ConfigError(f"agent returned {len(actions)} actions for {len(pending)} pending episodes")
        for (i, _), action in zip(pending, actions):
            core: OSINTEnv = cores[i]  # type: ignore[assignment]
            if action is None:
                record = core.stop(EndReason.TOKEN_BUDGET)
            else:
                obs, _, terminated, truncated, _ = envs[i].step(action)
                if not (terminated or truncated):
                    latest[i] = obs
                    continue
                # a wrapper's TimeLimit may truncate an episode the env itself still runs
                record = core.episode()
                if not record.ended:
                    record = core.stop(EndReason.TIME_LIMIT)
            records[i] = record
            del latest[i]
            if on_end is not None:
                on_end(i, record)
        fill()
    return [r for r in records if r is not None]


def run_episode(env: gym.Env[str, str], agent: Agent, *, seed: int | None = None,
                options: dict[str, Any] | None = None) -> EpisodeRecord:
    """One episode of ``agent`` in ``env`` (reset with ``seed`` / ``options``): its record."""
    return run_episodes([env], PerEpisode(lambda: agent), seeds=[seed], options=[options])[0]


def oracle_continuation(env: OSINTEnv, actions: Sequence[str], *, action_format: str = "short",
                        seed: int | None = 0, options: dict[str, Any] | None = None) -> EpisodeRecord | None:
    """The episode in which another agent took ``actions`` and the demonstrator (`OracleAgent` with
    ``names_first``) then continued from the state they reached, within the step budget left: the
    oracle as a teacher on a student's own state (DAgger-style expert relabelling). The teacher
    treats what the student already read as read (``history``), so it does not fetch it again.
    ``None`` when the student's actions already ended the episode (nothing is left to continue).
    The record's first ``len(actions)`` turns are the student's; whether the continuation is correct
    and uses only ids the agent had seen is the caller's check (``record.correct``, `unseen_ids`)."""
    first, info = env.reset(seed=seed, options=options)
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return None
    history = env.episode().turns
    teacher = OracleAgent(action_format, names_first=True)
    teacher.reset(env, first, info, history=history)
    observation = history[-1].observation if history else first
    while True:
        observation, _, terminated, truncated, _ = env.step(teacher.act(observation))
        if terminated or truncated:
            return env.episode()
