"""Both cores outside SFT: the main job's two process-parallel phases against one process, same run.

Run: ``python benchmarks/bench_workers.py --model PATH [--demos 6000] [--tasks 500] [--workers 2]``.
1. Oracle demonstrations (`osint_selfplay.data.sft_multi_turn_rows`, the main job's config) with
   ``warm_start.workers = 1`` and ``= --workers``: seconds, the ratio, and whether the rows are the same.
2. A model's greedy multi-turn evaluation (`osint_eval.evaluate`, the main job's episode settings:
   `AnswererConfig.episode_spec`)
   on the first ``--tasks`` v0:test tasks with ``workers = 1`` and ``= --workers``: seconds, the ratio
   and whether every episode's submission and reward are the same. Use a trained model (for example
   ``runs/tiny-cpu/warm_start/shared/final_model``): an untrained one ends every episode in one turn.
Prints one line per measurement, then a JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TQDM_DISABLE", "1")

MAIN_JOB = "configs/selfplay/tiny-cpu.toml"


def one_vs_many(label: str, same_what: str, n: int, workers: int, run: Callable[[int], Any]) -> dict:
    """``run(w)`` timed with 1 and with ``workers`` processes: the seconds, the ratio, and whether both
    returned the same thing."""
    out = {}
    for w in (1, workers):
        t0 = time.perf_counter()
        result = run(w)
        out[w] = (time.perf_counter() - t0, result)
    ratio, same = out[1][0] / out[workers][0], out[1][1] == out[workers][1]
    print(f"{label}: 1 process {out[1][0]:.1f} s | {workers} processes {out[workers][0]:.1f} s | "
          f"speed-up {ratio:.2f}x; the same {same_what}: {same}", flush=True)
    return {"n": n, "seconds_1": round(out[1][0], 2), f"seconds_{workers}": round(out[workers][0], 2),
            "speedup": round(ratio, 2), f"same_{same_what}": same}


def demonstrations(n: int, workers: int) -> dict:
    from osint_selfplay import data
    from osint_selfplay.config import load_config
    from osint_selfplay.worlds import WorldPool

    def run(w: int) -> str:
        cfg = load_config(MAIN_JOB, [f"warm_start.answerer_examples={n}", f"warm_start.workers={w}"])
        rows, _ = data.sft_multi_turn_rows(WorldPool.for_run(cfg), cfg)
        return json.dumps(rows, sort_keys=True)

    return one_vs_many(f"demonstrations (n={n})", "rows", n, workers, run)


def evaluation(model: str, n: int, workers: int) -> dict:
    from osint_eval.evaluate import evaluate
    from osint_eval.modeling import resolve_model
    from osint_eval.policies import HFPolicy
    from osint_eval.tasks import load_tasks
    from osint_selfplay.config import load_config

    cfg = load_config(MAIN_JOB, [])
    taskset, path = load_tasks(cfg.eval.tasks, limit=n), resolve_model(model)

    def run(w: int) -> list[tuple[str, Any, float]]:
        policy = HFPolicy(path, batch_size=cfg.eval.batch_size, max_new_tokens=cfg.eval.max_new_tokens)
        report = evaluate({"m": policy}, taskset, mode=cfg.answerer.mode, progress=False, workers=w,
                          spec=cfg.episode.spec(), batch_size=cfg.eval.batch_size)
        return [(e.task_id, e.submitted, e.reward) for e in report.episodes["m"]]

    return one_vs_many(f"evaluation (n={n} {cfg.eval.tasks} tasks)", "episodes", n, workers, run)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="model folder, hub id or tiny: spec (a trained one)")
    ap.add_argument("--demos", type=int, default=6000)
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.workers < 2 or args.demos < 1 or args.tasks < 1:
        ap.error("--workers must be >= 2, --demos and --tasks >= 1")
    result = {"demonstrations": demonstrations(args.demos, args.workers),
              "evaluation": evaluation(args.model, args.tasks, args.workers), "workers": args.workers,
              "cores": os.cpu_count()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
