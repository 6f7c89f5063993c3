"""The policy interface: one pending turn (`PolicyInput`) in, one completion out (`Policy.act`, batched).

Every policy implements it: the model policies and scripted baselines of `osint_eval.policies`, the
shortcut baselines of `osint_eval.baselines` and the recorded episodes of `osint_eval.inspect_log`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from osint_gym.single_turn import Context
from osint_gym.tasks import Task
from osint_gym.world import World


@dataclass
class PolicyInput:
    """One pending turn. ``messages`` is the conversation so far; the rest is for scripted policies."""

    messages: list[dict[str, str]]
    task: Task
    world: World
    episode: int  # index of the episode in this run (stable across its turns)
    turn: int
    context: Context | None = None  # single-turn mode
    env: Any = None  # multi-turn mode: the OSINTEnv (unwrapped)
    seen: list[str] = field(default_factory=list)  # observations so far


class Policy(ABC):
    name: str = "policy"
    is_model: bool = False
    # True where a pickled copy rebuilds the policy from its reference (HFPolicy: the model is loaded
    # again, not pickled), so `osint_eval.evaluate` may run it in worker processes
    shardable: bool = False
    # per completion of the last act(): True where a model's turn hit its token limit without ending
    # (the multi-turn runner then ends that episode unanswered); scripted policies never set it
    last_unfinished: Sequence[bool] = ()

    @abstractmethod
    def act(self, batch: list[PolicyInput]) -> list[str]:
        """One completion per input, in order."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": type(self).__name__}

    def recorded(self, tasks: list[Task], mode: str) -> list[Any] | None:
        """Episodes of ``tasks`` played elsewhere (`osint_eval.inspect_log`), or None: the runner plays them."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook
        pass
