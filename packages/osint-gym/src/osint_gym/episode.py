"""The episode record: everything an OSINT-v0 episode did, as the env observed it.

`OSINTEnv.episode()` returns one at any moment. Every driver (training rollouts, evaluation,
demonstrations, the demo, the TRL adapter) reads episodes through this record and never through
env internals, so the env stays the one owner of scoring: an episode that is still running, or
was cut from outside (a token budget, Gymnasium's ``TimeLimit``), is scored exactly as the env
scores its own truncation (unanswered: the penalties paid so far).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from osint_gym.reward import RewardBreakdown
from osint_gym.schema import Edge
from osint_gym.tasks.task import Task

# the action syntaxes a prompt may ask for (the env accepts both): JSON actions, or one short line per call
ACTION_FORMATS = ("json", "short")

class EndReason(StrEnum):
    """Why an episode ended (a string: it compares equal to, and is written to JSON as, its value). ANSWERED and
    STEP_BUDGET are the env's own ends; TIME_LIMIT, TOKEN_BUDGET and STOPPED are cuts made from outside the env
    (`OSINTEnv.stop`); RUNNING: not yet."""

    RUNNING = "running"
    ANSWERED = "answered"
    STEP_BUDGET = "step_budget"
    TIME_LIMIT = "time_limit"
    TOKEN_BUDGET = "token_budget"
    STOPPED = "stopped"


END_REASONS = tuple(r.value for r in EndReason)
STOP_REASONS = (EndReason.TIME_LIMIT, EndReason.TOKEN_BUDGET, EndReason.STOPPED)  # `OSINTEnv.stop`'s
_COUNTS = ("critical_steps", "tool_calls", "invalid_actions", "parse_failures", "useful_calls", "parallel_calls",
           "useful_parallel_calls")


@dataclass(frozen=True)
class Turn:
    """One step: the action as received, the observation returned, the step's reward."""

    action: str
    observation: str
    reward: float
    error: str | None  # the step's first error (parse failure, failing call), None if valid
    given: bool = False  # played by the demonstrator before the agent's first turn (a start depth), not the agent's

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        if not self.given:  # the agent's own turn: its row reads as it always did
            del out["given"]
        return out


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode: the task, every turn, the answer, the evidence graph, counts and reward.

    ``breakdown`` is final once ``ended``; while the episode runs it is what the episode would
    score if it were truncated now. ``reward`` is its total, which also equals the sum of the
    step rewards the env returned once the episode has ended.
    """

    task: Task
    first_observation: str
    turns: tuple[Turn, ...]
    answer: Any  # the submitted id (a list when several were submitted); None if unanswered
    evidence: tuple[Edge, ...]  # the working graph, in the order edges were added
    critical_steps: int
    tool_calls: int
    invalid_actions: int
    parse_failures: int
    useful_calls: int  # calls whose records the evidence or the answer used
    parallel_calls: int  # calls made as part of a parallel step
    useful_parallel_calls: int
    breakdown: RewardBreakdown
    end: EndReason
    max_steps: int
    max_parallel_calls: int
    # the first turns the demonstrator played (the env's start depth); every count above is the agent's own
    given_steps: int = 0

    @property
    def ended(self) -> bool:
        return self.end != EndReason.RUNNING

    @property
    def reward(self) -> float:
        return self.breakdown.total

    @property
    def correct(self) -> bool:
        return self.breakdown.correct

    @property
    def answered(self) -> bool:
        return self.breakdown.answered

    def counts(self) -> dict[str, int]:
        """The env-measured counts (never self-reported), as training and evaluation log them."""
        return {k: getattr(self, k) for k in _COUNTS}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the task as its own row)."""
        return {
            "task": self.task.to_dict(), "first_observation": self.first_observation,
            "turns": [t.to_dict() for t in self.turns], "answer": self.answer,
            "evidence": [list(e) for e in self.evidence], **self.counts(),
            "breakdown": self.breakdown.to_dict(), "reward": self.reward, "correct": self.correct,
            "end": self.end, "max_steps": self.max_steps, "max_parallel_calls": self.max_parallel_calls,
            **({"given_steps": self.given_steps} if self.given_steps else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodeRecord:
        """The record `to_dict` wrote (read back from a log); a malformed row raises KeyError or TypeError."""
        return cls(
            task=Task.from_dict(d["task"]),
            first_observation=d["first_observation"],
            turns=tuple(Turn(**t) for t in d["turns"]),
            answer=d["answer"],
            evidence=tuple(Edge(*e) for e in d["evidence"]),
            **{k: d[k] for k in _COUNTS},
            breakdown=RewardBreakdown(**d["breakdown"]),
            end=EndReason(d["end"]),
            max_steps=d["max_steps"],
            max_parallel_calls=d["max_parallel_calls"],
            given_steps=d.get("given_steps", 0),
        )
