"""The run's controls and its reference, each the answer to one question about its self-play rounds:

- (a) the **equal-compute control** (did the rounds beat more SFT with the same compute?): the warm start as
  it would have run with the rounds' compute added to its budget, in its own optimizer steps (`budget_steps`).
  A warm start whose learning rate decays saved its state where the decay began (`osint_selfplay.sft`);
  the control resumes there, runs the stable phase on and decays over the same share of the longer budget.
  A warm start at a constant rate is continued from its end, on the demonstrations it had not reached;
- (b) the **uniform-task control** (did self-play tasks beat uniform ones?): every round's answerer phase
  run again, chained from the model the first one started from, with the same GRPO steps, seeds and seed-task
  stream, on osint-gym seed tasks only (no generated task);
- the **curriculum arm** (did the learned generator beat its scripted control?): the same chain on the scripted
  frontier curriculum's frontier tasks of each round (`osint_selfplay.frontier`) instead of the learned
  generator's, the answerer's compute equal in both arms;
- **R3's fixed schedule** (did the learned generator's rungs beat a fixed reverse curriculum?): the same chain on
  the seed tasks, each started at a rung that slides from the last step of its demonstration back to the whole
  episode in stages (`osint_selfplay.data.reverse_rungs`, arXiv 2402.05808), no generator;
- the **imitation reference** (what does imitation give where demonstrations exist?): (a) with a third of every
  step's rows oracle demonstrations of hard tasks. A reference, not a control: self-play never sees them.

Each trains inside the job (``warm_start.control``, ``answerer.uniform_control``, ``generator.curriculum_control``,
``answerer.reverse_control``, ``warm_start.imitation_control``) or after it, from the finished run's folder
(``osint-selfplay controls RUN_DIR``, `osint_selfplay.loop.after_run`), which adds them to the run's paired evaluation
without running the models already evaluated again. All are phases with markers, so an interrupted ``controls``
continues where it stopped.

The loop hands in what the controls need of it as a `ControlHost` (its config, summary, folders and phases) and
writes what `train` returns into its summary (`RunSummary.record`): this module never imports the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from osint_selfplay import data, phases
from osint_selfplay.artifacts import read_jsonl
from osint_selfplay.config import RunConfig
from osint_selfplay.errors import ConfigError
from osint_selfplay.results import (
    AnswererResult,
    ArmResult,
    ControlResult,
    DemonstrationCounts,
    PhaseResult,
    SFTResult,
    TaskMix,
    TrainingResult,
)
from osint_selfplay.state import ControlResults, Models, RoundSummary, RunSummary
from osint_selfplay.worlds import WorldPool

P = TypeVar("P", bound=PhaseResult)
UNIFORM_PHASE = "answerer_uniform"
CURRICULUM_PHASE = "answerer_curriculum"
REVERSE_PHASE = "answerer_reverse"
IMITATION_PHASE = "imitation_reference"
# the imitation reference draws this share of every step's rows from hard demonstrations: hard is one of the three
# difficulties, as in the uniform-task control's seed tasks of every difficulty
IMITATION_SHARE = 1 / 3


class ControlHost(Protocol):
    """What the controls need of the run they control (`osint_selfplay.loop.SelfPlayRun` is one): its config,
    worlds, summary so far (each phase's typed result), its folders, and its way of running a phase and an answerer
    phase."""

    cfg: RunConfig
    pool: WorldPool
    summary: RunSummary

    def run_dir(self, round_index: int | None, name: str) -> Path: ...

    def run_phase(self, round_index: int | None, name: str, fn: Callable[[], P], kind: type[P], *,
                  collective: bool = False) -> P: ...

    def answerer_phase(self, r: int, current: Models, name: str, *, generated_from: str | None = "tasks.jsonl",
                       as_step: str | None = None, reverse: bool = False) -> AnswererResult: ...


def budget_steps(rounds: list[RoundSummary], warm: SFTResult) -> tuple[int, float]:
    """(SFT steps, seconds): the compute of the self-play rounds in warm-start optimizer steps. A phase that
    trained packed SFT steps (expert relabelling) counts those steps, and the rest of its wall time
    converted; every other second (playing, GRPO, the generator, sampling) is converted at the rate the
    warm start trained on this machine (its steps over its training seconds). Counting steps, not seconds,
    keeps the control's training the same whether the machine runs faster or slower while it trains."""
    rate = float(warm.steps or 0) / float(warm.seconds or 1.0)
    steps, seconds = 0.0, 0.0
    for rnd in rounds:
        for phase in rnd.phases():
            # a training phase's dev curve is not its compute
            curve = (phase.curve_seconds or 0.0) if isinstance(phase, TrainingResult) else 0.0
            wall = float(phase.wall_seconds or 0.0) - float(curve)
            seconds += wall
            trained, trained_seconds = phase.sft_compute()
            steps += trained + max(0.0, wall - trained_seconds) * rate
    return round(steps), seconds


def _continue_warm_start(run: ControlHost, name: str, label: str,
                         extra: Callable[[str], tuple[list[dict[str, Any]], DemonstrationCounts]] | None = None
                         ) -> ControlResult:
    """The warm start given the self-play rounds' compute (`budget_steps`) on top of its own, into phase ``name``;
    ``extra``: a function of the warm start's model that makes more conversations (in its template's format),
    `IMITATION_SHARE` of every step's rows (the imitation reference's hard demonstrations)."""
    cfg = run.cfg
    role = cfg.warm_start_role or "answerer"
    start = run.summary.warm_start or SFTResult()
    steps, seconds = budget_steps(run.summary.rounds, start)
    out = run.run_dir(None, name)
    branch = run.run_dir(None, f"warm_start/{role}") / phases.DECAY_START
    if cfg.warm_start.decay_fraction > 0 and not cfg.dry_run and not branch.is_file():
        raise ConfigError(
            f"the {label} resumes the warm start where its decay began, and {branch} is missing "
            "(its warm start never reached the decay, or the run predates osint-selfplay saving it): "
            "train it inside the job (warm_start.control, warm_start.imitation_control)"
        )
    warm_models = run.summary.warm_start_models
    if warm_models is None:
        raise ConfigError(f"the {label} continues the warm start, and this run has none")

    def fn() -> ControlResult:
        rows = read_jsonl(run.run_dir(None, f"warm_start/{role}") / "demonstrations.jsonl")
        more, counts = extra(warm_models.answerer) if extra is not None else ([], None)
        metrics = phases.run_sft(
            warm_models.answerer,
            rows,
            cfg,
            out,
            "answerer",
            cfg.model.answerer,
            extra_steps=steps,
            skip_rows=int(start.next_row or 0),
            label=label,
            branch=branch if branch.is_file() else None,
            warm_steps=int(start.steps or 0),
            extra=more,
            extra_share=IMITATION_SHARE if more else 0.0,
            precision=run.summary.precision,
        )
        return metrics.extended(ControlResult, budget_seconds=seconds, budget_steps=steps, extra_demonstrations=counts)

    result = run.run_phase(None, name, fn, ControlResult)
    result.model = str(out / "final_model")
    return result


def train_equal_compute(run: ControlHost) -> ControlResult:
    """(a) More SFT on the same demonstrations: the warm start given the rounds' compute."""
    return _continue_warm_start(run, "control", "equal-compute SFT control")


def train_imitation_reference(run: ControlHost) -> ControlResult:
    """(c) The imitation reference: the same continuation, a third of every step's rows oracle demonstrations of hard
    tasks (`data.hard_demonstrations`), never shown to the self-play run: what imitation gives where demonstrations
    exist."""
    cfg = run.cfg
    n = round(cfg.warm_start.answerer_examples * IMITATION_SHARE)

    def hard(model: str) -> tuple[list[dict[str, Any]], DemonstrationCounts]:
        return data.hard_demonstrations(run.pool, cfg, n, native=phases.renders_tools(model))

    return _continue_warm_start(run, IMITATION_PHASE, "imitation reference (hard demonstrations)", extra=hard)


def train_answerer_arm(run: ControlHost, name: str, generated_from: str | None, reverse: bool = False) -> ArmResult:
    """Every round's answerer phase again, chained from the model the first one started from, each on the same
    seed tasks and GRPO seed as the round's own, with the round's generated tasks in ``generated_from`` (a file of
    its sample phase; None: seed tasks only), into phase folders ``name``; ``reverse``: those seed tasks at R3's
    rungs (`data.reverse_rungs`). The rounds' generator phases do not run again: with model_topology = 'shared' their
    updates of the shared model between rounds are left out."""
    phases_ = [rnd.answerer for rnd in run.summary.rounds]
    if not phases_ or not all(phases_):
        raise ConfigError(f"the {name} control repeats every round's answerer phase; this run lacks one")
    start = phases_[0].start_model if phases_[0] else None
    if not start:
        raise ConfigError("the run's first answerer phase does not record the model it started from (an older run); "
                          "train the control inside the job")
    results = []
    for r in range(len(phases_)):
        results.append(run.answerer_phase(r, Models.both(start), name, generated_from=generated_from,
                                          as_step="answerer", reverse=reverse))
        start = str(run.run_dir(r, name) / "final_model")
    return ArmResult(rounds=results, model=start, mix=[res.mix or TaskMix() for res in results],
                     reward_first=results[0].reward_first, reward_last=results[-1].reward_last)


def train_uniform_tasks(run: ControlHost) -> ArmResult:
    """(b) The same GRPO on uniform seed tasks (the difficulties of ``answerer.seed_difficulties``). When no
    generated task reached any round's answerer, its rows already were those seed tasks (the same stream and
    order): the control would be the same run, so nothing is trained and the result says so."""
    mixes = [rnd.answerer.mix if rnd.answerer else None for rnd in run.summary.rounds]
    if run.summary.rounds and not any(m and m.generated for m in mixes):
        return ArmResult(same_as_final=True, generated=0)
    return train_answerer_arm(run, UNIFORM_PHASE, None)


def train(run: ControlHost, *, equal_compute: bool, uniform: bool, curriculum: bool = False,
          imitation: bool = False, reverse: bool = False) -> ControlResults:
    """Train the controls asked for; returns {summary field: result} (``control``, ``uniform_control``,
    ``curriculum_control``, ``reverse_control``, ``imitation_reference``), each result's ``model`` the one to
    evaluate (none: a uniform control that would repeat the run). The caller writes them into its summary."""
    results: ControlResults = {}
    if equal_compute:  # a packed warm start: checked when the run is built (`SelfPlayRun`) or by `loop.after_run`
        results["control"] = train_equal_compute(run)
    if uniform:
        results["uniform_control"] = train_uniform_tasks(run)
    if curriculum:
        results["curriculum_control"] = train_answerer_arm(run, CURRICULUM_PHASE, "curriculum_tasks.jsonl")
    if reverse:  # R3's fixed schedule: seed tasks from the last step back to the whole episode, no generator
        results["reverse_control"] = train_answerer_arm(run, REVERSE_PHASE, None, reverse=True)
    if imitation:
        results["imitation_reference"] = train_imitation_reference(run)
    return results


def models(results: ControlResults) -> dict[str, str]:
    """{name: model} of the trained controls in ``results`` (`train`'s), to evaluate."""
    return {name: result.model for name, result in results.items() if result.model}
