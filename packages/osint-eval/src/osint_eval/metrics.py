"""Per-model metrics (overall, by difficulty, by family) and paired model comparisons.

Every number comes with its sample size; rates and means with a seeded 95% bootstrap interval.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from osint_eval.runner import EpisodeResult
from osint_eval.stats import Estimate, bootstrap_mean, mcnemar_exact, paired_delta

COMPONENTS = ("answer", "evidence", "efficiency", "penalty")


def _block(results: list[EpisodeResult], seed: int) -> dict[str, Any]:
    steps = np.array([r.steps for r in results], dtype=float)
    invalid = np.array([r.invalid_actions for r in results], dtype=float)
    block: dict[str, Any] = {
        "n": len(results),
        "success": bootstrap_mean([r.correct for r in results], seed=seed).to_dict(),
        "reward": bootstrap_mean([r.reward for r in results], seed=seed).to_dict(),
        "evidence_f1": bootstrap_mean([r.evidence_f1 for r in results], seed=seed).to_dict(),
        "steps": bootstrap_mean(steps, seed=seed).to_dict(),
        "critical_steps": bootstrap_mean(steps, seed=seed).to_dict(),
        "tool_calls": bootstrap_mean([r.tool_calls for r in results], seed=seed).to_dict(),
        "invalid_action_rate": float(invalid.sum() / max(1.0, steps.sum())),
        "parse_failure_rate": float(sum(r.parse_failures for r in results) / max(1.0, steps.sum())),
        "answered_rate": float(np.mean([r.breakdown.get("answered", True) for r in results])) if results else float("nan"),
        "components": {c: float(np.mean([r.breakdown.get(c, 0.0) for r in results])) if results else float("nan") for c in COMPONENTS},
    }
    return block


def _groups(results: list[EpisodeResult], key: str) -> dict[str, list[EpisodeResult]]:
    out: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        out[getattr(r, key)].append(r)
    return dict(sorted(out.items()))


def summarize(results: list[EpisodeResult], *, seed: int = 0) -> dict[str, Any]:
    """Metrics for one model's episodes: overall, by difficulty, by family."""
    return {
        "overall": _block(results, seed),
        "by_difficulty": {k: _block(v, seed) for k, v in _groups(results, "difficulty").items()},
        "by_family": {k: _block(v, seed) for k, v in _groups(results, "family").items()},
    }


def _paired(base: list[EpisodeResult], cand: list[EpisodeResult], seed: int) -> dict[str, Any]:
    b = {r.task_id: r for r in base}
    pairs = [(b[r.task_id], r) for r in cand if r.task_id in b]
    if not pairs:
        return {"n": 0}
    bs, cs = [p[0] for p in pairs], [p[1] for p in pairs]
    return {
        "n": len(pairs),
        "success_delta": paired_delta([c.correct for c in cs], [x.correct for x in bs], seed=seed).to_dict(),
        "reward_delta": paired_delta([c.reward for c in cs], [x.reward for x in bs], seed=seed).to_dict(),
        "steps_delta": paired_delta([c.steps for c in cs], [x.steps for x in bs], seed=seed).to_dict(),
        "tool_calls_delta": paired_delta([c.tool_calls for c in cs], [x.tool_calls for x in bs], seed=seed).to_dict(),
        "mcnemar": mcnemar_exact([c.correct for c in cs], [x.correct for x in bs]).to_dict(),
    }


def compare(base: list[EpisodeResult], candidate: list[EpisodeResult], *, seed: int = 0) -> dict[str, Any]:
    """Paired candidate-minus-base deltas (same tasks), overall and by difficulty and family."""
    if {r.task_id for r in base} != {r.task_id for r in candidate}:
        raise ValueError("a paired comparison needs both models evaluated on the same tasks")
    return {
        "overall": _paired(base, candidate, seed),
        "by_difficulty": {k: _paired(v, [c for c in candidate if c.difficulty == k], seed) for k, v in _groups(base, "difficulty").items()},
        "by_family": {k: _paired(v, [c for c in candidate if c.family == k], seed) for k, v in _groups(base, "family").items()},
    }


def estimate(d: dict[str, Any]) -> Estimate:
    return Estimate(d["mean"], d["lo"], d["hi"], d["n"])
