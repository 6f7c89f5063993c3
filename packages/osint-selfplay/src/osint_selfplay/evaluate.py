"""The run's closing evaluation, through osint-eval: held-out greedy accuracy of the untrained model,
the warm start and the final answerer, next to the random-guess baseline (and, for multi-turn runs,
the tool-only oracle and an optional single-turn answerer), on the same tasks (paired)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from osint_gym.benchmark import benchmark_tasks, benchmark_world

from osint_selfplay.artifacts import atomic_write_json

if TYPE_CHECKING:
    from osint_selfplay.loop import SelfPlayRun


def heldout_tasks(tasks_ref: str, difficulties: list[str], limit: int) -> list[Any]:
    tasks = [t for t in benchmark_tasks(tasks_ref) if not difficulties or t.difficulty in difficulties]
    return tasks[:limit]


def evaluate_run(run: SelfPlayRun, bases: dict[str, str], warm: dict[str, str], final: dict[str, str]) -> dict[str, Any]:
    from osint_eval.evaluate import evaluate
    from osint_eval.policies import HFPolicy, OraclePolicy, Policy, RandomGuessPolicy
    from osint_eval.report import write_report
    from osint_eval.tasks import TaskSet

    cfg = run.cfg
    ev, a = cfg.eval, cfg.answerer
    multi = a.mode == "multi_turn"
    world = benchmark_world(ev.tasks)
    taskset = TaskSet(ev.tasks, world, heldout_tasks(ev.tasks, ev.difficulties, ev.limit), ev.tasks)
    paths: dict[str, str] = {}
    if ev.include_untrained:
        paths["untrained"] = bases["answerer"]
    if cfg.warm_start_on:
        paths["warm_start"] = warm["answerer"]
    paths["final"] = final["answerer"]
    tokens = cfg.grpo_answerer.max_completion_length if not multi else min(cfg.grpo_answerer.max_completion_length, 160)
    policies: dict[str, Policy] = {name: HFPolicy(p, batch_size=ev.batch_size, max_new_tokens=tokens, temperature=0.0)
                                   for name, p in paths.items()}
    policies["random_guess"] = RandomGuessPolicy(cfg.seed)
    if multi:
        policies["oracle"] = OraclePolicy()
    run_kwargs: dict[str, Any] = ({"max_steps": a.max_turns, "max_parallel_calls": a.max_parallel_calls, "batch_size": ev.batch_size}
                                  if multi else {"context_mode": a.context_mode, "n_distractors": a.n_distractors, "batch_size": ev.batch_size})
    pairs = [(b, c) for b, c in (("warm_start", "final"), ("untrained", "final"), ("random_guess", "warm_start"),
                                 ("random_guess", "final"), ("untrained", "warm_start")) if b in policies and c in policies]
    report = evaluate(policies, taskset, mode=a.mode, seed=cfg.seed, comparisons=pairs, config=cfg.to_dict(),
                      title="osint-selfplay closing evaluation", progress=True, **run_kwargs)
    single_turn = None
    if multi and ev.single_turn_model:
        if Path(ev.single_turn_model).exists():
            st = evaluate({"single_turn": HFPolicy(ev.single_turn_model, batch_size=ev.batch_size,
                                                   max_new_tokens=64, temperature=0.0)}, taskset, mode="single_turn",
                          seed=cfg.seed, progress=True, context_mode="triples", n_distractors=6, batch_size=ev.batch_size)
            single_turn = {"model": ev.single_turn_model, "success": st["models"]["single_turn"]["summary"]["overall"]["success"]}
        else:
            single_turn = {"model": ev.single_turn_model, "missing": True}
    for p in policies.values():
        p.close()
    report["out_dir"] = str(run.root / "eval")
    write_report(report, run.root / "eval")
    summaries = {name: m["summary"] for name, m in report["models"].items()}
    zero_var: dict[str, dict[str, float]] = {}
    for rnd in run.summary["rounds"]:
        for source, z in (rnd.get("answerer", {}).get("zero_variance_by_source") or {}).items():
            acc = zero_var.setdefault(source, {"groups": 0, "zero_variance": 0})
            acc["groups"] += z["groups"]
            acc["zero_variance"] += z["zero_variance"]
    for acc in zero_var.values():
        acc["share"] = acc["zero_variance"] / acc["groups"] if acc["groups"] else float("nan")
    sampled = [rnd.get("sampled", {}) for rnd in run.summary["rounds"]]
    result = {
        "tasks": ev.tasks, "n_tasks": len(taskset.tasks), "mode": a.mode, "context_mode": a.context_mode, "models": paths,
        "headline": {name: {"success": s["overall"]["success"], "reward": s["overall"]["reward"],
                            "tool_calls": s["overall"]["tool_calls"], "critical_steps": s["overall"]["critical_steps"]}
                     for name, s in summaries.items()},
        "comparisons": {k: v["overall"] for k, v in report["comparisons"].items()},
        "generator_valid_rate": [s.get("valid_rate") for s in sampled],
        "answerer_solve_rate_on_generated": [s.get("answerer_solve_rate_on_generated") for s in sampled],
        "zero_variance_groups": zero_var,
        "single_turn_reference": single_turn,
        "report": str(run.root / "eval" / "report.md"),
    }
    atomic_write_json(run.root / "eval" / "summary.json", result)
    return result
