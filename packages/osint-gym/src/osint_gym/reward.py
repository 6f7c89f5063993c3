"""Reward: pure functions of what the env observed (never of what the agent claims about itself).

Episode return::

    R = correct * (w_answer + w_efficiency * efficiency) + w_evidence * F1(evidence, gold) - penalties

* ``correct``: the submitted id equals a gold answer exactly (no case folding or prefix matching).
* ``F1``: the agent's working evidence graph against the gold evidence edges. ``add_edge`` only
  accepts edges shown by records the agent retrieved, so F1 cannot be earned by guessing.
* ``efficiency = 1 - (critical_steps - 1) / max_steps``: fewer sequential steps score higher.
* ``penalties``: ``invalid_action_penalty`` per malformed or failing action (paid at that step,
  capped at ``penalty_cap``) plus ``multi_candidate_penalty`` for answering with several ids.
* No answer (budget exhausted): only the penalties.

Defaults: w_answer 1.0, w_evidence 0.3, w_efficiency 0.2, invalid 0.02, cap 0.2, multi 0.1, so
R lies in [-0.3, 1.5]; any correct answer scores at least 0.8 and any wrong one at most 0.3.
Non-answer steps earn nothing but penalties, so no sequence of them beats answering correctly.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from osint_gym.errors import ConfigError, from_table
from osint_gym.schema import Edge, canonical_edge

_SEPARATORS = re.compile(r"\s*(?:,|;|\||\s+or\s+|\s+and\s+|\s*/\s*)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class RewardConfig:
    correct: float = 1.0
    evidence_weight: float = 0.3
    efficiency_weight: float = 0.2
    invalid_action_penalty: float = 0.02
    penalty_cap: float = 0.2
    multi_candidate_penalty: float = 0.1

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"RewardConfig.{f.name} must be a number >= 0, got {value!r}")
        # The ordering every user relies on: a correct answer with no evidence and the worst
        # penalties still beats a wrong answer with perfect evidence and no penalties.
        if self.correct - self.penalty_cap <= self.evidence_weight:
            raise ConfigError(
                "RewardConfig needs correct - penalty_cap > evidence_weight "
                f"(got {self.correct} - {self.penalty_cap} <= {self.evidence_weight}); "
                "raise `correct` or lower `penalty_cap` / `evidence_weight`"
            )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RewardConfig:
        return from_table(cls, data, "reward config")

    @property
    def bounds(self) -> tuple[float, float]:
        return (-(self.penalty_cap + self.multi_candidate_penalty), self.correct + self.evidence_weight + self.efficiency_weight)


@dataclass(frozen=True)
class RewardBreakdown:
    answered: bool
    correct: bool
    multiple_candidates: bool
    evidence_precision: float
    evidence_recall: float
    evidence_f1: float
    answer: float
    evidence: float
    efficiency: float
    penalty: float  # <= 0
    total: float

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def split_candidates(submitted: Any) -> list[str]:
    """The ids an answer names: a list's items, or a string's parts if it lists several."""
    if isinstance(submitted, (list, tuple)):
        return [str(s) for s in submitted]
    if not isinstance(submitted, str):
        return [] if submitted is None else [str(submitted)]
    parts = [p for p in _SEPARATORS.split(submitted) if p]
    return parts if len(parts) > 1 else [submitted]


def judge_answer(submitted: Any, gold: Iterable[str]) -> tuple[bool, bool]:
    """(correct, several_candidates). Exact id match; a list of candidates is never correct."""
    gold_set = set(gold)
    if isinstance(submitted, str) and submitted in gold_set:  # e.g. a KG name containing " and "
        return True, False
    candidates = split_candidates(submitted)
    if len(candidates) > 1:
        return False, True
    return bool(candidates) and candidates[0] in gold_set, False


def evidence_scores(predicted: Iterable[Edge | tuple[str, str, str]], gold: Iterable[Edge | tuple[str, str, str]]) -> tuple[float, float, float]:
    """(precision, recall, F1) of predicted edges against gold; symmetric relations unordered."""
    pred = {canonical_edge(e) for e in predicted}
    ref = {canonical_edge(e) for e in gold}
    if not pred or not ref:
        return 0.0, 0.0, 0.0
    hit = len(pred & ref)
    precision, recall = hit / len(pred), hit / len(ref)
    f1 = 0.0 if hit == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def efficiency(critical_steps: int, max_steps: int) -> float:
    if max_steps <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - (critical_steps - 1) / max_steps))


def step_penalty(invalid: bool, paid_so_far: float, cfg: RewardConfig) -> float:
    """The (non-positive) reward of a non-answer step: a penalty if invalid, until the cap."""
    if not invalid:
        return 0.0
    return -min(cfg.invalid_action_penalty, max(0.0, cfg.penalty_cap - paid_so_far))


def score_episode(
    *,
    gold_answers: Iterable[str],
    gold_evidence: Iterable[Edge | tuple[str, str, str]],
    submitted: Any,
    evidence: Iterable[Edge | tuple[str, str, str]] = (),
    critical_steps: int = 1,
    max_steps: int = 1,
    penalties_paid: float = 0.0,
    cfg: RewardConfig | None = None,
) -> RewardBreakdown:
    """The whole-episode reward and its parts. ``submitted=None`` means the agent never answered."""
    cfg = cfg or RewardConfig()
    answered = submitted is not None
    correct, multiple = judge_answer(submitted, gold_answers) if answered else (False, False)
    p, r, f1 = evidence_scores(evidence, gold_evidence) if answered else (0.0, 0.0, 0.0)
    answer_part = cfg.correct if correct else 0.0
    evidence_part = cfg.evidence_weight * f1
    efficiency_part = cfg.efficiency_weight * efficiency(critical_steps, max_steps) if correct else 0.0
    penalty = -(min(penalties_paid, cfg.penalty_cap) + (cfg.multi_candidate_penalty if multiple else 0.0))
    total = answer_part + evidence_part + efficiency_part + penalty
    return RewardBreakdown(answered, correct, multiple, p, r, f1, answer_part, evidence_part, efficiency_part, penalty, total)
