"""The main job of osint-gym: one demo episode on the embedded default world, then where to find
the benchmarks (``hatch run bench:all``; the measuring code lives in ``benchmarks/``)."""

from __future__ import annotations

import gymnasium as gym

from osint_gym.agents import OracleAgent, run_episode


def demo_episode(seed: int = 0, difficulty: str | None = "hard") -> str:
    """Run the tool-only oracle through ``gym.make("OSINT-v0")`` and return the ANSI transcript."""
    env = gym.make("OSINT-v0", render_mode="ansi", difficulty=difficulty)
    record = run_episode(env, OracleAgent(), seed=seed)
    b = record.breakdown
    lines = [
        f"task {record.critical_steps} steps | family={record.task.family} difficulty={record.task.difficulty}",
        env.render(),
        f"verdict: correct={b.correct} return={b.total:.3f} breakdown={b.to_dict()}",
        f"gold answer: {record.task.answers[0]}",
    ]
    env.close()
    return "\n".join(str(line) for line in lines)


def main(seed: int = 0, difficulty: str | None = "hard") -> None:
    print("== OSINT-v0 demo episode (tool-only oracle agent) ==")
    print(demo_episode(seed, difficulty))
    print("\n(benchmarks: `hatch run bench:all` runs benchmarks/bench_all.py; figures in benchmarks/RESULTS.md)")
