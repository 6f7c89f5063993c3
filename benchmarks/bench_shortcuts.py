"""Shortcut baselines on single-turn contexts: each scripted shortcut against the uniform type-correct guess.

Run: ``python benchmarks/bench_shortcuts.py [--tasks v0:test] [--limit N] [--context-mode triples]``.
Prints each policy's success with its Wilson 95% interval and its gap to ``random-guess`` (same tasks, same
contexts, one run), overall, by difficulty and on the tasks where adjacency is not the question itself
(`osint_eval.baselines.adjacency_is_the_question`), then a JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

from osint_eval.baselines import SINGLE_TURN_SHORTCUTS, adjacency_is_the_question
from osint_eval.metrics import summarize
from osint_eval.policies import make_policy
from osint_eval.runner import run_single_turn
from osint_eval.tasks import load_tasks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tasks", default="v0:test")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--context-mode", default="triples", choices=["triples", "records"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    taskset = load_tasks(args.tasks, limit=args.limit)
    out = {}
    forced = {t.task_id for t in taskset.tasks if adjacency_is_the_question(taskset.world, t)}
    t0 = time.perf_counter()
    for name in ("random-guess",) + SINGLE_TURN_SHORTCUTS:
        results = run_single_turn(make_policy(name, seed=args.seed), taskset.world, taskset.tasks,
                                  context_mode=args.context_mode, seed=args.seed)
        s = summarize(results, seed=args.seed, name=name)
        free = summarize([r for r in results if r.task_id not in forced], seed=args.seed, name=name)
        out[name] = {
            "overall": s.overall.success.to_dict(),
            **{k: b.success.to_dict() for k, b in s.by_difficulty.items()},
            "adjacency-not-the-question": free.overall.success.to_dict(),
        }
    base = out["random-guess"]["overall"]["mean"]
    for name, row in out.items():
        by = ", ".join(f"{k} {100 * v['mean']:.1f}%" for k, v in row.items() if k != "overall")
        o = row["overall"]
        print(f"{name:16s} {100 * o['mean']:5.1f}% [{100 * o['lo']:.1f}, {100 * o['hi']:.1f}] (n={o['n']})"
              f"  gap {100 * (o['mean'] - base):+5.1f} pts  ({by})")
    print(f"{len(forced)} tasks are one-hop questions whose start has no neighbour of the answer type but the gold")
    print(f"seconds: {time.perf_counter() - t0:.1f}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
