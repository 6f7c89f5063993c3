"""The run's two controls, each the answer to one question about its self-play rounds:

- the **equal-compute control** (did the rounds beat more SFT with the same compute?): the warm start as
  it would have run with the rounds' compute added to its budget, in its own optimizer steps (`budget_steps`).
  A warm start whose learning rate decays saved its state where the decay began (`osint_selfplay.sft`);
  the control resumes there, runs the stable phase on and decays over the same share of the longer budget. A warm start at a
  constant rate is continued from its end, on the demonstrations it had not reached;
- the **uniform-task control** (did self-play tasks beat uniform ones?): the last round's answerer
  phase run again from the model it started from, with the same GRPO steps, seed and seed-task
  stream, on osint-gym seed tasks only (no generated task).

Either trains inside the job (``warm_start.control``, ``answerer.uniform_control``) or after it,
from the finished run's folder (``osint-selfplay controls RUN_DIR``, `after_run`), which adds the
controls to the run's paired evaluation without running the models already evaluated again. Both
are phases with markers, so an interrupted ``controls`` continues where it stopped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osint_selfplay import phases
from osint_selfplay.artifacts import atomic_write_json, read_jsonl
from osint_selfplay.errors import ConfigError

if TYPE_CHECKING:
    from osint_selfplay.loop import SelfPlayRun

UNIFORM_PHASE = "answerer_uniform"


def budget_steps(rounds: list[dict[str, Any]], warm: dict[str, Any]) -> tuple[int, float]:
    """(SFT steps, seconds): the compute of the self-play rounds in warm-start optimizer steps. A phase that
    trained packed SFT steps (expert relabelling) counts those steps, and the rest of its wall time
    converted; every other second (playing, GRPO, the generator, sampling) is converted at the rate the
    warm start trained on this machine (its steps over its training seconds). Counting steps, not seconds,
    keeps the control's training the same whether the machine runs faster or slower while it trains."""
    rate = float(warm.get("steps") or 0) / float(warm.get("seconds") or 1.0)
    steps, seconds = 0.0, 0.0
    for rnd in rounds:
        for phase in rnd.values():
            if not isinstance(phase, dict):
                continue
            wall = float(phase.get("wall_seconds") or 0.0) - float(
                phase.get("curve_seconds") or 0.0
            )  # not the dev curve's
            seconds += wall
            trained = int(phase.get("sft_steps") or 0)
            steps += trained + max(0.0, wall - float(phase.get("sft_seconds") or 0.0)) * rate
    return round(steps), seconds


def train_equal_compute(run: SelfPlayRun) -> dict[str, Any]:
    """The warm start given the self-play rounds' compute (`budget_steps`) on top of its own."""
    cfg = run.cfg
    role = "shared" if cfg.model_topology == "shared" else "answerer"
    start = run.phases.done(None, f"warm_start_{role}") or {}
    steps, seconds = budget_steps(run.summary["rounds"], start)
    out = run._dir(None, "control")
    branch = run._dir(None, f"warm_start/{role}") / phases.DECAY_START
    if cfg.warm_start.decay_fraction > 0 and not cfg.dry_run and not branch.is_file():
        raise ConfigError(f"the equal-compute control resumes the warm start where its decay began, and {branch} is missing "
                          "(its warm start never reached the decay, or the run predates osint-selfplay saving it): "
                          "train the control inside the job with warm_start.control = true")

    def fn() -> dict[str, Any]:
        rows = read_jsonl(run._dir(None, f"warm_start/{role}") / "demonstrations.jsonl")
        metrics = phases.run_sft(
            run.summary["warm_start_models"]["answerer"],
            rows,
            cfg,
            out,
            "answerer",
            cfg.model.answerer,
            extra_steps=steps,
            skip_rows=int(start.get("next_row") or 0),
            label="equal-compute SFT control",
            branch=branch if branch.is_file() else None,
            warm_steps=int(start.get("steps") or 0),
        )
        return {**metrics, "budget_seconds": seconds, "budget_steps": steps}

    run._phase(None, "control", fn)
    return {**(run.phases.done(None, "control") or {}), "model": str(out / "final_model")}


def train_uniform_tasks(run: SelfPlayRun) -> dict[str, Any]:
    """The last round's answerer phase on uniform seed tasks. When no generated task reached that
    phase its rows already were those seed tasks (the same stream and order): the control would be the
    same run, so nothing is trained and the result says so."""
    r = len(run.summary["rounds"]) - 1
    last = run.summary["rounds"][r].get("answerer") if r >= 0 else None
    if not last:
        raise ConfigError("the uniform-task control repeats the last round's answerer phase; this run has none")
    if not last.get("mix", {}).get("generated"):
        return {"round": r, "same_as_final": True, "generated": 0}
    start = last.get("start_model")
    if not start:
        raise ConfigError("the run's last answerer phase does not record the model it started from (an older run); "
                          "train the uniform-task control inside the job with answerer.uniform_control = true")
    result = run._answerer_phase(r, {"answerer": start, "generator": start}, UNIFORM_PHASE, uniform=True)
    return {**result, "round": r, "model": str(run._dir(r, UNIFORM_PHASE) / "final_model")}


def train(run: SelfPlayRun, *, equal_compute: bool, uniform: bool) -> dict[str, str]:
    """Train the controls asked for into ``run.summary``; returns {name: model} of those to evaluate."""
    models: dict[str, str] = {}
    if equal_compute:  # a packed warm start: checked when the run is built (`SelfPlayRun`) or by `after_run`
        run.summary["control"] = train_equal_compute(run)
        models["control"] = run.summary["control"]["model"]
    if uniform:
        run.summary["uniform_control"] = train_uniform_tasks(run)
        if run.summary["uniform_control"].get("model"):
            models["uniform_control"] = run.summary["uniform_control"]["model"]
    return models


def after_run(run_dir: str | Path) -> dict[str, Any]:
    """Train the controls a finished run lacks (the equal-compute one where its warm start was packed),
    add them to its evaluation (paired on the same tasks) and return the updated run summary."""
    from osint_selfplay.config import config_from_dict
    from osint_selfplay.evaluate import evaluate_controls
    from osint_selfplay.loop import SelfPlayRun

    root = Path(run_dir)
    manifest, summary_path = root / "run.json", root / "summary.json"
    if not manifest.is_file():
        raise ConfigError(f"{str(root)!r} holds no osint-selfplay run (no run.json)")
    if not summary_path.is_file():
        raise ConfigError(f"the run in {str(root)!r} has not finished (no summary.json); finish it with "
                          "`osint-selfplay train --config ... --resume` first")
    try:
        saved = json.loads(manifest.read_text())["config"]
        summary = json.loads(summary_path.read_text())
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ConfigError(f"{str(root)!r}: run.json or summary.json is malformed ({e})") from None
    cfg = config_from_dict({**saved, "output_dir": str(root)})
    if cfg.dry_run:
        raise ConfigError(f"the run in {str(root)!r} is a dry run: it trained nothing to control")
    run = SelfPlayRun(cfg, resume=True)
    run.summary = summary
    models = train(run, equal_compute=cfg.warm_start_on and cfg.warm_start.packing and not summary.get("control"),
                   uniform=not summary.get("uniform_control"))
    if cfg.eval.enabled and models:
        summary["evaluation"] = evaluate_controls(run, models)
    if run.dist.is_main:
        atomic_write_json(summary_path, summary)
    return summary
