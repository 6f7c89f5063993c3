"""The benchmark suite: ``hatch run bench:all`` (add ``--quick`` for a smaller run).

Each section prints its figures and, where a reference exists, a ratio measured side by side in
this run. The last line is a JSON object with everything (benchmarks/RESULTS.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib as bench  # benchmarks/benchlib.py: the measuring helpers, kept out of the library
import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def section(title: str) -> None:
    print(f"\n== {title} ==", flush=True)


def env_vs_cartpole(steps: int) -> dict:
    c = bench.construction()
    r = bench.step_ratio(steps)
    bench.print_env(c, r)
    return {**r, **c}


def rendering(per_difficulty: int) -> dict:
    c = bench.episode_chars(per_difficulty)
    bench.print_episode_chars(c)
    return c


def tasks_vs_reasoning_gym(n: int) -> dict:
    try:
        import reasoning_gym
    except ImportError:
        print("reasoning-gym is not installed (it is in the bench env: hatch run bench:all)")
        reference = None
    else:
        ds = reasoning_gym.create_dataset("family_relationships", size=n, seed=0)

        def reference(start: int, count: int) -> None:
            for i in range(start, start + count):
                ds[i]

    t = bench.task_rate(n, reference=reference)
    line = (
        f"verified OSINT tasks: {t['tasks_per_s']:.0f}/s "
        f"(median of {t['rounds']} rounds {t['rounds_tasks_per_s']}; the first "
        f"on a fresh world; n={t['tasks']}, every one oracle-verified through the tools under the budgets)"
    )
    if reference is not None:
        line += (
            f" | reasoning-gym family_relationships: {t['reference_per_s']:.0f}/s (unverified, alternating rounds) | "
            f"ratio {t['ratio']:.2f}x (target >= 1x; per round {t['rounds_ratio']})"
        )
    print(line)
    return t


def reward_throughput(n: int) -> dict:
    from osint_gym import proposals
    from osint_gym.benchmark import benchmark_tasks, benchmark_world
    from osint_gym.single_turn import build_context, gold_completion, score_completion

    world = benchmark_world("v0:dev")
    tasks = benchmark_tasks("v0:dev")
    contexts = [build_context(world, t) for t in tasks]
    rng = random.Random(0)
    completions = [
        gold_completion(t, c, cite_evidence=rng.random() < 0.5) if rng.random() < 0.5 else "person_0"
        for t, c in zip(tasks, contexts)
    ]
    t0 = time.perf_counter()
    for i in range(n):
        j = i % len(tasks)
        score_completion(tasks[j], completions[j], contexts[j])
    answerer = n / (time.perf_counter() - t0)
    offers = [proposals.make_offer(world, 0, i) for i in range(200)]
    texts = [proposals.gold_proposal(world, o) for o in offers]
    m = max(1, n // 8)
    t0 = time.perf_counter()
    for i in range(m):
        proposals.validate_proposal(world, proposals.parse_proposal(texts[i % 200]), offer=offers[i % 200])
    generator = m / (time.perf_counter() - t0)
    print(f"answerer reward: {answerer:.0f}/s (n={n}, target >= 20,000) | generator validation: {generator:.0f}/s "
          f"(n={m}, oracle check included, target >= 5,000)")
    return {
        "answerer_rewards_per_s": answerer,
        "generator_validations_per_s": generator,
        "n_answerer": n,
        "n_generator": m,
    }


def world_scaling(sizes: tuple[int, ...]) -> dict:
    builds = [bench.world_build(n) for n in sizes]
    for b in builds:
        print(
            f"world {b['n_people']:>7} people: {b['seconds']:7.2f} s, build memory {b['build_mib']:7.0f} MiB "
            f"(peak RSS {b['peak_mib']:.0f} MiB, {b['baseline_mib']:.0f} MiB before the build), "
            f"{b['nodes']} nodes, {b['edges']} edges"
        )
    log_n = np.log([b["n_people"] for b in builds])
    log_s = np.log([b["seconds"] for b in builds])
    log_m = np.log([max(1.0, b["build_mib"]) for b in builds])
    slope = float(np.polyfit(log_n, log_s, 1)[0])  # log-log least squares: the scaling exponent
    mem_slope = float(np.polyfit(log_n, log_m, 1)[0])
    top_time = float((log_s[-1] - log_s[-2]) / (log_n[-1] - log_n[-2]))
    top_mem = float((log_m[-1] - log_m[-2]) / (log_n[-1] - log_n[-2]))
    print(
        f"fitted scaling exponent (log-log least squares): time {slope:.2f}, "
        f"build memory {mem_slope:.2f} (1.0 = linear); "
        f"between the two largest worlds: time {top_time:.2f}, memory {top_mem:.2f} "
        f"(small worlds carry a fixed overhead)"
    )
    return {"builds": builds, "time_exponent": slope, "memory_exponent": mem_slope, "top_time_exponent": top_time,
            "top_memory_exponent": top_mem}


def selfplay_overhead(run_dir: str | None, quick: bool) -> dict:
    """Share of a tiny self-play run's wall time spent outside TRL's training steps."""
    if run_dir is None:
        out = Path(tempfile.mkdtemp(prefix="bench-selfplay-"))
        sets = ["rounds=1", "eval.enabled=false", f"output_dir='{out}'"]
        if quick:
            sets += ["warm_start.answerer_examples=2000", "warm_start.generator_examples=500"]
        cmd = [
            sys.executable,
            "-m",
            "osint_selfplay",
            "train",
            "--config",
            str(ROOT / "configs/selfplay/tiny-cpu.toml"),
        ]
        for s in sets:
            cmd += ["--set", s]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        run_dir = str(out)
    else:
        wall = None
    summary = json.loads((Path(run_dir) / "summary.json").read_text())
    markers = list(Path(run_dir).rglob("*.done.json"))
    phases = {str(m.relative_to(run_dir)): json.loads(m.read_text()) for m in markers if "evaluation" not in m.name}
    trl = sum(p.get("seconds", 0.0) for p in phases.values())  # inside trainer.train() (generation, rewards, updates)
    rewards = sum(p.get("reward_seconds", 0.0) for p in phases.values())  # our reward code, inside those steps
    solver = sum(p.get("solver_seconds", 0.0) for p in phases.values())  # the frozen answerer sampled for learnability
    phase_wall = sum(p.get("wall_seconds", 0.0) for p in phases.values())
    wall = wall or phase_wall
    outside = wall - trl + rewards
    print(
        f"self-play wall {wall:.1f} s (process, imports included); "
        f"inside TRL training steps {trl:.1f} s (of which our reward code {rewards:.1f} s "
        f"and the frozen answerer's learnability samples {solver:.1f} s); "
        f"outside TRL (data, validation, proposal sampling, reward code, artifacts, start-up) "
        f"{outside:.1f} s = {100 * outside / wall:.1f}% (target < 10%)"
    )
    return {"wall_seconds": wall, "trl_seconds": trl, "reward_seconds": rewards, "solver_seconds": solver,
            "outside_share": outside / wall, "run_dir": run_dir, "rounds": len(summary["rounds"])}


def eval_throughput(quick: bool) -> dict:
    from osint_eval.policies import HFPolicy, OraclePolicy, RandomGuessPolicy
    from osint_eval.runner import run_multi_turn, run_single_turn
    from osint_eval.tasks import load_tasks

    ts = load_tasks("v0:test")
    t0 = time.perf_counter()
    run_single_turn(RandomGuessPolicy(0), ts.world, ts.tasks, batch_size=256)
    single = len(ts.tasks) / (time.perf_counter() - t0)
    n_multi = 200 if quick else 1000
    t0 = time.perf_counter()
    run_multi_turn(OraclePolicy(), ts.world, ts.tasks[:n_multi], batch_size=64)
    multi = n_multi / (time.perf_counter() - t0)
    policy = HFPolicy("tiny:128x3", batch_size=64, max_new_tokens=32)
    n_gen = 128 if quick else 512
    t0 = time.perf_counter()
    run_single_turn(policy, ts.world, ts.tasks[:n_gen], batch_size=64)
    dt = time.perf_counter() - t0
    tokens = policy.tokens_generated
    print(
        f"scripted evaluation: random-guess single-turn {single:.0f} episodes/s (n={len(ts.tasks)}, target >= 1,000), "
        f"oracle multi-turn {multi:.0f} episodes/s (n={n_multi})"
    )
    print(
        f"batched generation, tiny:128x3, batch 64: {tokens / dt:.0f} generated tokens/s "
        f"({tokens} tokens, {n_gen} prompts, {dt:.1f} s)"
    )
    return {"single_turn_episodes_per_s": single, "multi_turn_oracle_episodes_per_s": multi, "n_single": len(ts.tasks),
            "n_multi": n_multi, "generation_tokens_per_s": tokens / dt, "generated_tokens": tokens}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (no 100k world, a reduced self-play run)")
    ap.add_argument("--selfplay-run", help="measure the overhead of an existing run folder instead of running one")
    ap.add_argument("--skip-selfplay", action="store_true")
    ap.add_argument(
        "--only", help="comma-separated sections to run: env, render, tasks, rewards, worlds, eval, selfplay"
    )
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}; {time.strftime('%Y-%m-%d')}"
    )
    results: dict = {}
    quick = args.quick
    sections = [
        ("env", "OSINT-v0 vs CartPole-v1 (both through gym.make)", lambda: env_vs_cartpole(5000 if quick else 20_000)),
        ("render", "oracle episode length: JSON vs compact rendering", lambda: rendering(50 if quick else 150)),
        ("tasks", "verified task generation vs reasoning-gym", lambda: tasks_vs_reasoning_gym(500 if quick else 2000)),
        ("rewards", "reward scoring throughput (one core)", lambda: reward_throughput(5000 if quick else 40_000)),
        (
            "worlds",
            "world scaling",
            lambda: world_scaling((1_000, 3_000, 10_000) if quick else (1_000, 10_000, 100_000)),
        ),
        ("eval", "evaluation throughput", lambda: eval_throughput(quick)),
        ("selfplay", "self-play overhead (tiny CPU run)", lambda: selfplay_overhead(args.selfplay_run, quick)),
    ]
    if only is not None and not only <= {key for key, _, _ in sections}:
        ap.error(
            f"--only: unknown section(s) {sorted(only - {key for key, _, _ in sections})}; "
            f"known: {', '.join(k for k, _, _ in sections)}"
        )
    for key, title, run in sections:
        if (only is not None and key not in only) or (key == "selfplay" and args.skip_selfplay):
            continue
        section(title)
        results[key] = run()
    print("\n" + json.dumps(results, default=str))


if __name__ == "__main__":
    main()
