"""Measurements shared by ``bench_env.py`` and ``bench_all.py`` (kept here, not in the library: subprocesses and /proc are benchmark concerns).

Every figure that has a reference is a ratio measured side by side in the same process.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

import gymnasium as gym

_STEP_ACTIONS = (
    '{"tool": "get_profile", "args": {"handle_or_id": "person_%d"}}',
    '{"tool": "get_profile", "args": {"handle_or_id": "account_%d"}}',
    '{"tool": "get_user_posts", "args": {"account": "account_%d", "limit": 5}}',
    '{"tool": "get_connections", "args": {"person_or_account": "person_%d"}}',
)


def _median_step(env: gym.Env, actions: list[Any], n: int) -> tuple[float, float]:
    """(median step seconds, median reset seconds) over ``n`` steps, resetting when an episode ends."""
    step_times: list[float] = []
    reset_times: list[float] = []
    t0 = time.perf_counter()
    env.reset(seed=0)
    reset_times.append(time.perf_counter() - t0)
    for i in range(n):
        action = actions[i % len(actions)]
        t0 = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        step_times.append(time.perf_counter() - t0)
        if terminated or truncated:
            t0 = time.perf_counter()
            env.reset(seed=i)
            reset_times.append(time.perf_counter() - t0)
    return statistics.median(step_times), statistics.median(reset_times)


def step_ratio(n: int = 5000) -> dict[str, float]:
    """Median ``step()``/``reset()`` of OSINT-v0 vs CartPole-v1, both through ``gym.make``."""
    import osint_gym  # noqa: F401  (registers the ids)

    osint = gym.make("OSINT-v0")
    cart = gym.make("CartPole-v1")
    cart.action_space.seed(0)
    cart_actions = [cart.action_space.sample() for _ in range(64)]
    osint_actions = [_STEP_ACTIONS[i % len(_STEP_ACTIONS)] % (i * 7 % 150) for i in range(64)]
    _median_step(osint, osint_actions, 200)  # warm-up: text indices, caches
    _median_step(cart, cart_actions, 200)
    o_step, o_reset = _median_step(osint, osint_actions, n)
    c_step, c_reset = _median_step(cart, cart_actions, n)
    return {
        "osint_step_us": o_step * 1e6, "cartpole_step_us": c_step * 1e6, "step_ratio": o_step / c_step,
        "osint_reset_us": o_reset * 1e6, "cartpole_reset_us": c_reset * 1e6, "reset_ratio": o_reset / c_reset,
        "steps": n,
    }


_BUILD_SNIPPET = """
import json, resource, time
from osint_gym.world import WorldConfig, generate_world

def rss_mib():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) / 1024

before = rss_mib()
t = time.perf_counter(); w = generate_world(WorldConfig(n_people={n}), seed=0); dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"n_people": {n}, "seconds": dt, "peak_mib": peak, "baseline_mib": before, "build_mib": peak - before,
                  "nodes": len(w), "edges": w.graph.number_of_edges()}}))
"""


def world_build(n_people: int) -> dict[str, float]:
    """Build time and memory in a fresh process: peak RSS, and the peak above the RSS just before
    the build (the interpreter and imports excluded)."""
    out = subprocess.run([sys.executable, "-c", _BUILD_SNIPPET.format(n=n_people)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def task_rate(n: int = 500, seed: int = 0) -> dict[str, float]:
    """Verified, uniqueness-checked tasks per second on the default world."""
    from osint_gym.tasks import TaskSampler
    from osint_gym.world import WorldConfig
    from osint_gym.world.cache import cached_world

    world = cached_world(WorldConfig(), seed)
    sampler = TaskSampler(world, seed)
    t0 = time.perf_counter()
    tasks = sampler.generate(n, unique=True)
    dt = time.perf_counter() - t0
    return {"tasks": len(tasks), "seconds": dt, "tasks_per_s": len(tasks) / dt, "rejected": sum(sampler.rejections.values())}
