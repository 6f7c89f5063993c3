"""The evaluation API behind the CLI: run policies on a task set and build the typed `Report`."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from osint_eval.errors import EvalError
from osint_eval.metrics import compare, strongest_baseline, summarize
from osint_eval.policies import OraclePolicy, Policy
from osint_eval.runner import EpisodeResult, run, run_multi_turn_items
from osint_eval.schema import ProposalCounts, Report, TaskInfo
from osint_eval.tasks import TaskSet
from osint_gym.provenance import git_sha, package_versions

VERSIONED = ("osint-gym", "osint-eval", "osint-selfplay", "torch", "transformers", "gymnasium")


def task_fingerprint(task_ids: list[str]) -> str:
    """A short digest of the evaluated task ids, in order: equal for two runs on the same task set."""
    return hashlib.sha256("\n".join(task_ids).encode()).hexdigest()[:16]


def task_info(taskset: TaskSet) -> TaskInfo:
    p = taskset.proposals
    return TaskInfo(
        taskset.source,
        taskset.world_ref,
        len(taskset.tasks),
        task_fingerprint([t.task_id for t in taskset.tasks]),
        ProposalCounts(p["total"], p["valid"], dict(p["reasons"])) if p else None,
        dict(taskset.rejected),
    )


def evaluate(policies: dict[str, Policy], taskset: TaskSet, *, mode: str = "single_turn", seed: int = 0,
             comparisons: list[tuple[str, str]] | None = None, config: dict[str, Any] | None = None,
             title: str | None = None, progress: bool = True, dry_run: bool = False, workers: int = 1,
             **run_kwargs: Any) -> Report:
    """Run every policy on the same tasks; summaries per model, paired comparisons ``(base, candidate)``
    and the strongest scripted non-oracle baseline; returns the `Report` (write it with `write_report`).
    ``workers`` > 1: each local model policy runs in that many processes (`run_sharded`)."""
    results: dict[str, list[EpisodeResult]] = {}
    if mode == "single_turn":
        run_kwargs.setdefault("seed", seed)  # the contexts' distractors
    if workers < 1:
        raise EvalError(f"workers must be >= 1, got {workers}")
    pool = worker_pool(workers) if workers > 1 and any(p.shardable for p in policies.values()) else None
    try:
        for name, policy in policies.items():
            bar = None
            if progress:
                from tqdm import tqdm

                bar = tqdm(total=len(taskset.tasks), desc=f"{name[:30]} ({mode})", unit="task", leave=False)
            if pool is not None and policy.shardable:
                results[name] = run_sharded(pool, workers, policy, taskset, mode=mode, progress=bar, **run_kwargs)
            else:
                results[name] = run(policy, taskset.world, taskset.tasks, mode=mode, progress=bar, **run_kwargs)
            if bar is not None:
                bar.close()
    finally:
        if pool is not None:
            pool.shutdown()
    labels = {name: str(p.name) for name, p in policies.items()}
    models = {name: summarize(results[name], seed=seed, name=name, label=labels[name], policy=p.describe())
              for name, p in policies.items()}
    baselines = [n for n, p in policies.items() if not p.is_model and not isinstance(p, OraclePolicy)]
    return Report(
        title=title or " vs ".join(labels[n] if labels[n] == n else f"{n} ({labels[n]})" for n in policies),
        mode=mode,
        seed=seed,
        tasks=task_info(taskset),
        models=models,
        comparisons={
            c.name: c
            for c in (
                compare(results[b], results[k], seed=seed, names=(b, k), labels=(labels[b], labels[k]))
                for b, k in (comparisons or [])
            )
        },
        episodes=results,
        config=config or {},
        versions=package_versions(VERSIONED),
        git_sha=git_sha(),
        dry_run=dry_run,
        strongest_baseline=strongest_baseline(models, baselines),
    )


def worker_pool(workers: int) -> Any:
    """``workers`` spawned processes that share this process's torch threads (a model policy's
    generation on a CPU uses two 1-thread processes better than one 2-thread one: benchmarks/RESULTS.md)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import torch

    threads = max(1, torch.get_num_threads() // workers)
    # "spawn": a forked child would inherit this process's torch thread pool and loaded models
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker,
                               initargs=(threads,))


def _init_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def _run_shard(
    policy: Policy, world: Any, tasks: list[Any], mode: str, run_kwargs: dict[str, Any]
) -> list[EpisodeResult]:
    try:
        return run(policy, world, tasks, mode=mode, **run_kwargs)
    finally:
        policy.close()


def run_sharded(pool: Any, workers: int, policy: Policy, taskset: TaskSet, *, mode: str, progress: Any = None,
                **run_kwargs: Any) -> list[EpisodeResult]:
    """``run`` of a shardable policy in the ``workers`` processes of ``pool``: worker k plays tasks k,
    k + workers, ... (a similar mix of difficulties each) and the episodes come back in the tasks' order.
    Greedy episodes are those of one process up to float rounding (other batches, other thread counts)."""
    tasks = taskset.tasks
    futures = [
        pool.submit(_run_shard, policy, taskset.world, tasks[k::workers], mode, run_kwargs) for k in range(workers)
    ]
    return _gather(futures, len(tasks), workers, progress)


def _run_items_shard(policy: Policy, items: list[Any], run_kwargs: dict[str, Any]) -> list[EpisodeResult]:
    try:
        return run_multi_turn_items(policy, items, **run_kwargs)
    finally:
        policy.close()


def run_items_sharded(pool: Any, workers: int, policy: Policy, items: list[Any], **run_kwargs: Any) -> list[Any]:
    """`osint_eval.runner.run_multi_turn_items` of a shardable policy over (world, task) pairs in the ``workers``
    processes of ``pool`` (worker k plays items k, k + workers, ...); the episodes in the items' order."""
    futures = [pool.submit(_run_items_shard, policy, items[k::workers], run_kwargs) for k in range(workers)]
    return _gather(futures, len(items), workers, None)


def _gather(futures: list[Any], n: int, workers: int, progress: Any) -> list[Any]:
    """The shards' episodes back in item order (shard k holds items k, k + workers, ...)."""
    from concurrent.futures.process import BrokenProcessPool

    out: list[Any] = [None] * n
    for k, future in enumerate(futures):
        try:
            shard = future.result()
        except BrokenProcessPool:  # the OS killed a worker (most often: out of memory); osint-selfplay calls this too
            raise EvalError(f"a worker process of {workers} died while playing {n} tasks (out of memory?): fewer "
                            "workers, a smaller batch or generate decoding need less memory") from None
        out[k::workers] = shard
        if progress is not None:
            progress.update(len(shard))
    return out


def extend(report: Report, policies: dict[str, Policy], taskset: TaskSet, *, comparisons: list[tuple[str, str]],
           progress: bool = True, workers: int = 1, **run_kwargs: Any) -> Report:
    """``report`` with more policies run on its tasks (the same tasks, checked by fingerprint) and the
    paired comparisons ``(base, candidate)`` listed, in that order; its models are not run again, so a
    control trained after an evaluation joins it for the cost of its own episodes."""
    if task_info(taskset).fingerprint != report.tasks.fingerprint:
        raise EvalError(
            f"the tasks differ from the report's ({report.tasks.source}, fingerprint {report.tasks.fingerprint}): "
            "a paired comparison needs the same tasks"
        )
    clash = sorted(set(policies) & set(report.models))
    if clash:
        raise EvalError(f"the report already holds {', '.join(clash)}")
    new = evaluate(
        policies, taskset, mode=report.mode, seed=report.seed, progress=progress, workers=workers, **run_kwargs
    )
    models, episodes = {**report.models, **new.models}, {**report.episodes, **new.episodes}
    ordered = {}
    for b, k in comparisons:
        name = f"{k} vs {b}"  # `compare`'s name for the pair
        ordered[name] = report.comparisons.get(name) or compare(
            episodes[b], episodes[k], seed=report.seed, names=(b, k), labels=(models[b].label, models[k].label)
        )
    return replace(report, models=models, episodes=episodes,
                   comparisons=ordered | {k: c for k, c in report.comparisons.items() if k not in ordered})
