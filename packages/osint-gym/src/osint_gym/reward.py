"""Reward: pure functions of what the env observed (never of what the agent claims about itself).

Episode return::

    R = correct * (w_answer + w_efficiency * efficiency) + w_evidence * F1(evidence, gold) - penalties

* ``correct``: the submission names exactly one candidate and it equals a gold answer exactly (no
  case folding or prefix matching); see "Answers" below.
* ``F1``: the agent's working evidence graph against the gold evidence edges. ``add_edge`` only
  accepts edges shown by records the agent retrieved, so F1 cannot be earned by guessing.
* ``efficiency = 1 - (critical_steps - 1) / max_steps``: fewer sequential steps score higher.
* ``penalties``: ``invalid_action_penalty`` per malformed or failing action (paid at that step,
  capped at ``penalty_cap``) plus ``multi_candidate_penalty`` for answering with several ids.
* No answer (budget exhausted): only the penalties.

Defaults: w_answer 1.0, w_evidence 0.3, w_efficiency 0.2, invalid 0.02, cap 0.2, multi 0.1, so
R lies in [-0.3, 1.5]; any correct answer scores at least 0.8 and any wrong one at most 0.3.
Non-answer steps earn nothing but penalties, so no sequence of them beats answering correctly.

Answers (`judge_answer`, `split_candidates`): what a submission names, decided in this order.

1. A list names one candidate per item (each item read as a string by rules 2-4), so a list
   of several items is several candidates.
2. A string that exactly equals a gold answer, or an entity of ``known`` (the world: an id, a
   handle, or a name; in a knowledge graph an entity's id is its name), is one candidate, separators
   and all: ``"Sleep, My Love"`` and ``"Simon and Garfunkel"`` are one entity each.
3. Otherwise, a labelled answer: if a line starts with ``Answer:`` / ``Final answer:`` (``=`` works
   too, any case), the answer is the text after the first such label up to the end of its line (or
   on the next line after a bare ``Answer:``), stripped; the other lines (reasoning, cited
   evidence) are not part of it, and rules 2 and 4 apply to it. ``"Answer: person_12\n<prose>"``
   names ``person_12``.
4. Otherwise every separator counts: commas, semicolons, ``|``, ``/``, the words ``or`` / ``and``,
   and any whitespace, newlines included. Several parts are several candidates (``person_1
   person_2`` pays the penalty that ``person_1, person_2`` pays); one part is judged as the whole
   string, unchanged (``" person_2"`` is not ``person_2``); an empty string names none.

Several candidates are never correct and pay ``multi_candidate_penalty`` once. The env's ``answer``
action (its ``entity_id`` string or list) and single-turn completions (`osint_gym.single_turn`)
are judged by these rules.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Any

from osint_gym.errors import ConfigError, from_table
from osint_gym.schema import Edge, canonical_edge
from osint_gym.world.graph import World

# "Answer:" at the start of a line; the answer is the rest of that line (or the next, after "Answer:\n")
_LABEL = re.compile(r"^[ \t]*(?:final[ \t]+)?answer[ \t]*[:=]\s*([^\n]*)", re.IGNORECASE | re.MULTILINE)
_SEPARATORS = re.compile(r"\s*(?:[,;|/]|\s(?:or|and)\s)\s*|\s+", re.IGNORECASE)


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
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ConfigError(f"RewardConfig.{f.name} must be a number >= 0 and finite, got {value!r}")
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
        return (
            -(self.penalty_cap + self.multi_candidate_penalty),
            self.correct + self.evidence_weight + self.efficiency_weight,
        )


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


def labelled_answer(text: str) -> tuple[str, str] | None:
    """``(text before the first Answer: label, the answer after it)``, the answer being the rest of
    the label's line, stripped (rule 3 of the module docstring); ``None`` without a label."""
    m = _LABEL.search(text)
    return (text[: m.start()], m.group(1).strip()) if m else None


def answer_text(text: str) -> str:
    """The answer part of a submitted string: the labelled answer, else the string unchanged."""
    found = labelled_answer(text)
    return found[1] if found else text


def _one_entity(text: str, known: tuple[Container[str], ...]) -> bool:
    for names in known:
        if text in names:
            return True
        if isinstance(names, World) and (text.lower() in names.by_name or names.resolve(text) is not None):
            return True  # a world also knows its entities by name and accounts by handle
    return False


def split_candidates(submitted: Any, *known: Container[str]) -> list[str]:
    """The candidates a submission names (rules 1-4 of the module docstring); strings that
    exactly equal an entity of one of the ``known`` containers stay whole."""
    if submitted is None:
        return []
    if isinstance(submitted, (list, tuple)):
        return [c for item in submitted for c in split_candidates(item, *known)]
    text = submitted if isinstance(submitted, str) else str(submitted)
    if not _one_entity(text, known):
        text = answer_text(text)
    if _one_entity(text, known):
        return [text]
    parts = [p for p in _SEPARATORS.split(text) if p]
    if len(parts) > 1:
        return parts
    return [text] if text else []


def judge_answer(submitted: Any, gold: Iterable[str], known: Container[str] = ()) -> tuple[bool, bool]:
    """(correct, several_candidates) of a submission against the gold answers (Hits@1 when there
    are several); ``known`` is the world, so that an entity whose name holds a separator is one
    candidate even when it is not a gold answer."""
    gold_set = set(gold)
    candidates = split_candidates(submitted, gold_set, known)
    if len(candidates) > 1:
        return False, True
    return bool(candidates) and candidates[0] in gold_set, False


def evidence_scores(
    predicted: Iterable[Edge | tuple[str, str, str]], gold: Iterable[Edge | tuple[str, str, str]]
) -> tuple[float, float, float]:
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
    known: Container[str] = (),
) -> RewardBreakdown:
    """The whole-episode reward and its parts. ``submitted=None`` means the agent never answered;
    ``known`` (the world) lets an entity named with a separator count as one candidate."""
    cfg = cfg or RewardConfig()
    answered = submitted is not None
    correct, multiple = judge_answer(submitted, gold_answers, known) if answered else (False, False)
    p, r, f1 = evidence_scores(evidence, gold_evidence) if answered else (0.0, 0.0, 0.0)
    answer_part = cfg.correct if correct else 0.0
    evidence_part = cfg.evidence_weight * f1
    efficiency_part = cfg.efficiency_weight * efficiency(critical_steps, max_steps) if correct else 0.0
    penalty = -(min(penalties_paid, cfg.penalty_cap) + (cfg.multi_candidate_penalty if multiple else 0.0))
    total = answer_part + evidence_part + efficiency_part + penalty
    return RewardBreakdown(
        answered, correct, multiple, p, r, f1, answer_part, evidence_part, efficiency_part, penalty, total
    )
