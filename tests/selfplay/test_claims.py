"""The run's claims block (osint_selfplay.claims) and the climb's curves (osint_selfplay.curves)."""

from __future__ import annotations

import json

import pytest

from osint_eval.stats import difference_of_means
from osint_selfplay.claims import NAMES, claims, generator_quarters
from osint_selfplay.curves import selfplay_curves, stratified
from osint_selfplay.report import format_summary
from osint_selfplay.state import RunSummary


def _steps(rewards_by_step):
    return [{"step": i + 1, "rewards": r, "solve_rates": [], "valid": len(r), "proposals": len(r),
             "frontier_share": None, "hops": []} for i, r in enumerate(rewards_by_step)]


def _paired(delta, lo, hi, n, p):
    est = {"mean": delta, "lo": lo, "hi": hi, "n": n}
    return {"n": n, "success_delta": est, "reward_delta": est, "steps_delta": est, "tool_calls_delta": est,
            "mcnemar": {"candidate_only": 5, "base_only": 1, "n": n, "p_value": p}}


def _summary(with_controls=False):
    rounds = [
        {"round": 0, "generator": {"generator_steps": _steps([[0.0] * 4, [0.0] * 4, [0.5] * 4, [0.5] * 4])},
         "sampled": {"valid": 20, "in_frontier": 5, "proposals": 24,
                     "curriculum": {"valid": 24, "in_frontier": 12, "proposals": 24}},
         "answerer": {"mix": {"hops": {"1": 2, "3": 2}}}},
        {"round": 1, "generator": {"generator_steps": _steps([[1.0] * 4, [1.0] * 4, [1.0] * 4, [1.0] * 4])},
         "sampled": {"valid": 10, "in_frontier": 4, "proposals": 24,
                     "curriculum": {"valid": 20, "in_frontier": 5, "proposals": 24}},
         "answerer": {"mix": {"hops": {"2": 4}}}},
    ]
    hard = {"n_tasks": 893, "splits": ["v1:test", "v1:hard"],
            "success": {"final": {"mean": 0.05, "lo": 0.04, "hi": 0.07, "n": 893}},
            "comparisons": {"final vs warm_start": _paired(0.042, 0.021, 0.063, 893, 0.001)}}
    if with_controls:
        hard["comparisons"]["final vs control"] = _paired(0.03, 0.009, 0.051, 893, 0.01)
    em = {"n_tasks": 607, "splits": ["v1:test"],
          "success": {"final": {"mean": 0.26, "lo": 0.227, "hi": 0.296, "n": 607}},
          "comparisons": {"final vs warm_start": _paired(0.003, -0.015, 0.021, 607, 0.8)}}
    est = {"mean": 0.1, "lo": 0.08, "hi": 0.12, "n": 1000}
    headline = {"final": {"success": est, "reward": est, "tool_calls": est, "critical_steps": est}}
    evaluation = {"tasks": "v1:test", "n_tasks": 1000, "mode": "multi_turn", "headline": headline, "comparisons": {},
                  "hard": hard, "easy_medium": em}
    return RunSummary.from_dict({"rounds": rounds, "evaluation": evaluation})


def test_the_generator_claim_compares_the_last_quarter_of_its_steps_with_the_first():
    summary = _summary()
    line = generator_quarters(summary)
    # 8 steps over both rounds: quarters of 2 steps, rewards 0.0 (first) and 1.0 (last), 8 proposals each
    assert line.startswith("+1.000 [+1.000, +1.000]") and "steps 1-2 vs 7-8 of 8; n=8 vs 8 proposals" in line
    few = RunSummary.from_dict({"rounds": [{"round": 0, "generator": {"generator_steps": _steps([[0.1], [0.2]])}}]})
    assert generator_quarters(few).startswith("not measured: 2 generator GRPO steps")


def test_the_claims_block_has_fixed_names_figures_with_intervals_and_says_what_did_not_run():
    block = claims(_summary())
    assert tuple(block) == NAMES
    assert block["frontier_share_last_round"].startswith("40.0% [") and "(n=10) ; scripted curriculum 25.0% [" in (
        block["frontier_share_last_round"])
    assert block["hard_final_vs_warm_start"] == "+4.2 pts [+2.1, +6.3] (n=893) on v1:test + v1:hard, McNemar p=0.001"
    assert block["hard_final_vs_sft_control"].startswith("not run: hatch run train-controls")
    assert block["easy_medium_final"] == "26.0% [22.7, 29.6] (n=607) on v1:test"
    assert block["easy_medium_final_vs_warm_start"] == "+0.3 pts [-1.5, +2.1] (n=607) on v1:test, McNemar p=0.8"
    assert claims(_summary(with_controls=True))["hard_final_vs_sft_control"].startswith("+3.0 pts [+0.9, +5.1]")


def test_the_summary_ends_with_the_claims_block_and_keeps_it_in_summary_json():
    summary = _summary()
    summary.claims = claims(summary)
    data = json.loads(json.dumps(summary.to_dict(), sort_keys=True))  # as summary.json is written
    assert data["claims"] == summary.claims
    lines = format_summary(data).splitlines()
    assert lines[-len(NAMES):] == [f"claim {name}: {summary.claims[name]}" for name in NAMES]


def test_difference_of_means_has_an_interval_around_the_difference():
    d = difference_of_means([1.0, 0.0] * 50, [0.0] * 100, seed=0)
    assert d.mean == pytest.approx(0.5) and d.lo < 0.5 < d.hi and d.lo > 0.3 and d.hi < 0.7 and d.n == 100
    assert difference_of_means([], [1.0]).n == 0


def test_the_climbs_curves_plot_reward_frontier_share_and_hops_per_round():
    curves = {c.name: c for c in selfplay_curves(_summary().rounds)}
    reward = curves["generator reward per GRPO step (its proposals' mean)"]
    assert [p.x for p in reward.points] == list(range(1, 9)) and not reward.rate
    learned = curves["frontier share of valid proposals, learned generator"]
    assert [(p.x, p.value.mean, p.value.n) for p in learned.points] == [(0, 0.25, 20), (1, 0.4, 10)]
    scripted = curves["frontier share of valid proposals, scripted curriculum"]
    assert [p.value.mean for p in scripted.points] == [0.5, 0.25]
    hops = curves["mean hops of the tasks that trained the answerer"]
    assert [p.value.mean for p in hops.points] == [2.0, 2.0] and [p.value.n for p in hops.points] == [4, 4]


def test_dev_tasks_are_taken_in_equal_numbers_of_each_difficulty():
    from osint_gym.benchmark import benchmark_tasks

    tasks = benchmark_tasks("v1:dev")
    picked = stratified(tasks, 90)
    assert len(picked) == 90 and {d: sum(t.difficulty == d for t in picked) for d in ("easy", "medium", "hard")} == {
        "easy": 30, "medium": 30, "hard": 30}
    assert picked == sorted(picked, key=tasks.index)  # in the split's order
