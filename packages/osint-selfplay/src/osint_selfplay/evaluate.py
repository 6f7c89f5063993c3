"""The run's closing evaluation, through osint-eval: held-out greedy accuracy of the untrained model,
the warm start and the final answerer, next to the random-guess and shortcut baselines (the summary names
the strongest) and, for multi-turn runs, the tool-only oracle and an optional single-turn answerer, on the
same tasks (paired)."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from osint_eval.evaluate import evaluate, extend
from osint_eval.metrics import compare, summarize
from osint_eval.policies import SHORTCUTS_BY_MODE, HFPolicy, OraclePolicy, RandomGuessPolicy, make_policy
from osint_eval.report import write_report
from osint_eval.schema import load_report
from osint_eval.tasks import TaskSet
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.errors import TaskError
from osint_gym.tasks import verified
from osint_selfplay.artifacts import atomic_write_json
from osint_selfplay.config import RunConfig
from osint_selfplay.curves import run_curves, selfplay_curves
from osint_selfplay.errors import ConfigError
from osint_selfplay.results import (
    EvaluationResult,
    Headline,
    SingleTurnReference,
    SplitFigures,
    SubsetFigures,
    ZeroVariance,
)
from osint_selfplay.state import RoundSummary, RunState, RunSummary


class EvaluatedRun(Protocol):
    """What the closing evaluation reads of a run (`osint_selfplay.loop.SelfPlayRun` is one): its config, its
    folder and its summary so far (the rounds' figures and curves, an earlier evaluation)."""

    cfg: RunConfig
    root: Path
    summary: RunSummary


HEADLINE = ("success", "reward", "tool_calls", "critical_steps")  # the run summary's per-model figures
DRY_RUN_EVAL_TASKS = 16  # a dry run is a smoke test: it evaluates at most this many tasks, and says so


def eval_task_limit(limit: int, dry_run: bool) -> int:
    """How many held-out tasks the closing evaluation runs: ``limit``, or at most a handful in a dry run."""
    return min(limit, DRY_RUN_EVAL_TASKS) if dry_run else limit


def heldout_tasks(tasks_ref: str, difficulties: list[str], limit: int) -> list[Any]:
    tasks = [t for t in benchmark_tasks(tasks_ref) if not difficulties or t.difficulty in difficulties]
    return tasks[:limit]


def check_heldout(cfg: Any) -> None:
    """Before anything is trained: every held-out split must hold tasks of ``eval.difficulties``, and every
    held-out task must be answerable under the budgets the multi-turn answerer is evaluated with (an observation
    budget that cuts the evidence makes a task unsolvable); a clear error names the setting to change."""
    ev = cfg.eval
    if not ev.enabled:
        return
    budgets = cfg.budgets()
    for split in eval_splits(cfg):
        tasks = heldout_tasks(split, ev.difficulties, eval_task_limit(ev.limit, cfg.dry_run))
        if not tasks:
            raise ConfigError(f"{split} holds no task of eval.difficulties {ev.difficulties}; "
                              "change eval.difficulties or eval.extra_splits")
        if cfg.answerer.mode != "multi_turn":
            continue
        world, bad = benchmark_world(split), 0
        for task in tasks:
            try:
                verified(world, task, budgets)
            except TaskError:
                bad += 1
        if bad:
            raise ConfigError(f"{bad} of the {split} evaluation tasks are not solvable under the answerer's budgets "
                              f"({budgets.to_dict()}); raise episode.max_observation_chars")


def eval_splits(cfg: Any) -> list[str]:
    """The held-out splits of the closing evaluation: ``eval.tasks``, then ``eval.extra_splits``."""
    return [cfg.eval.tasks, *cfg.eval.extra_splits]


def report_dir(root: Path, cfg: Any, split: str) -> Path:
    """Where a split's report goes: ``eval/`` for ``eval.tasks``, ``eval/<version>-<split>/`` for the others."""
    return root / "eval" if split == cfg.eval.tasks else root / "eval" / split.replace(":", "-")


def _zero_variance_groups(rounds: list[RoundSummary]) -> dict[str, ZeroVariance]:
    """Answerer groups whose rewards had no variance, summed over rounds, by task source."""
    zero_var: dict[str, ZeroVariance] = {}
    for rnd in rounds:
        for source, z in ((rnd.answerer.zero_variance_by_source if rnd.answerer else None) or {}).items():
            acc = zero_var.setdefault(source, ZeroVariance())
            acc.groups += z.groups
            acc.zero_variance += z.zero_variance
    for acc in zero_var.values():
        acc.share = acc.zero_variance / acc.groups if acc.groups else float("nan")
    return zero_var


def _run_kwargs(cfg: Any, batch_size: int) -> dict[str, Any]:
    """osint-eval's runner arguments that serve the held-out tasks as the answerer was trained."""
    a = cfg.answerer
    if a.mode == "multi_turn":
        return {"spec": cfg.episode.spec(), "batch_size": batch_size}
    return {
        "context_mode": a.context_mode,
        "n_distractors": a.n_distractors,
        "decoys": a.decoys,
        "batch_size": batch_size,
    }


TRAINED = ("warm_start", "final", "control", "uniform_control", "curriculum_control", "reverse_control",
           "imitation_reference")
RUN_MODELS = ("untrained", *TRAINED)  # the run's own models; every other evaluated policy is scripted
# the random type-correct guess under its osint-eval policy name; runs made before it was renamed wrote "random_guess"
GUESS_NAMES = ("random-guess", "random_guess")


def model_order(names: list[str]) -> list[str]:
    """The summary's order of evaluated policies: the run's own models, the scripted baselines (random
    guess first), the oracle last. summary.json is written with sorted keys, so its readers reorder."""
    scripted = [n for n in names if n not in RUN_MODELS and n not in (*GUESS_NAMES, "oracle")]
    return [n for n in (*RUN_MODELS, *GUESS_NAMES, *scripted, "oracle") if n in names]


def comparison_order(names: list[str], comparisons: list[str]) -> list[str]:
    """``comparisons`` ("candidate vs base") in the order the evaluation ran them (`_pairs`), then any other."""
    ordered = model_order(names)
    canonical = [
        f"{c} vs {b}" for b, c in _pairs(ordered, [n for n in ordered if n not in RUN_MODELS and n != "oracle"])
    ]
    return [c for c in canonical if c in comparisons] + [c for c in comparisons if c not in canonical]


def _pairs(names: list[str], baselines: list[str]) -> list[tuple[str, str]]:
    """(base, candidate) pairs: the run's own steps, the control, then every scripted baseline against each
    trained model."""
    own = [("warm_start", "final"), ("control", "final"), ("uniform_control", "final"), ("curriculum_control", "final"),
           ("reverse_control", "final"), ("imitation_reference", "final"), ("warm_start", "control"),
           ("warm_start", "uniform_control"), ("warm_start", "curriculum_control"), ("warm_start", "reverse_control"),
           ("warm_start", "imitation_reference"), ("untrained", "warm_start"), ("untrained", "final")]
    pairs = own + [(b, c) for b in baselines for c in TRAINED]
    return [(b, c) for b, c in pairs if b in names and c in names]


def subset_figures(
    episodes: dict[str, list[Any]], pairs: list[tuple[str, str]], difficulties: tuple[str, ...], seed: int
) -> SubsetFigures:
    """Success of every model and the paired deltas on the tasks of ``difficulties`` (easy + medium, or the hard
    tasks of every evaluated split), from per-task episodes ({model: episodes, in the same task order})."""
    eps = {name: [e for e in runs if e.difficulty in difficulties] for name, runs in episodes.items()}
    if not any(eps.values()):
        return SubsetFigures(difficulties=list(difficulties))
    return SubsetFigures(
        difficulties=list(difficulties), n_tasks=len(next(iter(eps.values()))),
        success={name: summarize(e, seed=seed, name=name).overall.success for name, e in eps.items()},
        comparisons={f"{c} vs {b}": compare(eps[b], eps[c], seed=seed, names=(b, c)).overall
                     for b, c in pairs if eps.get(b) and eps.get(c)},
    )


def _policies(cfg: Any, paths: dict[str, str], *, scripted: bool = True) -> dict[str, Any]:
    """Greedy policies of the models in ``paths``, then (``scripted``) the baselines and the oracle."""
    ev, a = cfg.eval, cfg.answerer
    multi = a.mode == "multi_turn"
    tokens = (
        cfg.grpo_answerer.max_completion_length
        if not multi
        else min(cfg.grpo_answerer.max_completion_length, ev.max_new_tokens)
    )
    policies: dict[str, Any] = {name: HFPolicy(p, batch_size=ev.batch_size, max_new_tokens=tokens, temperature=0.0,
                                                         decoding=cfg.model.decoding)
                                for name, p in paths.items()}
    if not scripted:
        return policies
    policies["random-guess"] = RandomGuessPolicy(cfg.seed)  # and the shortcuts: the report names the strongest
    policies |= {n: make_policy(n, seed=cfg.seed) for n in SHORTCUTS_BY_MODE[a.mode]}
    if multi:
        policies["oracle"] = OraclePolicy()
    return policies


def _taskset(cfg: Any, split: str) -> TaskSet:
    ev = cfg.eval
    return TaskSet(split, benchmark_world(split), heldout_tasks(split, ev.difficulties,
                                                                  eval_task_limit(ev.limit, cfg.dry_run)), split)


def evaluate_run(run: EvaluatedRun, state: RunState, controls: dict[str, str] | None = None) -> EvaluationResult:
    """The closing evaluation of the untrained model, the warm start, the final answerer, the
    ``controls`` trained in the job ({name: model}) and the scripted baselines, paired."""
    cfg = run.cfg
    a = cfg.answerer
    paths: dict[str, str] = {"untrained": state.bases.answerer} if cfg.eval.include_untrained else {}
    if cfg.warm_start_on:
        paths["warm_start"] = state.warm.answerer
    paths["final"] = state.current.answerer
    paths |= controls or {}
    policies = _policies(cfg, paths)
    pairs = _pairs(list(policies), [*GUESS_NAMES, *SHORTCUTS_BY_MODE[a.mode]])
    title = "osint-selfplay closing evaluation" + (" (dry run)" if cfg.dry_run else "")
    reports = {split: evaluate(policies, _taskset(cfg, split), mode=a.mode, seed=cfg.seed, comparisons=pairs,
                               config=cfg.to_dict(), title=f"{title} on {split}", progress=True, dry_run=cfg.dry_run,
                               workers=cfg.eval.workers, **_run_kwargs(cfg, cfg.eval.batch_size))
               for split in eval_splits(cfg)}
    single_turn = _single_turn_reference(cfg, _taskset(cfg, cfg.eval.tasks))
    for p in policies.values():
        p.close()
    return _write(run, reports, paths, pairs, single_turn)


def evaluate_controls(run: EvaluatedRun, controls: dict[str, str]) -> EvaluationResult:
    """Add controls trained after the job ({name: model}) to its evaluation: only they are run, on each report's
    tasks, and paired with every model in it (`osint_eval.evaluate.extend`)."""
    cfg, ev = run.cfg, run.cfg.eval
    before = run.summary.evaluation or EvaluationResult()
    paths = {**before.models, **controls}
    reports = {}
    for split in eval_splits(cfg):
        report = load_report(report_dir(run.root, cfg, split) / "report.json")
        policies = _policies(
            cfg, {name: path for name, path in controls.items() if name not in report.models}, scripted=False
        )
        pairs = _pairs([*report.models, *policies], [*GUESS_NAMES, *SHORTCUTS_BY_MODE[cfg.answerer.mode]])
        try:
            reports[split] = extend(report, policies, _taskset(cfg, split), comparisons=pairs, workers=ev.workers,
                                    **_run_kwargs(cfg, ev.batch_size))
        finally:
            for p in policies.values():
                p.close()
    return _write(run, reports, paths, pairs, before.single_turn_reference)


def _split_figures(split: Any, pairs: list[tuple[str, str]], seed: int, **more: Any) -> SplitFigures:
    """One split's figures for the run summary from its report ``split`` (with ``more`` of its fields): every
    model's headline and success by difficulty, the paired comparisons, the strongest scripted baseline and the
    easy + medium subset."""
    return SplitFigures(
        tasks=split.tasks.source,
        n_tasks=split.tasks.n,
        headline={name: Headline(**{k: getattr(m.overall, k) for k in HEADLINE}) for name, m in split.models.items()},
        by_difficulty={name: {d: b.success for d, b in m.by_difficulty.items()} for name, m in split.models.items()},
        easy_medium=dataclasses.replace(subset_figures(split.episodes, pairs, ("easy", "medium"), seed),
                                        splits=[split.tasks.source]),
        comparisons={k: c.overall for k, c in split.comparisons.items()},
        strongest_baseline=split.strongest_baseline,
        **more,
    )


def _write(run: EvaluatedRun, reports: dict[str, Any], paths: dict[str, str], pairs: list[tuple[str, str]],
           single_turn: SingleTurnReference | None) -> EvaluationResult:
    """Write each split's report into the run folder (the run's curves in the first) and return the run
    summary's evaluation figures: the first split's at the top, the others under ``splits``, and the hard
    tasks of every split together under ``hard``."""
    cfg = run.cfg
    curves = [*run_curves(run.summary.rounds, run.summary.dev_curve_start, cfg.eval.curve_split),
              *selfplay_curves(run.summary.rounds)]
    # the run folder is the run's own (its manifest and --resume guard it):
    # a resumed evaluation replaces a partial report
    for split, report in reports.items():
        folder = report_dir(run.root, cfg, split)
        reports[split] = replace(report, out_dir=str(folder), curves=curves if split == cfg.eval.tasks else [])
        write_report(reports[split], folder, overwrite=True)
    main = reports[cfg.eval.tasks]
    names = [n for n in main.episodes if all(n in r.episodes for r in reports.values())]
    pooled = {n: [e for r in reports.values() for e in r.episodes[n]] for n in names}
    sampled = [rnd.sampled for rnd in run.summary.rounds]
    hard = subset_figures(pooled, pairs, ("hard",), cfg.seed)
    hard.splits = list(reports)
    result = _split_figures(main, pairs, cfg.seed).extended(
        EvaluationResult,
        dry_run=cfg.dry_run,
        mode=cfg.answerer.mode,
        context_mode=cfg.answerer.context_mode,
        models=paths,
        splits={s: _split_figures(r, pairs, cfg.seed, report=str(report_dir(run.root, cfg, s) / "report.md"))
                for s, r in reports.items() if s != cfg.eval.tasks},
        hard=hard,
        generator_valid_rate=[s.valid_rate if s else None for s in sampled],
        answerer_solve_rate_on_generated=[s.mean_solve_rate if s else None for s in sampled],
        zero_variance_groups=_zero_variance_groups(run.summary.rounds),
        single_turn_reference=single_turn,
        report=str(run.root / "eval" / "report.md"),
        curves=[c.to_dict() for c in curves],
    )
    atomic_write_json(run.root / "eval" / "summary.json", result.to_dict())
    return result


def _single_turn_reference(cfg: Any, taskset: Any) -> SingleTurnReference | None:
    ev = cfg.eval
    if cfg.answerer.mode != "multi_turn" or not ev.single_turn_model:
        return None
    if not Path(ev.single_turn_model).exists():
        return SingleTurnReference(model=ev.single_turn_model, missing=True)
    policy = HFPolicy(ev.single_turn_model, batch_size=ev.batch_size, max_new_tokens=64, temperature=0.0,
                      decoding=cfg.model.decoding)
    try:
        st = evaluate({"single_turn": policy}, taskset, mode="single_turn", seed=cfg.seed, progress=True,
                      context_mode="triples", n_distractors=6, batch_size=ev.batch_size)
    finally:
        policy.close()
    return SingleTurnReference(model=ev.single_turn_model, success=st.models["single_turn"].overall.success)
