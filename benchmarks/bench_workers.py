"""Both cores outside SFT: the main job's two process-parallel phases against one process, same run.

Run: ``python benchmarks/bench_workers.py --model PATH [--demos 6000] [--tasks 500] [--workers 2]``.
1. Oracle demonstrations (`osint_selfplay.data.sft_multi_turn_rows`, the main job's config) with
   ``warm_start.workers = 1`` and ``= --workers``: seconds, the ratio, and whether the rows are the same.
2. A model's greedy multi-turn evaluation (`osint_eval.evaluate`, the main job's episode settings)
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

os.environ.setdefault("TQDM_DISABLE", "1")

MAIN_JOB = "configs/selfplay/tiny-cpu.toml"


def demonstrations(n: int, workers: int) -> dict:
    from osint_selfplay import data
    from osint_selfplay.config import load_config
    from osint_selfplay.worlds import WorldPool

    out = {}
    for w in (1, workers):
        cfg = load_config(MAIN_JOB, [f"warm_start.answerer_examples={n}", f"warm_start.workers={w}"])
        t0 = time.perf_counter()
        rows, _ = data.sft_multi_turn_rows(WorldPool(cfg.train_worlds, cfg.seed), cfg)
        out[w] = (time.perf_counter() - t0, json.dumps(rows, sort_keys=True))
    ratio = out[1][0] / out[workers][0]
    same = out[1][1] == out[workers][1]
    print(f"demonstrations (n={n}): 1 process {out[1][0]:.1f} s | {workers} processes {out[workers][0]:.1f} s | "
          f"speed-up {ratio:.2f}x; the same rows: {same}", flush=True)
    return {"n": n, "seconds_1": round(out[1][0], 2), f"seconds_{workers}": round(out[workers][0], 2),
            "speedup": round(ratio, 2), "same_rows": same}


def evaluation(model: str, n: int, workers: int) -> dict:
    from osint_eval.evaluate import evaluate
    from osint_eval.modeling import resolve_model
    from osint_eval.policies import HFPolicy
    from osint_eval.tasks import load_tasks

    taskset = load_tasks("v0:test", limit=n)
    kw = {"max_steps": 8, "max_parallel_calls": 4, "max_observation_chars": 4000, "observation_format": "compact",
          "action_format": "short", "bare_prompt": True, "batch_size": 32}
    out = {}
    for w in (1, workers):
        policy = HFPolicy(resolve_model(model), batch_size=32, max_new_tokens=40)
        t0 = time.perf_counter()
        report = evaluate({"m": policy}, taskset, mode="multi_turn", progress=False, workers=w, **kw)
        out[w] = (time.perf_counter() - t0, [(e.task_id, e.submitted, e.reward) for e in report.episodes["m"]])
    ratio = out[1][0] / out[workers][0]
    same = out[1][1] == out[workers][1]
    print(f"evaluation (n={n} v0:test tasks): 1 process {out[1][0]:.1f} s | {workers} processes {out[workers][0]:.1f} s | "
          f"speed-up {ratio:.2f}x; the same episodes: {same}", flush=True)
    return {"n": n, "seconds_1": round(out[1][0], 2), f"seconds_{workers}": round(out[workers][0], 2),
            "speedup": round(ratio, 2), "same_episodes": same}


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
