"""The run's closing evaluation, through osint-eval: held-out greedy accuracy of the untrained model,
the warm start and the final answerer, next to the random-guess and shortcut baselines (the summary names
the strongest) and, for multi-turn runs, the tool-only oracle and an optional single-turn answerer, on the
same tasks (paired)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_selfplay.artifacts import atomic_write_json

if TYPE_CHECKING:
    from osint_selfplay.loop import SelfPlayRun

HEADLINE = ("success", "reward", "tool_calls", "critical_steps")  # the run summary's per-model figures
DRY_RUN_EVAL_TASKS = 16  # a dry run is a smoke test: it evaluates at most this many tasks, and says so


def eval_task_limit(limit: int, dry_run: bool) -> int:
    """How many held-out tasks the closing evaluation runs: ``limit``, or at most a handful in a dry run."""
    return min(limit, DRY_RUN_EVAL_TASKS) if dry_run else limit


def heldout_tasks(tasks_ref: str, difficulties: list[str], limit: int) -> list[Any]:
    tasks = [t for t in benchmark_tasks(tasks_ref) if not difficulties or t.difficulty in difficulties]
    return tasks[:limit]


def _zero_variance_groups(rounds: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Answerer groups whose rewards had no variance, summed over rounds, by task source."""
    zero_var: dict[str, dict[str, float]] = {}
    for rnd in rounds:
        for source, z in (rnd.get("answerer", {}).get("zero_variance_by_source") or {}).items():
            acc = zero_var.setdefault(source, {"groups": 0, "zero_variance": 0})
            acc["groups"] += z["groups"]
            acc["zero_variance"] += z["zero_variance"]
    for acc in zero_var.values():
        acc["share"] = acc["zero_variance"] / acc["groups"] if acc["groups"] else float("nan")
    return zero_var


def episode_kwargs(a: Any, batch_size: int) -> dict[str, Any]:
    """osint-eval's runner arguments that serve the held-out tasks as the answerer was trained."""
    if a.mode == "multi_turn":
        return {"max_steps": a.max_turns, "max_parallel_calls": a.max_parallel_calls, "batch_size": batch_size,
                "max_observation_chars": a.max_observation_chars, "observation_format": a.observation_format,
                "action_format": a.action_format}
    return {"context_mode": a.context_mode, "n_distractors": a.n_distractors, "decoys": a.decoys, "batch_size": batch_size}


def evaluate_run(run: SelfPlayRun, bases: dict[str, str], warm: dict[str, str], final: dict[str, str]) -> dict[str, Any]:
    from osint_eval.evaluate import evaluate
    from osint_eval.policies import SHORTCUTS_BY_MODE, HFPolicy, OraclePolicy, Policy, RandomGuessPolicy, make_policy
    from osint_eval.report import write_report
    from osint_eval.tasks import TaskSet

    cfg = run.cfg
    ev, a = cfg.eval, cfg.answerer
    multi = a.mode == "multi_turn"
    world = benchmark_world(ev.tasks)
    taskset = TaskSet(ev.tasks, world, heldout_tasks(ev.tasks, ev.difficulties, eval_task_limit(ev.limit, cfg.dry_run)), ev.tasks)
    paths: dict[str, str] = {}
    if ev.include_untrained:
        paths["untrained"] = bases["answerer"]
    if cfg.warm_start_on:
        paths["warm_start"] = warm["answerer"]
    paths["final"] = final["answerer"]
    tokens = cfg.grpo_answerer.max_completion_length if not multi else min(cfg.grpo_answerer.max_completion_length, 160)
    policies: dict[str, Policy] = {name: HFPolicy(p, batch_size=ev.batch_size, max_new_tokens=tokens, temperature=0.0)
                                   for name, p in paths.items()}
    policies["random_guess"] = RandomGuessPolicy(cfg.seed)  # and the shortcuts: the report names the strongest
    policies |= {n: make_policy(n, seed=cfg.seed) for n in SHORTCUTS_BY_MODE[a.mode]}
    if multi:
        policies["oracle"] = OraclePolicy()
    run_kwargs = episode_kwargs(a, ev.batch_size)
    pairs = [(b, c) for b, c in (("warm_start", "final"), ("untrained", "final"), ("random_guess", "warm_start"),
                                 ("random_guess", "final"), ("untrained", "warm_start")) if b in policies and c in policies]
    title = "osint-selfplay closing evaluation" + (" (dry run)" if cfg.dry_run else "")
    report = evaluate(policies, taskset, mode=a.mode, seed=cfg.seed, comparisons=pairs, config=cfg.to_dict(),
                      title=title, progress=True, dry_run=cfg.dry_run, **run_kwargs)
    single_turn: dict[str, Any] | None = None
    if multi and ev.single_turn_model:
        if Path(ev.single_turn_model).exists():
            st = evaluate({"single_turn": HFPolicy(ev.single_turn_model, batch_size=ev.batch_size,
                                                   max_new_tokens=64, temperature=0.0)}, taskset, mode="single_turn",
                          seed=cfg.seed, progress=True, context_mode="triples", n_distractors=6, batch_size=ev.batch_size)
            single_turn = {"model": ev.single_turn_model, "success": st.models["single_turn"].overall.success.to_dict()}
        else:
            single_turn = {"model": ev.single_turn_model, "missing": True}
    for p in policies.values():
        p.close()
    # the run folder is the run's own (its manifest and --resume guard it): a resumed evaluation replaces a partial report
    report = replace(report, out_dir=str(run.root / "eval"))
    write_report(report, run.root / "eval", overwrite=True)
    sampled = [rnd.get("sampled", {}) for rnd in run.summary["rounds"]]
    result = {
        "tasks": ev.tasks, "n_tasks": len(taskset.tasks), "dry_run": cfg.dry_run, "mode": a.mode, "context_mode": a.context_mode,
        "models": paths,
        "headline": {name: {k: getattr(m.overall, k).to_dict() for k in HEADLINE} for name, m in report.models.items()},
        "comparisons": {k: c.overall.to_dict() for k, c in report.comparisons.items()},
        "strongest_baseline": report.strongest_baseline.to_dict() if report.strongest_baseline else None,
        "generator_valid_rate": [s.get("valid_rate") for s in sampled],
        "answerer_solve_rate_on_generated": [s.get("answerer_solve_rate_on_generated") for s in sampled],
        "zero_variance_groups": _zero_variance_groups(run.summary["rounds"]),
        "single_turn_reference": single_turn,
        "report": str(run.root / "eval" / "report.md"),
    }
    atomic_write_json(run.root / "eval" / "summary.json", result)
    return result
