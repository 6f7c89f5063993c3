"""The run's two controls, each the answer to one question about its self-play rounds:

- the **equal-compute control** (did the rounds beat more SFT with the same compute?): the warm start as
  it would have run with the rounds' compute added to its budget, in its own optimizer steps (`budget_steps`).
  A warm start whose learning rate decays saved its state where the decay began (`osint_selfplay.sft`);
  the control resumes there, runs the stable phase on and decays over the same share of the longer budget.
  A warm start at a constant rate is continued from its end, on the demonstrations it had not reached;
- the **uniform-task control** (did self-play tasks beat uniform ones?): the last round's answerer
  phase run again from the model it started from, with the same GRPO steps, seed and seed-task
  stream, on osint-gym seed tasks only (no generated task).

Either trains inside the job (``warm_start.control``, ``answerer.uniform_control``) or after it,
from the finished run's folder (``osint-selfplay controls RUN_DIR``, `osint_selfplay.loop.after_run`), which adds the
controls to the run's paired evaluation without running the models already evaluated again. Both
are phases with markers, so an interrupted ``controls`` continues where it stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osint_selfplay import phases
from osint_selfplay.artifacts import read_jsonl
from osint_selfplay.errors import ConfigError
from osint_selfplay.state import Metrics, Models, RoundSummary

if TYPE_CHECKING:  # loop drives the controls; the run is only a type here, so there is no import cycle
    from osint_selfplay.loop import SelfPlayRun

UNIFORM_PHASE = "answerer_uniform"


def budget_steps(rounds: list[RoundSummary], warm: Metrics) -> tuple[int, float]:
    """(SFT steps, seconds): the compute of the self-play rounds in warm-start optimizer steps. A phase that
    trained packed SFT steps (expert relabelling) counts those steps, and the rest of its wall time
    converted; every other second (playing, GRPO, the generator, sampling) is converted at the rate the
    warm start trained on this machine (its steps over its training seconds). Counting steps, not seconds,
    keeps the control's training the same whether the machine runs faster or slower while it trains."""
    rate = float(warm.get("steps") or 0) / float(warm.get("seconds") or 1.0)
    steps, seconds = 0.0, 0.0
    for rnd in rounds:
        for phase in rnd.phases():
            wall = float(phase.get("wall_seconds") or 0.0) - float(
                phase.get("curve_seconds") or 0.0
            )  # not the dev curve's
            seconds += wall
            trained = int(phase.get("sft_steps") or 0)
            steps += trained + max(0.0, wall - float(phase.get("sft_seconds") or 0.0)) * rate
    return round(steps), seconds


def train_equal_compute(run: SelfPlayRun) -> Metrics:
    """The warm start given the self-play rounds' compute (`budget_steps`) on top of its own."""
    cfg = run.cfg
    role = "shared" if cfg.model_topology == "shared" else "answerer"
    start = run.markers.done(None, f"warm_start_{role}") or {}
    steps, seconds = budget_steps(run.summary.rounds, start)
    out = run.run_dir(None, "control")
    branch = run.run_dir(None, f"warm_start/{role}") / phases.DECAY_START
    if cfg.warm_start.decay_fraction > 0 and not cfg.dry_run and not branch.is_file():
        raise ConfigError(
            f"the equal-compute control resumes the warm start where its decay began, and {branch} is missing "
            "(its warm start never reached the decay, or the run predates osint-selfplay saving it): "
            "train the control inside the job with warm_start.control = true"
        )
    warm_models = run.summary.warm_start_models
    if warm_models is None:
        raise ConfigError("the equal-compute control continues the warm start, and this run has none")

    def fn() -> dict[str, Any]:
        rows = read_jsonl(run.run_dir(None, f"warm_start/{role}") / "demonstrations.jsonl")
        metrics = phases.run_sft(
            warm_models.answerer,
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

    run.run_phase(None, "control", fn)
    return {**(run.markers.done(None, "control") or {}), "model": str(out / "final_model")}


def train_uniform_tasks(run: SelfPlayRun) -> Metrics:
    """The last round's answerer phase on uniform seed tasks. When no generated task reached that
    phase its rows already were those seed tasks (the same stream and order): the control would be the
    same run, so nothing is trained and the result says so."""
    r = len(run.summary.rounds) - 1
    last = run.summary.rounds[r].answerer if r >= 0 else None
    if not last:
        raise ConfigError("the uniform-task control repeats the last round's answerer phase; this run has none")
    if not last.get("mix", {}).get("generated"):
        return {"round": r, "same_as_final": True, "generated": 0}
    start = last.get("start_model")
    if not start:
        raise ConfigError("the run's last answerer phase does not record the model it started from (an older run); "
                          "train the uniform-task control inside the job with answerer.uniform_control = true")
    result = run.answerer_phase(r, Models.both(start), UNIFORM_PHASE, uniform=True)
    return {**result, "round": r, "model": str(run.run_dir(r, UNIFORM_PHASE) / "final_model")}


def train(run: SelfPlayRun, *, equal_compute: bool, uniform: bool) -> dict[str, str]:
    """Train the controls asked for into ``run.summary``; returns {name: model} of those to evaluate."""
    models: dict[str, str] = {}
    if equal_compute:  # a packed warm start: checked when the run is built (`SelfPlayRun`) or by `loop.after_run`
        run.summary.control = train_equal_compute(run)
        models["control"] = run.summary.control["model"]
    if uniform:
        run.summary.uniform_control = train_uniform_tasks(run)
        if run.summary.uniform_control.get("model"):
            models["uniform_control"] = run.summary.uniform_control["model"]
    return models
