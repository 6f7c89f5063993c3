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
    return {
        "rounds": [],
        "evaluation": {
            "tasks": "v0:test",
            "n_tasks": 16 if dry_run else 1000,
            "dry_run": dry_run,
            "mode": "single_turn",
            "report": "run/eval/report.md",
            "headline": {
                "final": {
                    "success": est,
                    "reward": {"mean": 0.8, "lo": 0.75, "hi": 0.85, "n": 1000},
                    "tool_calls": steps,
                    "critical_steps": steps,
                }
            },
            "comparisons": {
                "final vs warm_start": {
                    "n": 1000,
                    "success_delta": delta,
                    "reward_delta": delta,
                    "steps_delta": delta,
                    "tool_calls_delta": delta,
                    "mcnemar": {"candidate_only": 60, "base_only": 10, "n": 1000, "p_value": 1e-9},
                },
                "final vs untrained": {"n": 0},
            },
        },
    }


def test_summary_prints_intervals_with_osint_evals_formatter():
    text = format_summary(_summary(dry_run=False))
    assert (
        "50.1% [46.9, 53.1]" in text
        and Estimate(0.501, 0.469, 0.531, 1000).fmt(pct=True, show_n=False) == "50.1% [46.9, 53.1]"
    )
    assert ("final vs warm_start: success +5.0 pts [+1.2, +8.9] (paired, n=1000): better, McNemar p=1e-09; "
            "reward +0.050 [+0.012, +0.089]") in text
    assert "final vs untrained: no paired task" in text
    assert "DRY RUN" not in text


def test_dry_run_summary_says_so_and_evaluates_a_handful_of_tasks():
    assert (
        "DRY RUN: no gradient updates; the evaluation below is a smoke test on 16 tasks, not a result"
        in format_summary(_summary(True))
    )
    assert eval_task_limit(1000, dry_run=True) == DRY_RUN_EVAL_TASKS <= 16
    assert eval_task_limit(1000, dry_run=False) == 1000 and eval_task_limit(12, dry_run=True) == 12


def test_malformed_evaluation_summary_names_the_field():
    bad = _summary(False)
    del bad["evaluation"]["headline"]["final"]["success"]["lo"]
    with pytest.raises(ReportError, match=r"^summary\.evaluation\.headline\.final\.success\.lo: missing$"):
        format_summary(bad)


def test_a_delta_whose_interval_includes_zero_is_printed_as_null():
    summary = _summary(False)
    ev = summary["evaluation"]
    null = {"mean": 0.004, "lo": -0.02, "hi": 0.03, "n": 1000}
    worse = {"mean": -0.05, "lo": -0.08, "hi": -0.02, "n": 1000}
    few = {
        "mean": 0.004,
        "lo": 0.001,
        "hi": 0.008,
        "n": 1000,
    }  # 4 tasks gained, none lost: the bootstrap misses 0, McNemar does not
    mc = {"candidate_only": 30, "base_only": 26, "n": 1000, "p_value": 0.69}
    ev["comparisons"] = {
        name: {
            "n": 1000,
            "success_delta": d,
            "reward_delta": d,
            "steps_delta": d,
            "tool_calls_delta": d,
            "mcnemar": {**mc, "p_value": p},
        }
        for name, d, p in (
            ("final vs control", null, 0.69),
            ("final vs warm_start", worse, 1e-4),
            ("final vs untrained", few, 0.125),
        )
    }
    est = {"mean": 0.3, "lo": 0.27, "hi": 0.33, "n": 700}
    ev["easy_medium"] = {"difficulties": ["easy", "medium"], "n_tasks": 700, "success": {"final": est},
                         "comparisons": {"final vs control": ev["comparisons"]["final vs control"]}}
    ev["by_difficulty"] = {"final": {"easy": est, "hard": {"mean": 0.1, "lo": 0.07, "hi": 0.14, "n": 300}}}
    ev["strongest_baseline"] = {
        "name": "naive-search",
        "label": "naive searcher",
        "success": {"mean": 0.03, "lo": 0.02, "hi": 0.045, "n": 1000},
    }
    text = format_summary(summary)
    assert (
        "final vs control: success +0.4 pts [-2.0, +3.0] (paired, n=1000): "
        "null (the interval includes 0), McNemar p=0.69" in text
    )
    assert "final vs warm_start: success -5.0 pts [-8.0, -2.0] (paired, n=1000): worse" in text
    assert (
        "final vs untrained: success +0.4 pts [+0.1, +0.8] (paired, n=1000): null (McNemar p >= 0.05), McNemar p=0.125"
        in text
    )
    assert "easy + medium tasks only (n=700): final 30.0% [27.0, 33.0]" in text
    assert "easy + medium final vs control: success +0.4 pts" in text
    assert (
        "success by difficulty: easy n=700, hard n=300" in text
        and "easy 30.0% [27.0, 33.0]  hard 10.0% [7.0, 14.0]" in text
    )
    assert "strongest scripted baseline: naive-search 3.0% [2.0, 4.5]" in text


@pytest.mark.parametrize("guess", ["random-guess", "random_guess"])  # a run's name for it, then earlier runs'
def test_summary_read_back_from_sorted_json_keeps_the_runs_order(tmp_path, guess):
    """summary.json is written with sorted keys; the printed tables still run: the run's models,
    random guess, the other scripted baselines, the oracle; comparisons in the evaluation's order."""
    import json

    from osint_selfplay.artifacts import atomic_write_json

    summary = _summary(False)
    ev = summary["evaluation"]
    row = ev["headline"]["final"]
    names = ["oracle", "naive-search", "final", guess, "untrained", "warm_start"]
    ev["headline"] = {n: row for n in names}
    ev["by_difficulty"] = {n: {"easy": row["success"]} for n in names}
    pair = ev["comparisons"]["final vs warm_start"]
    ev["comparisons"] = {c: pair for c in ("warm_start vs naive-search", "final vs untrained", "final vs warm_start",
                                            "warm_start vs untrained", "final vs naive-search")}
    atomic_write_json(tmp_path / "summary.json", summary)
    text = format_summary(json.loads((tmp_path / "summary.json").read_text()))
    order = ["untrained", "warm_start", "final", guess, "naive-search", "oracle"]
    table = [line.split()[0] for line in text.splitlines() if line.startswith("  ") and "50.1% [46.9, 53.1]  " in line]
    assert table == order
    assert [line.split()[0] for line in text.splitlines() if line.startswith("    ")] == order
    shown = [line.split(": success")[0].strip() for line in text.splitlines() if " vs " in line and ": success" in line]
    assert shown == [
        "final vs warm_start",
        "warm_start vs untrained",
        "final vs untrained",
        "warm_start vs naive-search",
        "final vs naive-search",
    ]


def _round(generated, valid=10, outside=0, frontier=(0.2, 0.8)):
    mix = {"generated": generated, "seed": 32 - generated, "top_up": 16 - generated, "wanted_generated": 16,
           "valid_generated": valid, "outside_frontier": outside, "frontier": list(frontier), "rows": 32,
           "unsolvable_under_budget": 0}
    return {"round": 0, "sampled": {"valid": valid, "proposals": 32, "valid_rate": valid / 32, "in_frontier": 3,
                                    "frontier_share": 3 / valid, "mean_solve_rate": 0.05, "mean_hops": 1.5,
                                    "solve_rate_samples": 8,
                                    "curriculum": {"valid": 12, "proposals": 32, "in_frontier": 6,
                                                   "frontier_share": 0.5, "mean_solve_rate": 0.4, "mean_hops": 1.25}},
            "generator": {"reward_first": 0.1, "reward_last": 0.3, "steps": 4, "frontier_share": 0.25,
                          "solve_rate_samples": 8}, "answerer": {"mix": mix, "zero_variance_by_source": {
                "seed": {"groups": 6, "zero_variance": 3, "share": 0.5}}}}


def test_the_round_line_counts_the_frontier_and_the_zero_variance_groups():
    text = format_summary({"rounds": [_round(0, valid=10, outside=10)]})
    assert ("round 0: generator reward 0.100 -> 0.300 over 4 GRPO steps, frontier share of its proposals 25.0% "
            "(the frozen answerer's 8 episodes per distinct task)") in text
    assert ("sample, learned generator: valid 10/32, frontier share 30.0% (3 in [0.2, 0.8]), mean solve rate 5.0%, "
            "mean hops 1.50") in text
    assert "sample, scripted curriculum: valid 12/32, frontier share 50.0% (6 in [0.2, 0.8])" in text
    assert "10 of 10 valid outside the frontier band [0.2, 0.8]" in text
    assert "zero-variance answerer groups: seed 3/6 (50.0%)" in text


def test_without_generated_tasks_the_uniform_control_is_the_same_run():
    assert "the same run, delta 0 by construction" in format_summary({"rounds": [_round(0, outside=10)]})
    text = format_summary({"rounds": [_round(4, outside=6)]})
    assert "4 generated tasks trained the answerer" in text and "delta 0 by construction" not in text


def _old_summary() -> dict:
    """A summary.json as the loop wrote it before `osint_selfplay.state` (dicts by key, built by hand)."""
    ws = {"steps": 120, "seconds": 30.0, "examples": 64, "final_loss": 0.5, "wall_seconds": 31.0}
    rnd = {"round": 0, "generator": {"reward_first": 0.1, "reward_last": 0.2, "wall_seconds": 5.0},
           "sampled": {"proposals": 8, "valid": 4, "valid_rate": 0.5, "reasons": {}, "solve_rate_samples": 2,
                       "answerer_solve_rate_on_generated": 0.25, "wall_seconds": 2.0},
           "answerer": {"mix": {"generated": 2, "seed": 6, "top_up": 0},
                        "start_model": "run/warm_start/answerer/final_model",
                        "reward_first": 0.3, "reward_last": 0.4, "wall_seconds": 9.0}}
    return {"rounds": [rnd], "warm_start": ws, "output_dir": "run",
            "final_models": {"generator": "run/round_000/generator/final_model",
                             "answerer": "run/round_000/answerer/final_model"},
            "warm_start_models": None}


def test_a_summary_written_before_the_typed_state_loads_and_writes_back_the_same():
    from osint_selfplay.state import Models, RunSummary

    old = _old_summary()
    summary = RunSummary.from_dict(old)
    rnd = summary.rounds[0]
    assert rnd.round == 0 and rnd.sampled is not None and rnd.sampled.valid == 4 and rnd.relabel is None
    assert rnd.answerer is not None and rnd.answerer.mix is not None and rnd.answerer.mix.generated == 2
    assert rnd.answerer.mix.rows == 0 and "rows" in rnd.answerer.mix.absent  # not in the older file: not written
    assert summary.final_models == Models("run/round_000/generator/final_model", "run/round_000/answerer/final_model")
    assert summary.warm_start_models is None and summary.evaluation is None
    assert summary.warm_start is not None and summary.warm_start.steps == 120
    # the same file back, without the keys that only said "not run"
    assert summary.to_dict() == {k: v for k, v in old.items() if v is not None}
    assert RunSummary.from_dict(summary.to_dict()) == summary
    assert format_summary(summary) == format_summary(old)


def test_a_summary_with_an_unknown_key_is_refused_in_one_line():
    from osint_selfplay.errors import ConfigError
    from osint_selfplay.state import RunSummary

    bad = _old_summary()
    bad["rounds"][0]["answerr"] = {}
    with pytest.raises(ConfigError, match=r"^summary\.rounds\[0\]: unknown key\(s\) 'answerr'; expected .*answerer"):
        RunSummary.from_dict(bad)


def test_the_controls_budget_reads_a_loaded_summarys_rounds():
    from osint_selfplay.controls import budget_steps
    from osint_selfplay.state import RunSummary

    summary = RunSummary.from_dict(_old_summary())
    # 5 + 2 + 9 s of phases at the warm start's 4 steps a second
    assert budget_steps(summary.rounds, summary.warm_start) == (64, 16.0)


def test_a_long_curve_prints_its_ends_and_its_mean_in_the_curves_unit():
    from osint_eval.schema import Curve, CurvePoint
    from osint_selfplay.report import _curve_lines

    def curve(rate: bool) -> dict:
        pts = [CurvePoint(float(i + 1), Estimate(0.1 * i, 0.0, 0.2, 8), f"round {i // 4}") for i in range(8)]
        return Curve("c", "step", "y", pts, rate=rate).to_dict()

    reward_line, share_line = _curve_lines([curve(False), curve(True)])
    assert "... mean +0.350 over 8 steps ..." in reward_line  # a reward's mean is a reward, not a percentage
    assert "... mean 35.0% over 8 steps ..." in share_line
    assert reward_line.count("step ") == 4 and "step 1 (round 0)" in reward_line and "step 8 (round 1)" in reward_line
    per_round = Curve("h", "round", "y", [CurvePoint(0.0, Estimate(2.0, 1.5, 2.5, 40), "round 0")], rate=False)
    (line,) = _curve_lines([per_round.to_dict()])
    assert "round 0 2.000" in line and "(round 0)" not in line  # the label repeats nothing the x already says
