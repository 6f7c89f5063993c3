"""The climb end to end on a tiny model: rounds whose frozen answerer is refreshed, the frontier sample of both
arms, the per-round figures, the claims block, the log file, and the controls trained after the job."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from osint_selfplay.claims import NAMES

from .conftest import micro_overrides

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("climb")]


def climb_overrides(out_dir):
    return micro_overrides(out_dir, **{
        "rounds": 2, "model_topology": "'forked'", "canonical_graph_mode": "'choose'",
        "generator.offer_filters": "true",
        "generator.max_hops": 3, "generator.offer_choices": 4, "generator.curriculum": "true",
        "generator.solver_samples": 2, "generator.sample_tasks": 6, "grpo_generator.max_steps": 2,
        "grpo_generator.max_completion_length": 6, "answerer.mode": "'multi_turn'",
        "episode.observation_format": "'compact'", "episode.action_format": "'short'",
        "episode.describe_tools": "false", "episode.max_observation_chars": 4000, "answerer.frontier": "[0.2, 0.8]",
        "answerer.seed_difficulties": "['easy','medium','hard']", "answerer.tasks_per_round": 8,
        "grpo_answerer.max_completion_length": 64, "grpo_answerer.per_device_train_batch_size": 8,
        "eval.tasks": "'v1:test'", "eval.extra_splits": "['v1:hard']", "eval.difficulties": "[]", "eval.limit": 6,
        "eval.max_new_tokens": 16, "play.max_new_tokens": 16, "eval.curve_split": "'v1:dev'", "eval.curve_tasks": 6,
        "eval.include_untrained": "false", "warm_start.packing": "true", "warm_start.batch_size": 4,
        "warm_start.decay_fraction": 0.25,
    })


@pytest.fixture(scope="module")
def climb(tmp_path_factory, tiny_path):
    """The trained climb and what the terminal showed: run once, whichever of the module's tests comes first
    (pytest-xdist's loadgroup keeps them on one worker, not in file order)."""
    out = tmp_path_factory.mktemp("climb") / "run"
    return out, _cli(["train", "--set", *climb_overrides(out)])


def _cli(args):
    """The command as a user runs it (its own process: the terminal is what its stdout and stderr show)."""
    done = subprocess.run([sys.executable, "-m", "osint_selfplay", *args], capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_climb_refreshes_its_frozen_answerer_and_reports_every_round(climb):
    out, terminal = climb
    summary = json.loads((out / "summary.json").read_text())
    rounds = summary["rounds"]
    # each round's generator is rewarded against the answerer as that round starts
    assert rounds[0]["generator"]["frozen_answerer"] == str(out / "warm_start/shared/final_model")
    assert rounds[1]["generator"]["frozen_answerer"] == str(out / "round_000/answerer/final_model")
    for r, rnd in enumerate(rounds):
        assert rnd["sampled"]["frozen_answerer"] == rnd["generator"]["frozen_answerer"]
        assert rnd["answerer"]["start_model"] == rnd["generator"]["frozen_answerer"]  # forked: the generator apart
        assert [s["step"] for s in rnd["generator"]["generator_steps"]] == [1, 2]
        assert rnd["generator"]["solve_rate_samples"] == 2
        for arm in (rnd["sampled"], rnd["sampled"]["curriculum"]):
            assert arm["proposals"] == 6 and set(arm) >= {"valid", "in_frontier", "frontier_share", "mean_hops"}
        mix = rnd["answerer"]["mix"]
        assert sum(mix["hops"].values()) == mix["rows"] and mix["mean_hops"] >= 1
        assert (out / f"round_{r:03d}/sampled/curriculum_tasks.jsonl").is_file()
        assert (out / f"round_{r:03d}/generator/observations.jsonl").is_file()
    # the dev curve by difficulty at the start and each round's end; the climb's curves in the report
    names = [c["name"] for c in summary["evaluation"]["curves"]]
    assert any("v1:dev hard tasks" in n for n in names) and "mean hops of the tasks that trained the answerer" in names
    assert summary["evaluation"]["hard"]["splits"] == ["v1:test", "v1:hard"]
    assert summary["evaluation"]["splits"]["v1:hard"]["n_tasks"] == 6
    assert (out / "eval/v1-hard/report.md").is_file()
    # the claims block, in summary.json and at the end of the printed summary
    assert sorted(summary["claims"]) == sorted(NAMES)
    assert terminal.stdout.rstrip().splitlines()[-len(NAMES):] == [
        f"claim {k}: {summary['claims'][k]}" for k in NAMES]  # in the fixed order, whatever summary.json's key order
    # TRL's per-step log dicts reach the run's log file, not the terminal
    log = (out / "train.log").read_text()
    steps = [json.loads(line.split(" INFO ", 1)[1]) for line in log.splitlines() if ' INFO {"phase": ' in line]
    assert {s["phase"] for s in steps} >= {"grpo_generator", "grpo_answerer"}
    assert any("loss" in s for s in steps) and any("reward" in s for s in steps)
    shown = terminal.stdout + terminal.stderr
    assert "{'loss'" not in shown and '"loss"' not in shown and "'reward':" not in shown
    assert "round 0 answerer: started" in log and "round 0 answerer: started" not in shown


def test_the_controls_after_the_job_fill_the_claims(climb):
    out, _ = climb
    shown = _cli(["controls", str(out)])
    assert '"loss"' not in shown.stdout + shown.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["uniform_control"].get("same_as_final") or len(summary["uniform_control"]["rounds"]) == 2
    assert len(summary["curriculum_control"]["rounds"]) == 2
    arm = summary["curriculum_control"]["rounds"]
    assert arm[1]["start_model"] == str(out / "round_000/answerer_curriculum/final_model")
    assert summary["imitation_reference"]["extra_demonstrations"]["episodes"] > 0
    claims = summary["claims"]
    for name in ("hard_final_vs_sft_control", "hard_final_vs_curriculum_control",
                 "hard_final_vs_imitation_reference"):
        assert "not run" not in claims[name] and "(n=" in claims[name], name
