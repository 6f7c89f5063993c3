"""The main job of osint-gym: one demo episode on the embedded default world, then a short
benchmark summary (the full benchmark is ``benchmarks/bench_env.py``)."""

from __future__ import annotations

import gymnasium as gym

from osint_gym import bench
from osint_gym.tasks.oracle import OraclePolicy


def demo_episode(seed: int = 0, difficulty: str | None = "hard") -> str:
    """Run the tool-only oracle through ``gym.make("OSINT-v0")`` and return the ANSI transcript."""
    env = gym.make("OSINT-v0", render_mode="ansi", difficulty=difficulty)
    obs, info = env.reset(seed=seed)
    core = env.unwrapped
    policy = OraclePolicy()
    policy.reset(core.task.query, core.world.kind, core.max_parallel_calls)
    done = False
    total = 0.0
    while not done:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs))
        total += reward
        done = terminated or truncated
    lines = [
        f"task {info.get('critical_steps')} steps | family={core.task.family} difficulty={core.task.difficulty}",
        env.render(),
        f"verdict: correct={info['correct']} return={total:.3f} breakdown={info['reward_breakdown']}",
        f"gold answer: {core.task.answers[0]}",
    ]
    env.close()
    return "\n".join(lines)


def benchmark_summary(steps: int = 2000) -> str:
    r = bench.step_ratio(steps)
    lines = [
        f"step(): OSINT-v0 {r['osint_step_us']:.1f} us vs CartPole-v1 {r['cartpole_step_us']:.1f} us "
        f"-> ratio {r['step_ratio']:.2f}x (median of {r['steps']} steps, both through gym.make)",
        f"reset(): OSINT-v0 {r['osint_reset_us']:.1f} us vs CartPole-v1 {r['cartpole_reset_us']:.1f} us",
    ]
    for n in (1_000, 10_000):
        b = bench.world_build(n)
        lines.append(f"world build, {n:>6} people: {b['seconds']:.2f} s, {b['build_mib']:.0f} MiB for the build "
                     f"(peak RSS {b['peak_mib']:.0f} MiB), {b['nodes']} nodes / {b['edges']} edges")
    t = bench.task_rate(300)
    lines.append(f"verified unique tasks: {t['tasks_per_s']:.0f} tasks/s ({t['tasks']} tasks, {t['rejected']} candidates rejected)")
    return "\n".join(lines)


def main(seed: int = 0, difficulty: str | None = "hard", run_bench: bool = True) -> None:
    print("== OSINT-v0 demo episode (tool-only oracle agent) ==")
    print(demo_episode(seed, difficulty))
    if run_bench:
        print("\n== benchmark summary (full figures: python benchmarks/bench_env.py) ==")
        print(benchmark_summary())
