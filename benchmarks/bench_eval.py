"""Multi-turn evaluation throughput: episodes in flight (continuous batching) against one batch at a time.

Run: ``python benchmarks/bench_eval.py --model PATH [--tasks 256] [--batch 32] [--in-flight 1,4,8]``.
The same model plays the same v0:test tasks greedily under each ``in_flight`` setting of
`osint_eval.runner.run_multi_turn` (``in_flight * batch`` episodes run at once; each turn's prompts
are sorted by length into batches of ``--batch``); the figure of merit is tasks per second, reported
as a ratio to ``in_flight = 1`` in the same run, and the successes must be identical (greedy decoding:
the schedule changes the batching, not the episodes). Use a model that acts like a trained one (a warm
start, for example ``runs/tiny-cpu/warm_start/shared/final_model``): an untrained model ends every
episode in one turn, which measures nothing. Prints one line per setting, then a JSON line.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", required=True, help="model folder, hub id or tiny: spec")
    ap.add_argument("--tasks", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--in-flight", default="1,4,8", help="comma-separated; the first is the reference")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch

    from osint_eval.modeling import resolve_model
    from osint_eval.policies import HFPolicy
    from osint_eval.runner import run_multi_turn
    from osint_gym.benchmark import benchmark_tasks, benchmark_world
    from osint_gym.spec import EpisodeSpec
    from osint_gym.tasks import Budgets

    torch.set_num_threads(args.threads)
    world, tasks = benchmark_world("v0:test"), benchmark_tasks("v0:test")[: args.tasks]
    policy = HFPolicy(resolve_model(args.model), batch_size=args.batch, max_new_tokens=40)
    kw = {"spec": EpisodeSpec(Budgets(8, 4, 4000, "compact"), action_format="short", describe_tools=False),
          "batch_size": args.batch}
    rows = []
    for k in (int(x) for x in args.in_flight.split(",")):
        t0 = time.perf_counter()
        results = run_multi_turn(policy, world, tasks, in_flight=k, **kw)
        seconds = time.perf_counter() - t0
        rows.append({"in_flight": k, "seconds": round(seconds, 2), "tasks_per_second": round(len(tasks) / seconds, 2),
                     "successes": sum(r.correct for r in results)})
        print(
            f"in_flight={k}: {seconds:.1f} s, {len(tasks) / seconds:.2f} tasks/s, "
            f"{rows[-1]['successes']}/{len(tasks)} solved",
            flush=True,
        )
    ref = rows[0]["seconds"]
    for r in rows:
        r["speedup_vs_first"] = round(ref / r["seconds"], 2)
    same = len({r["successes"] for r in rows}) == 1
    print(
        f"speed-up of in_flight={rows[-1]['in_flight']} over {rows[0]['in_flight']}: {rows[-1]['speedup_vs_first']}x; "
        f"identical successes: {same}"
    )
    print(json.dumps({"tasks": len(tasks), "batch": args.batch, "rows": rows, "identical_successes": same}))


if __name__ == "__main__":
    main()
