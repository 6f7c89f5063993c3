"""Rungs: an episode that starts part-way through, after the demonstrator's first k steps (the env's start depth).

A task of K demonstrator steps has K rungs, k = 0 .. K-1 given steps (K - k steps left to the answer): near the
end the answer is one step away, at k = 0 the agent plays the whole episode. The demonstrator is the tool-only
oracle that looks every name the question shows up first (``OracleAgent(names_first=True)``), so no given action
uses an id the agent could not have seen, and its turns are played through the env's own ``step``: the given
observations are exactly what those tool calls return, the env's state, step count and remaining budget real
(reverse curricula from demonstrations, R3 arXiv 2402.05808; partial-solution hints, QuestA arXiv 2507.13266).

This module holds what the env needs of the demonstrator; `osint_gym.env.OSINTEnv` plays the given turns itself
(``reset(options={"start_depth": k})``) and marks them given in its episode record. ``rung_mode="hint"`` serves the
same rung as a partial solution instead: the first k actions are shown after the question and the agent plays them
itself (QuestA, arXiv 2507.13266).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from osint_gym.episode import Turn
from osint_gym.errors import ConfigError, TaskError
from osint_gym.oracle_agent import OracleAgent
from osint_gym.tasks.task import Task

RUNG_MODES = ("given", "hint")  # how a rung is served: its first steps played for the agent, or only shown to it


@dataclass(frozen=True)
class Given:
    """The env's counts when the agent's first turn begins: all zero, or what a start depth's given steps used (the
    agent is scored on what it does after them)."""

    steps: int = 0
    tool_calls: int = 0
    invalid: int = 0
    parse_failures: int = 0
    penalty_paid: float = 0.0
    calls: int = 0  # entries of the env's call log


def demonstration(make_env: Callable[[], Any], action_format: str) -> tuple[str, ...]:
    """The demonstrator's actions on the one task of a fresh env (``make_env()``, served at depth 0), through to
    its answer; a `TaskError` if it does not answer correctly within the env's budgets."""
    env = make_env()
    observation, info = env.reset(seed=0, options={"task_index": 0})
    agent = OracleAgent(action_format, names_first=True)
    agent.reset(env, observation, info)
    actions: list[str] = []
    while True:
        actions.append(agent.act(observation))
        observation, _, terminated, truncated, _ = env.step(actions[-1])
        if terminated or truncated:
            break
    record = env.episode()
    if not record.correct:
        raise TaskError(f"task {record.task.task_id!r}: the demonstrator does not solve it under these budgets "
                        f"(it ended {record.end.value} after {len(actions)} steps), so it has no rungs")
    return tuple(actions)


def check_depth(depth: Any, steps: int, task: Task) -> int:
    """``depth`` as a valid start depth of ``task``, whose demonstration takes ``steps`` steps: 0 .. steps - 1 (at
    least the answer is left to the agent); a one-line `ConfigError` otherwise."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= steps - 1:
        raise ConfigError(f"start_depth must be an integer in [0, {steps - 1}] for task {task.task_id!r} (its "
                          f"demonstration takes {steps} steps and the agent plays at least the last); got {depth!r}")
    return depth


def planned(task: Task | None) -> Task:
    """``task`` if the oracle has a plan for it (a structured query); a one-line `ConfigError` otherwise."""
    if task is None:
        raise ConfigError("no episode yet: call reset() first")
    if task.query is None:
        raise no_plan(task)
    return task


def no_plan(task: Task) -> ConfigError:
    """The error of a start depth asked of a task the oracle has no plan for."""
    return ConfigError(f"start_depth needs a task with a structured query (the oracle's plan); task "
                       f"{task.task_id!r} has none (an imported question): serve it from depth 0")


def given_text(opening: str, turns: Sequence[Turn]) -> str:
    """The reset observation of an episode that starts after ``turns`` (the given ones): the opening (the question,
    and the tools where the env describes them), then each given action after ``> `` and the observation it got."""
    parts = [opening]
    for turn in turns:
        parts += [f"> {turn.action}", turn.observation]
    return "\n".join(parts)


def hint_text(opening: str, actions: Sequence[str]) -> str:
    """The reset observation of a rung served as a hint (``rung_mode="hint"``): the opening, then the demonstrator's
    first actions, each after ``hint> ``, which the agent still has to play itself (QuestA, arXiv 2507.13266)."""
    return "\n".join([opening, *(f"hint> {a}" for a in actions)])


def given_info(opening: str, turns: Sequence[Turn]) -> dict[str, Any]:
    """What a reset at a start depth adds to ``info``: the depth, the opening without the given turns, and each given
    turn's action and observation (`osint_gym.spec.EpisodeSpec.start_messages` builds the conversation from them)."""
    return {"start_depth": len(turns), "opening": opening,
            "given_turns": [{"action": t.action, "observation": t.observation} for t in turns]}


def check_tasks(make_env: Callable[[Task], Any], tasks: Sequence[Task], depth: int | None) -> None:
    """One-line `ConfigError` unless every task has a rung at ``depth`` (its demonstration is longer than ``depth``)
    in the env ``make_env(task)`` builds (served at depth 0): what an adapter checks before it serves a split at a
    start depth."""
    if not depth:
        return
    for task in tasks:
        if task.query is None:
            raise no_plan(task)
        env = make_env(task)
        env.reset(seed=0, options={"task_index": 0})
        check_depth(depth, len(env.demonstration()), task)
