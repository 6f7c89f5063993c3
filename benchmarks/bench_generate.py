"""Multi-turn episodes per second through each decoding path, side by side on the same tasks.

    hatch run python benchmarks/bench_generate.py [--model runs/tiny-cpu/warm_start/shared/final_model] [--tasks 128]

Hugging Face ``generate`` is the reference; ``exact`` and ``prefix`` are `osint_eval.decoding.Decoder`.
The episodes are the main job's evaluation settings (compact observations, short actions, bare prompt,
8 steps, 4 episodes in flight per batch slot); greedy, so every mode should play the same transcripts,
and the script counts how many do. One torch thread, as the main job's phases run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from osint_eval.policies import HFPolicy
from osint_eval.runner import run_multi_turn
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets

EPISODE = {"spec": EpisodeSpec(Budgets(8, 4, 4000, "compact"), action_format="short", describe_tools=False),
           "batch_size": 32, "in_flight": 4}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="runs/tiny-cpu/warm_start/shared/final_model",
                   help="a trained model folder (default: the main job's warm start; run `hatch run train` first)")
    p.add_argument("--tasks", type=int, default=128, help="v0:test tasks played by every mode")
    p.add_argument("--max-new-tokens", type=int, default=40, help="tokens per model turn")
    args = p.parse_args()
    if not Path(args.model).is_dir():
        sys.exit(f"bench_generate: no model folder {args.model!r}; run `hatch run train` or pass --model")
    torch.set_num_threads(1)
    world, tasks = benchmark_world("v0:test"), benchmark_tasks("v0:test")[: args.tasks]
    out: dict[str, dict] = {}
    runs = {}
    for mode in ("generate", "exact", "prefix"):
        policy = HFPolicy(args.model, batch_size=32, max_new_tokens=args.max_new_tokens, decoding=mode)
        start = time.perf_counter()
        runs[mode] = run_multi_turn(policy, world, tasks, **EPISODE)
        seconds = time.perf_counter() - start
        d = policy.decoder
        same = sum(a.transcript == b.transcript for a, b in zip(runs["generate"], runs[mode]))
        out[mode] = {"seconds": round(seconds, 2), "episodes_per_second": round(len(tasks) / seconds, 2),
                     "solved": sum(r.correct for r in runs[mode]), "same_transcripts_as_generate": same,
                     "prefilled_tokens": d.prefilled_tokens if d else None,
                     "reused_tokens": d.reused_tokens if d else None}
        out[mode]["speedup_vs_generate"] = round(out["generate"]["seconds"] / seconds, 2)
        print(f"{mode:9s} {seconds:6.1f} s  {out[mode]['episodes_per_second']:6.2f} episodes/s  "
              f"x{out[mode]['speedup_vs_generate']:.2f}  solved {out[mode]['solved']}/{len(tasks)}  "
              f"same transcripts {out[mode]['same_transcripts_as_generate']}/{len(tasks)}", flush=True)
    print(json.dumps({"tasks": len(tasks), "model": args.model, **out}))


if __name__ == "__main__":
    main()
