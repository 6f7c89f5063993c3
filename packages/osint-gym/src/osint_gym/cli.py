"""``osint-gym``: demo, export benchmark splits, verify task files. Errors are one line, exit 2."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from osint_gym.errors import OSINTGymError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="osint-gym", description="OSINT-v0 tools: demo, export, verify.")
    sub = p.add_subparsers(dest="command")
    d = sub.add_parser("demo", help="one demo episode and a short benchmark summary (the default)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--difficulty", choices=["easy", "medium", "hard"], default="hard")
    d.add_argument("--no-bench", action="store_true", help="skip the benchmark summary")
    e = sub.add_parser("export", help="write a benchmark split as JSONL (Hugging Face datasets rows)")
    e.add_argument("--split", default="v0:test", help="benchmark split, e.g. v0:dev")
    e.add_argument("--out", required=True)
    e.add_argument("--family")
    e.add_argument("--difficulty", choices=["easy", "medium", "hard"])
    e.add_argument("--limit", type=int)
    v = sub.add_parser("verify", help="verify every task of a JSONL file against a benchmark world")
    v.add_argument("path")
    v.add_argument("--split", default="v0:test", help="the benchmark split whose world the tasks belong to")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command in (None, "demo"):
            from osint_gym.demo import main as demo

            demo(getattr(args, "seed", 0), getattr(args, "difficulty", "hard"), not getattr(args, "no_bench", False))
        elif args.command == "export":
            from osint_gym.benchmark import benchmark_tasks
            from osint_gym.tasks import save_jsonl

            tasks = benchmark_tasks(args.split, family=args.family, difficulty=args.difficulty, limit=args.limit)
            save_jsonl(tasks, args.out)
            print(f"wrote {len(tasks)} tasks to {args.out}")
        elif args.command == "verify":
            from osint_gym.benchmark import benchmark_world
            from osint_gym.tasks import load_jsonl, verify_task

            world = benchmark_world(args.split)
            tasks = load_jsonl(args.path)
            reasons = Counter(verify_task(world, t).reason.value for t in tasks)
            print(f"{len(tasks)} tasks: " + ", ".join(f"{k}={v}" for k, v in sorted(reasons.items())))
            return 0 if set(reasons) <= {"ok"} else 1
    except (OSINTGymError, OSError) as exc:
        print(f"osint-gym: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
