"""Trainer tests with a tiny model on the CPU: phases change parameters, every schedule and topology
runs (dry and for real), resume reproduces an uninterrupted run, W&B logs offline, vLLM errors clearly,
two accelerate processes finish the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osint_selfplay import data, phases, streams
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError
from osint_selfplay.loop import SelfPlayRun
from osint_selfplay.rewards import AnswererReward, GeneratorReward
from osint_selfplay.worlds import WorldPool

from .conftest import TINY, artifact_digests, micro_overrides

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.slow  # trained rounds, subprocess runs and resumes: the full suite only


@pytest.fixture(scope="module")
def warm_model(tmp_path_factory, tiny_path):
    """The tiny model after a short, high-learning-rate warm start on a handful of demonstrations
    (memorised, not learned), so that its samples differ in validity and correctness: GRPO needs
    reward variance to move parameters."""
    out = tmp_path_factory.mktemp("warm")
    cfg = load_config(
        None,
        micro_overrides(
            out,
            **{
                "warm_start.generator_examples": 16,
                "warm_start.answerer_examples": 16,
                "warm_start.epochs": 40,
                "warm_start.learning_rate": 1e-2,
                "warm_start.warmup_steps": 5,
                "generator.prompts_per_round": 8,
            },
        ),
    )
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    rows = data.as_messages(data.sft_generator_rows(pool, cfg) + data.sft_answerer_rows(pool, cfg))
    phases.run_sft(tiny_path, rows, cfg, out, "shared", TINY)
    return str(out / "final_model"), cfg


@pytest.mark.xdist_group("warm_model")  # both modes on one pytest-xdist worker: the fixture trains once
@pytest.mark.parametrize("mode", ["full", "lora"])
def test_generator_and_answerer_phases_change_parameters(tmp_path, warm_model, mode):
    import torch
    from transformers import AutoModelForCausalLM

    from osint_selfplay.solver import SolverSampler

    model, warm_cfg = warm_model
    cfg = load_config(None, micro_overrides(tmp_path, tuning_mode=f"'{mode}'", **{"grpo_generator.max_steps": 2,
                      "grpo_answerer.max_steps": 2, "grpo_generator.temperature": 1.2, "grpo_answerer.temperature": 1.2,
                      "lora.r": 8, "grpo_generator.learning_rate": 5e-3, "grpo_answerer.learning_rate": 5e-3,
                      "grpo_generator.max_completion_length": 48}))
    pool = WorldPool(cfg.train_worlds, cfg.seed)
    solver = SolverSampler(
        model, k=2, temperature=1.0, context_mode="triples", n_distractors=6, seed=0, max_new_tokens=12
    )
    gen_reward = GeneratorReward(pool, cfg.generator, solver)
    # the offers the warm start memorised: some samples reproduce them, some do not
    gen_rows = data.offer_rows(pool, cfg, 0, 8, streams.WARM_START_GENERATOR)
    gm = phases.run_grpo(model, gen_rows, gen_reward, cfg.grpo_generator, cfg, tmp_path / "gen", "generator", TINY, 1)
    ans_rows = [data.answerer_row(w, t, cfg, "seed") for w, t in data.seed_tasks(pool, cfg, 8, 0, streams.WARM_START)]
    am = phases.run_grpo(model, ans_rows, AnswererReward(cfg.grpo_answerer.num_generations), cfg.grpo_answerer, cfg,
                         tmp_path / "ans", "answerer", TINY, 2)
    base = AutoModelForCausalLM.from_pretrained(model)
    for metrics, folder in ((gm, tmp_path / "gen"), (am, tmp_path / "ans")):
        assert metrics.health is not None and metrics.health.parameters_changed > 0, metrics
        assert metrics.steps == 2 and metrics.reward_first is not None
        logs = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
        assert any("reward" in entry for entry in logs)
        trained = AutoModelForCausalLM.from_pretrained(folder / "final_model")  # a plain, loadable model (LoRA merged)
        assert not (folder / "final_model" / "adapter_config.json").exists()
        diff = sum(float((a - b).detach().abs().sum()) for a, b in zip(trained.parameters(), base.parameters()))
        assert diff > 0
        assert "base_model: tiny:64x2" in (folder / "final_model" / "README.md").read_text()
    assert sum(gen_reward.reasons.values()) == 2 * 8  # every proposal was validated
    assert am.reward_last is not None and torch.isfinite(torch.tensor(am.reward_last))


RUN_MATRIX = [("generator_answerer", "dual"), ("generator_answerer", "shared"),
              ("answerer_generator_answerer", "dual"), ("answerer_generator_answerer", "shared")]


@pytest.mark.parametrize(("schedule", "topology"), RUN_MATRIX)
def test_dry_run_materialises_every_artifact(tmp_path, tiny_path, schedule, topology):
    cfg = load_config(
        None,
        micro_overrides(
            tmp_path / "run", phase_schedule=f"'{schedule}'", model_topology=f"'{topology}'", dry_run="true"
        ),
    )
    summary = SelfPlayRun(cfg).run().to_dict()
    root = tmp_path / "run"
    for name in (
        "run.json",
        "summary.json",
        "round_000/summary.json",
        "round_000/generator/prompts.jsonl",
        "round_000/sampled/proposals.jsonl",
        "round_000/sampled/validation.json",
        "round_000/answerer/tasks.jsonl",
        "round_000/answerer/final_model/config.json",
        "round_000/generator/final_model/README.md",
        "eval/report.md",
        "eval/report.html",
        "eval/report.json",
    ):
        assert (root / name).is_file(), name
    if schedule == "answerer_generator_answerer":
        assert (root / "round_000/answerer_first/final_model/config.json").is_file()
    roles = ["shared"] if topology == "shared" else ["generator", "answerer"]
    assert sorted(p.name for p in (root / "warm_start").iterdir()) == sorted(roles)
    validation = json.loads((root / "round_000/sampled/validation.json").read_text())
    assert validation["proposals"] == 16 and sum(validation["reasons"].values()) == 16
    assert summary["evaluation"]["n_tasks"] == 12 and "random-guess" in summary["evaluation"]["headline"]
    manifest = json.loads((root / "run.json").read_text())
    assert manifest["config"]["model_topology"] == topology and manifest["versions"]["trl"]


def test_a_dry_run_with_a_decaying_warm_start_trains_its_controls_as_dry_runs(tmp_path, tiny_path):
    """A dry run's warm start trains nothing, so it saves no decay state: the equal-compute control
    (which resumes from that state in a real run) is a dry run too, not an error."""
    cfg = load_config(None, micro_overrides(tmp_path / "run", dry_run="true", model_topology="'shared'", **{
        "warm_start.packing": "true", "warm_start.decay_fraction": 0.25, "warm_start.control": "true",
        "answerer.uniform_control": "true"}))
    summary = SelfPlayRun(cfg).run().to_dict()
    assert summary["control"]["dry_run"] is True and summary["control"]["model"].endswith("control/final_model")
    assert not (tmp_path / "run/warm_start/shared/decay_start.pt").exists()


@pytest.mark.parametrize(("schedule", "topology"), RUN_MATRIX)
def test_one_real_round(tmp_path, tiny_path, schedule, topology):
    cfg = load_config(
        None, micro_overrides(tmp_path / "run", phase_schedule=f"'{schedule}'", model_topology=f"'{topology}'")
    )
    summary = SelfPlayRun(cfg).run().to_dict()
    rnd = summary["rounds"][0]
    assert rnd["generator"]["steps"] == 1 and rnd["answerer"]["steps"] == 1
    assert (
        rnd["answerer"]["mix"]["generated"] + rnd["answerer"]["mix"]["top_up"]
        == rnd["answerer"]["mix"]["wanted_generated"]
    )
    card = (tmp_path / "run/round_000/answerer/final_model/README.md").read_text()
    assert "Metrics of this phase" in card and "reward_last" in card
    ev = summary["evaluation"]
    assert set(ev["headline"]) >= {"untrained", "warm_start", "final", "random-guess"}
    assert all(h["success"]["n"] == 12 for h in ev["headline"].values())
    assert "final vs warm_start" in ev["comparisons"]


def test_existing_output_dir_needs_resume_and_same_config(tmp_path, tiny_path):
    overrides = micro_overrides(tmp_path / "run", dry_run="true")
    SelfPlayRun(load_config(None, overrides)).run()
    with pytest.raises(
        ConfigError, match="already holds a run; pass --resume to continue it, --overwrite to replace it"
    ):
        SelfPlayRun(load_config(None, overrides))
    with pytest.raises(ConfigError, match=r"different config .* \(differs in: rounds\)"):
        SelfPlayRun(load_config(None, overrides + ["rounds=2"]), resume=True)
    # resuming a finished run redoes nothing
    before = artifact_digests(tmp_path / "run")
    SelfPlayRun(load_config(None, overrides), resume=True).run()
    assert artifact_digests(tmp_path / "run") == before


def _cli(args, env=None, **kw):
    return subprocess.Popen([sys.executable, "-m", "osint_selfplay", *args], env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def test_resume_after_sigkill_reproduces_an_uninterrupted_run(tmp_path, tiny_path):
    def args(out):
        return ["train", "--dry-run", "--set", *micro_overrides(out)]

    reference = _cli(args(tmp_path / "ref"))
    assert reference.wait(timeout=600) == 0, reference.stdout.read()
    # between phases; in the middle of a phase (its first artifact written); while an artifact is being
    # written (a model folder under its temporary name); after the sampling phase
    points = {"between-phases": lambda out: (out / "warm_start_generator.done.json").exists(),
              "mid-phase": lambda out: (out / "round_000/generator/prompts.jsonl").exists(),
              "while-writing": lambda out: any(out.rglob(".final_model.*")),
              "after-sampling": lambda out: (out / "round_000/sample.done.json").exists()}
    for name, reached in points.items():
        out = tmp_path / f"killed-{name}"
        # hold each atomic write open for a moment, so that the kill lands inside one
        proc = _cli(args(out), env={"OSINT_WRITE_PAUSE": "0.3"} if name == "while-writing" else None)
        deadline = time.time() + 600
        while not (out.exists() and reached(out)) and proc.poll() is None and time.time() < deadline:
            time.sleep(0.005)
        assert proc.poll() is None, f"the run ended before the kill point {name!r}"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        resumed = _cli(args(out) + ["--resume"])
        assert resumed.wait(timeout=600) == 0, resumed.stdout.read()
        assert artifact_digests(out) == artifact_digests(tmp_path / "ref"), name
        assert not [p for p in out.rglob(".*") if p.name != ".gitignore"]  # no temporary leftovers


def test_wandb_offline_writes_a_run(tmp_path, tiny_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = load_config(None, micro_overrides(tmp_path / "run", report_to="['wandb']", **{"eval.enabled": "false"}))
    SelfPlayRun(cfg).run()
    runs = list((tmp_path / "wandb").rglob("offline-run-*"))
    assert runs, "W&B wrote no offline run"
    assert any(p.suffix == ".wandb" for r in runs for p in r.iterdir())


def test_use_vllm_without_vllm_fails_clearly(tmp_path, tiny_path):
    from trl.import_utils import is_vllm_available

    assert not is_vllm_available()  # this machine has no vLLM (it cannot run here)
    cfg = load_config(None, micro_overrides(tmp_path / "run", use_vllm="true", vllm_mode="'colocate'"))
    with pytest.raises(ConfigError, match=r"use_vllm = true, but vLLM is not installed.*osint-selfplay\[vllm\]"):
        SelfPlayRun(cfg).run()
    assert not (tmp_path / "run" / "warm_start").exists()  # nothing trained before the error


def test_vllm_settings_reach_trl(tmp_path):
    cfg = load_config(
        None,
        micro_overrides(
            tmp_path,
            use_vllm="true",
            vllm_mode="'colocate'",
            **{"grpo_answerer.temperature": 0.7, "grpo_answerer.beta": 0.04,
               "grpo_answerer.vllm_gpu_memory_utilization": 0.5},
        ),
    )
    args = phases.grpo_args(cfg.grpo_answerer, cfg, tmp_path, 3)
    assert (args.use_vllm, args.vllm_mode, args.vllm_gpu_memory_utilization) == (True, "colocate", 0.5)
    assert (args.temperature, args.beta, args.seed, args.max_completion_length) == (0.7, 0.04, 3, 12)
    assert args.use_cpu and not args.bf16 and not args.gradient_checkpointing


def test_two_accelerate_processes_finish_the_run(tmp_path, tiny_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2", "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "osint_selfplay", "train",
           "--set", *micro_overrides(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rounds"][0]["answerer"]["steps"] == 1
    assert summary["evaluation"]["n_tasks"] == 12
