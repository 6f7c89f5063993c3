"""osint-gym benchmark: env step/reset vs CartPole-v1, world scaling, verified task generation.

Run: ``hatch run bench:env`` (or ``python benchmarks/bench_env.py [--quick]``). Prints one line per
figure and a JSON summary; ratios are measured side by side in this one run.
"""

from __future__ import annotations

import argparse
import json
import math
import platform

import benchlib as bench  # benchmarks/benchlib.py: the measuring helpers, kept out of the library


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (skips the 100k-people world)")
    ap.add_argument("--steps", type=int, default=20_000)
    args = ap.parse_args()
    sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")

    c = bench.construction()
    r = bench.step_ratio(args.steps // 4 if args.quick else args.steps)
    bench.print_env(c, r)

    builds = [bench.world_build(n) for n in sizes]
    for b in builds:
        print(f"world {b['n_people']:>7} people: {b['seconds']:7.2f} s, build memory {b['build_mib']:7.0f} MiB "
              f"(peak RSS {b['peak_mib']:.0f} MiB), {b['nodes']} nodes, {b['edges']} edges")
    if len(builds) >= 2:
        a, z = builds[0], builds[-1]
        exponent = math.log(z["seconds"] / a["seconds"]) / math.log(z["n_people"] / a["n_people"])
        print(f"build-time scaling exponent {a['n_people']}->{z['n_people']}: {exponent:.2f} (1.0 = linear)")

    t = bench.task_rate(1000)
    print(
        f"verified tasks: {t['tasks_per_s']:.0f} tasks/s "
        f"(median of {t['rounds']} rounds {t['rounds_tasks_per_s']}, the first on a "
        f"fresh world; {t['tasks']} tasks, {t['rejected']} candidates rejected by verification)"
    )
    print(json.dumps({"construction": c, "step": r, "worlds": builds, "tasks": t}, indent=1))


if __name__ == "__main__":
    main()
