"""The run summary printed by ``osint-selfplay train``: intervals in osint-eval's one format, dry runs said."""

from __future__ import annotations

import pytest

from osint_eval.errors import ReportError
from osint_eval.schema import Estimate
from osint_selfplay.evaluate import DRY_RUN_EVAL_TASKS, eval_task_limit
from osint_selfplay.report import format_summary


def _summary(dry_run: bool) -> dict:
    est = {"mean": 0.501, "lo": 0.469, "hi": 0.531, "n": 1000}
    steps = {"mean": 3.25, "lo": 3.0, "hi": 3.5, "n": 1000}
    delta = {"mean": 0.05, "lo": 0.012, "hi": 0.089, "n": 1000}
    return {"rounds": [], "evaluation": {
        "tasks": "v0:test", "n_tasks": 16 if dry_run else 1000, "dry_run": dry_run, "mode": "single_turn", "report": "run/eval/report.md",
        "headline": {"final": {"success": est, "reward": {"mean": 0.8, "lo": 0.75, "hi": 0.85, "n": 1000},
                               "tool_calls": steps, "critical_steps": steps}},
        "comparisons": {"final vs warm_start": {"n": 1000, "success_delta": delta, "reward_delta": delta, "steps_delta": delta,
                                                "tool_calls_delta": delta, "mcnemar": {"candidate_only": 60, "base_only": 10, "n": 1000, "p_value": 1e-9}},
                        "final vs untrained": {"n": 0}},
    }}


def test_summary_prints_intervals_with_osint_evals_formatter():
    text = format_summary(_summary(dry_run=False))
    assert "50.1% [46.9, 53.1]" in text and Estimate(0.501, 0.469, 0.531, 1000).fmt(pct=True, show_n=False) == "50.1% [46.9, 53.1]"
    assert "final vs warm_start: success +5.0 pts [+1.2, +8.9] (paired, n=1000), reward +0.050 [+0.012, +0.089], McNemar p=1e-09" in text
    assert "final vs untrained: no paired task" in text
    assert "DRY RUN" not in text


def test_dry_run_summary_says_so_and_evaluates_a_handful_of_tasks():
    assert "DRY RUN: no gradient updates; the evaluation below is a smoke test on 16 tasks, not a result" in format_summary(_summary(True))
    assert eval_task_limit(1000, dry_run=True) == DRY_RUN_EVAL_TASKS <= 16
    assert eval_task_limit(1000, dry_run=False) == 1000 and eval_task_limit(12, dry_run=True) == 12


def test_malformed_evaluation_summary_names_the_field():
    bad = _summary(False)
    del bad["evaluation"]["headline"]["final"]["success"]["lo"]
    with pytest.raises(ReportError, match=r"^summary\.evaluation\.headline\.final\.success\.lo: missing$"):
        format_summary(bad)
