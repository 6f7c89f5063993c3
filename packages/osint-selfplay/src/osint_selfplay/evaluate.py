"""The run's closing evaluation: held-out greedy accuracy of the untrained model, the warm start and
the final answerer, next to the random-guess baseline, on the same tasks (paired), via osint-eval."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from osint_gym.benchmark import benchmark_tasks, benchmark_world

from osint_selfplay.artifacts import atomic_write_json, atomic_write_jsonl

if TYPE_CHECKING:
    from osint_selfplay.loop import SelfPlayRun


def heldout_tasks(tasks_ref: str, difficulties: list[str], limit: int) -> list[Any]:
    tasks = [t for t in benchmark_tasks(tasks_ref) if not difficulties or t.difficulty in difficulties]
    return tasks[:limit]


def evaluate_run(run: SelfPlayRun, bases: dict[str, str], warm: dict[str, str], final: dict[str, str]) -> dict[str, Any]:
    from osint_eval.metrics import compare, summarize
    from osint_eval.policies import HFPolicy, RandomGuessPolicy
    from osint_eval.runner import run_single_turn

    cfg = run.cfg
    ev = cfg.eval
    world = benchmark_world(ev.tasks)
    tasks = heldout_tasks(ev.tasks, ev.difficulties, ev.limit)
    models: dict[str, str] = {}
    if ev.include_untrained:
        models["untrained"] = bases["answerer"]
    if cfg.warm_start_on:
        models["warm_start"] = warm["answerer"]
    models["final"] = final["answerer"]
    kwargs = {"context_mode": cfg.answerer.context_mode, "n_distractors": cfg.answerer.n_distractors, "seed": cfg.seed,
              "batch_size": ev.batch_size}
    results = {}
    for name, path in models.items():
        policy = HFPolicy(path, batch_size=ev.batch_size, max_new_tokens=cfg.grpo_answerer.max_completion_length, temperature=0.0)
        results[name] = run_single_turn(policy, world, tasks, **kwargs)
        policy.close()
    results["random_guess"] = run_single_turn(RandomGuessPolicy(cfg.seed), world, tasks, **kwargs)
    out = run.root / "eval"
    for name, res in results.items():
        atomic_write_jsonl(out / f"episodes_{name}.jsonl", [r.to_dict() for r in res])
    summaries = {name: summarize(res, seed=cfg.seed) for name, res in results.items()}
    pairs = [("final", "warm_start"), ("final", "untrained"), ("warm_start", "random_guess"), ("final", "random_guess"),
             ("warm_start", "untrained")]
    comparisons = {f"{a}_vs_{b}": compare(results[b], results[a], seed=cfg.seed) for a, b in pairs if a in results and b in results}
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
        "tasks": ev.tasks, "n_tasks": len(tasks), "context_mode": cfg.answerer.context_mode, "models": models,
        "headline": {name: {"success": s["overall"]["success"], "reward": s["overall"]["reward"]} for name, s in summaries.items()},
        "comparisons": {k: v["overall"] for k, v in comparisons.items()},
        "generator_valid_rate": [s.get("valid_rate") for s in sampled],
        "answerer_solve_rate_on_generated": [s.get("answerer_solve_rate_on_generated") for s in sampled],
        "zero_variance_groups": zero_var,
    }
    atomic_write_json(out / "summaries.json", {"summaries": summaries, "comparisons": comparisons})
    return result
