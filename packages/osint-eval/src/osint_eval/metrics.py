"""Per-model metrics (overall, by difficulty, by family) and paired model comparisons, as schema objects.

Every number comes with its sample size; success rates with a Wilson interval, means with a seeded
95% bootstrap interval, paired deltas with a bootstrap over tasks.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from osint_eval.runner import EpisodeResult
from osint_eval.schema import Baseline, Comparison, MetricBlock, ModelSummary, PairedBlock
from osint_eval.stats import bootstrap_mean, mcnemar_exact, paired_delta, proportion_interval

COMPONENTS = ("answer", "evidence", "efficiency", "penalty")


def _block(results: list[EpisodeResult], seed: int) -> MetricBlock:
    steps = np.array([r.steps for r in results], dtype=float)
    invalid = np.array([r.invalid_actions for r in results], dtype=float)
    nan = float("nan")
    return MetricBlock(
        n=len(results),
        success=proportion_interval([r.correct for r in results]),
        reward=bootstrap_mean([r.reward for r in results], seed=seed),
        evidence_f1=bootstrap_mean([r.evidence_f1 for r in results], seed=seed),
        steps=bootstrap_mean(steps, seed=seed),
        critical_steps=bootstrap_mean(steps, seed=seed),
        tool_calls=bootstrap_mean([r.tool_calls for r in results], seed=seed),
        invalid_action_rate=float(invalid.sum() / max(1.0, steps.sum())),
        parse_failure_rate=float(sum(r.parse_failures for r in results) / max(1.0, steps.sum())),
        answered_rate=float(np.mean([r.breakdown.get("answered", True) for r in results])) if results else nan,
        components={
            c: float(np.mean([r.breakdown.get(c, 0.0) for r in results])) if results else nan for c in COMPONENTS
        },
    )


def _groups(results: list[EpisodeResult], key: str) -> dict[str, list[EpisodeResult]]:
    out: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        out[getattr(r, key)].append(r)
    return dict(sorted(out.items()))


def summarize(results: list[EpisodeResult], *, seed: int = 0, name: str = "model", label: str | None = None,
              policy: dict[str, Any] | None = None) -> ModelSummary:
    """Metrics for one model's episodes: overall, by difficulty, by family."""
    return ModelSummary(
        name, label or name, policy or {}, _block(results, seed),
        {k: _block(v, seed) for k, v in _groups(results, "difficulty").items()},
        {k: _block(v, seed) for k, v in _groups(results, "family").items()},
    )


def _paired(base: list[EpisodeResult], cand: list[EpisodeResult], seed: int) -> PairedBlock:
    b = {r.task_id: r for r in base}
    pairs = [(b[r.task_id], r) for r in cand if r.task_id in b]
    if not pairs:
        return PairedBlock(0)
    bs, cs = [p[0] for p in pairs], [p[1] for p in pairs]
    return PairedBlock(
        n=len(pairs),
        success_delta=paired_delta([c.correct for c in cs], [x.correct for x in bs], seed=seed),
        reward_delta=paired_delta([c.reward for c in cs], [x.reward for x in bs], seed=seed),
        steps_delta=paired_delta([c.steps for c in cs], [x.steps for x in bs], seed=seed),
        tool_calls_delta=paired_delta([c.tool_calls for c in cs], [x.tool_calls for x in bs], seed=seed),
        mcnemar=mcnemar_exact([c.correct for c in cs], [x.correct for x in bs]),
    )


def compare(
    base: list[EpisodeResult],
    candidate: list[EpisodeResult],
    *,
    seed: int = 0,
    names: tuple[str, str] = ("base", "candidate"),
    labels: tuple[str, str] | None = None,
) -> Comparison:
    """Paired candidate-minus-base deltas (same tasks), overall and by difficulty and family.
    ``names`` are the two roles, ``labels`` the models they stand for (default: the roles)."""
    if {r.task_id for r in base} != {r.task_id for r in candidate}:
        raise ValueError("a paired comparison needs both models evaluated on the same tasks")
    labels = labels or names
    return Comparison(
        f"{names[1]} vs {names[0]}",
        names[0],
        names[1],
        labels[0],
        labels[1],
        _paired(base, candidate, seed),
        {
            k: _paired(v, [c for c in candidate if c.difficulty == k], seed)
            for k, v in _groups(base, "difficulty").items()
        },
        {k: _paired(v, [c for c in candidate if c.family == k], seed) for k, v in _groups(base, "family").items()},
    )


def strongest_baseline(models: dict[str, ModelSummary], baselines: list[str]) -> Baseline | None:
    """The baseline among ``baselines`` (names of scripted non-oracle policies in ``models``) with the
    highest success (ties: the first listed); None when there is none."""
    present = [n for n in baselines if n in models]
    if not present:
        return None
    best = max(present, key=lambda n: models[n].overall.success.mean)
    return Baseline(best, models[best].label, models[best].overall.success)
