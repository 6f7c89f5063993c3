"""The evaluation API behind the CLI: run policies on a task set and build the report dict."""

from __future__ import annotations

import subprocess
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from osint_eval.metrics import compare, summarize
from osint_eval.policies import Policy
from osint_eval.runner import EpisodeResult, run
from osint_eval.tasks import TaskSet


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in ("osint-gym", "osint-eval", "osint-selfplay", "torch", "transformers", "gymnasium"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _git_sha() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def evaluate(policies: dict[str, Policy], taskset: TaskSet, *, mode: str = "single_turn", seed: int = 0,
             comparisons: list[tuple[str, str]] | None = None, config: dict[str, Any] | None = None,
             title: str | None = None, progress: bool = True, **run_kwargs: Any) -> dict[str, Any]:
    """Run every policy on the same tasks; summaries per model and paired comparisons
    ``(base, candidate)``; returns the full report dict (write it with `write_report`)."""
    results: dict[str, list[EpisodeResult]] = {}
    if mode == "single_turn":
        run_kwargs.setdefault("seed", seed)  # the contexts' distractors
    for name, policy in policies.items():
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(taskset.tasks), desc=f"{name[:30]} ({mode})", unit="task", leave=False)
        results[name] = run(policy, taskset.world, taskset.tasks, mode=mode, progress=bar, **run_kwargs)
        if bar is not None:
            bar.close()
    report: dict[str, Any] = {
        "title": title or " vs ".join(policies),
        "mode": mode,
        "seed": seed,
        "config": config or {},
        "versions": _versions(),
        "git_sha": _git_sha(),
        "tasks": {"source": taskset.source, "world": taskset.world_ref, "n": len(taskset.tasks),
                  "proposals": taskset.proposals, "rejected": taskset.rejected},
        "models": {name: {"policy": p.describe(), "summary": summarize(results[name], seed=seed)} for name, p in policies.items()},
        "comparisons": {f"{cand} vs {base}": compare(results[base], results[cand], seed=seed) for base, cand in (comparisons or [])},
        "episodes": {name: [r.to_dict() for r in res] for name, res in results.items()},
    }
    return report
