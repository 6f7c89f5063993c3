"""Measurements shared by ``bench_env.py`` and ``bench_all.py`` (kept here, not in the library:
subprocesses and /proc are benchmark concerns).

Every figure that has a reference is a ratio measured side by side in the same process.
"""

from __future__ import annotations

import functools
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

_STEP_ACTIONS = (
    '{"tool": "get_profile", "args": {"handle_or_id": "person_%d"}}',
    '{"tool": "get_profile", "args": {"handle_or_id": "account_%d"}}',
    '{"tool": "get_user_posts", "args": {"account": "account_%d", "limit": 5}}',
    '{"tool": "get_connections", "args": {"person_or_account": "person_%d"}}',
)


def _median_step(env: gym.Env, actions: list[Any], n: int) -> tuple[float, float, float]:
    """(median step seconds, median reset seconds, mean reset seconds) over ``n`` steps, resetting when an
    episode ends: seeded once, then ``reset()`` without a seed (Gymnasium's convention: the episode stream
    continues). The mean counts the resets that generate the next batch of tasks."""
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
            env.reset()
            reset_times.append(time.perf_counter() - t0)
    return statistics.median(step_times), statistics.median(reset_times), statistics.mean(reset_times)


def _reseeded_reset(env: gym.Env, n: int, first: int) -> float:
    """Median seconds of ``env.reset(seed=i)`` with a new seed each call (each restarts the task stream)."""
    times: list[float] = []
    for i in range(first, first + n):
        t0 = time.perf_counter()
        env.reset(seed=i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _median_call(fn: Any, n: int) -> float:
    """Median seconds of ``fn()`` over ``n`` calls."""
    times: list[float] = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


KNOB_OPTIONS = {"hops": 2, "decoy_density": 0.4, "name_collision_rate": 0.1}  # a reset with every knob set


def step_ratio(n: int = 5000, rounds: int = 5) -> dict[str, Any]:
    """Median ``step()``/``reset()`` of OSINT-v0 vs CartPole-v1, both through ``gym.make``.

    The two envs are measured in alternating rounds of ``n // rounds`` steps, so a load change on a
    shared machine hits both; each ratio reported is the median of the per-round ratios. ``reset`` is
    OSINT-v0's default mode (sampled tasks, served from a stream verified in batches ahead of use; seeded
    once, then unseeded); ``reset_mean`` counts the resets that verify a batch; ``reseeded_reset`` is
    ``reset(seed=i)`` with a new seed each call (one fresh task verified per reset); ``fixed_reset`` is
    reset on a fixed list of stamped tasks (the v0:test split), which verifies nothing; ``knob_reset`` is the
    default mode's reset with `KNOB_OPTIONS` (another world and a hops filter, each stream served the same way)."""
    import osint_gym  # noqa: F401  (registers the ids)
    from osint_gym.benchmark import benchmark_tasks, benchmark_world

    osint = gym.make("OSINT-v0")
    fixed = gym.make("OSINT-v0", world=benchmark_world("v0:test"), tasks=benchmark_tasks("v0:test"))
    cart = gym.make("CartPole-v1")
    cart.action_space.seed(0)
    cart_actions = [cart.action_space.sample() for _ in range(64)]
    osint_actions = [_STEP_ACTIONS[i % len(_STEP_ACTIONS)] % (i * 7 % 150) for i in range(64)]
    _median_step(osint, osint_actions, 200)  # warm-up: text indices, caches
    _median_step(cart, cart_actions, 200)
    per = max(1, n // rounds)
    rows = []
    for r in range(rounds):
        o_step, o_reset, o_mean = _median_step(osint, osint_actions, per)
        c_step, c_reset, c_mean = _median_step(cart, cart_actions, per)
        f_reset = _median_call(fixed.reset, max(50, per // 10))
        k_reset = _median_call(lambda: osint.reset(options=KNOB_OPTIONS), max(50, per // 10))
        reseeded = max(20, per // 50)
        o_seeded, c_seeded = (_reseeded_reset(env, reseeded, 1000 + r * reseeded) for env in (osint, cart))
        rows.append((o_step, c_step, o_reset, c_reset, f_reset, o_mean, c_mean, o_seeded, c_seeded, k_reset))
    return _step_summary(rows, per, rounds)


def _step_summary(rows: list[tuple[float, ...]], per: int, rounds: int) -> dict[str, Any]:
    med = [statistics.median(col) for col in zip(*rows)]
    return {
        "osint_step_us": med[0] * 1e6, "cartpole_step_us": med[1] * 1e6,
        "step_ratio": statistics.median(r[0] / r[1] for r in rows),
        "step_ratio_rounds": [round(r[0] / r[1], 2) for r in rows],
        "osint_reset_us": med[2] * 1e6, "cartpole_reset_us": med[3] * 1e6,
        "reset_ratio": statistics.median(r[2] / r[3] for r in rows),
        "reset_ratio_rounds": [round(r[2] / r[3], 2) for r in rows],
        "fixed_reset_us": med[4] * 1e6,
        "osint_reset_mean_us": med[5] * 1e6, "cartpole_reset_mean_us": med[6] * 1e6,
        "reset_mean_ratio": statistics.median(r[5] / r[6] for r in rows),
        "osint_reseeded_reset_us": med[7] * 1e6, "cartpole_reseeded_reset_us": med[8] * 1e6,
        "reseeded_reset_ratio": statistics.median(r[7] / r[8] for r in rows),
        "knob_reset_us": med[9] * 1e6, "knob_options": KNOB_OPTIONS,
        "steps": per * rounds, "rounds": rounds,
    }


def construction(n: int = 2000, rounds: int = 5) -> dict[str, float]:
    """Median construction of ``OSINTEnv(world=w, tasks=[stamped_task])`` vs ``gym.make("CartPole-v1")``,
    in alternating rounds (the ratio is the median of per-round ratios)."""
    from osint_gym.benchmark import benchmark_tasks, benchmark_world
    from osint_gym.env import OSINTEnv

    world, task = benchmark_world("v0:test"), benchmark_tasks("v0:test")[0]
    if task.stamp is None:
        raise RuntimeError("benchmark tasks must carry their verification stamp")
    per = max(1, n // rounds)
    rows = [(_median_call(lambda: OSINTEnv(world=world, tasks=[task]), per),
             _median_call(lambda: gym.make("CartPole-v1"), per)) for _ in range(rounds)]
    return {"osint_construct_us": statistics.median(r[0] for r in rows) * 1e6,
            "cartpole_make_us": statistics.median(r[1] for r in rows) * 1e6,
            "construct_ratio": statistics.median(r[0] / r[1] for r in rows), "n": per * rounds}


def print_env(c: dict[str, Any], r: dict[str, Any]) -> None:
    """The env figures next to CartPole-v1's (bench_all.py and bench_env.py)."""
    print(f"construction: OSINTEnv(world=w, tasks=[stamped task]) {c['osint_construct_us']:.1f} us (target <= 50 us) | "
          f"gym.make('CartPole-v1') {c['cartpole_make_us']:.1f} us | ratio {c['construct_ratio']:.2f}x")
    print(
        f"step():  OSINT-v0 {r['osint_step_us']:.1f} us | CartPole-v1 {r['cartpole_step_us']:.1f} us | ratio "
        f"{r['step_ratio']:.2f}x (target <= 3x; median of {r['rounds']} alternating rounds: {r['step_ratio_rounds']})"
    )
    print(f"reset(): OSINT-v0 default mode (a stream of tasks verified in batches ahead of use; seeded once, then "
          f"reset()) median {r['osint_reset_us']:.1f} us (target <= 100 us) | "
          f"CartPole-v1 {r['cartpole_reset_us']:.1f} us"
          f" | ratio {r['reset_ratio']:.1f}x (rounds: {r['reset_ratio_rounds']})")
    print(f"         mean, the batch-verifying resets included: OSINT-v0 {r['osint_reset_mean_us']:.1f} us | "
          f"CartPole-v1 {r['cartpole_reset_mean_us']:.1f} us | ratio {r['reset_mean_ratio']:.1f}x")
    print(f"         reset(seed=i), a new seed each call (one task verified per reset): OSINT-v0 "
          f"{r['osint_reseeded_reset_us']:.1f} us | CartPole-v1 {r['cartpole_reseeded_reset_us']:.1f} us | ratio "
          f"{r['reseeded_reset_ratio']:.1f}x | on a fixed list of stamped tasks {r['fixed_reset_us']:.1f} us")
    print(f"         reset(options={r['knob_options']}), unseeded: median {r['knob_reset_us']:.1f} us")


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
    out = subprocess.run(
        [sys.executable, "-c", _BUILD_SNIPPET.format(n=n_people)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def task_rate(
    n: int = 500, seed: int = 0, reference: Callable[[int, int], None] | None = None, rounds: int = 5
) -> dict[str, Any]:
    """Verified tasks per second (repeated questions skipped) on the default world, in ``rounds`` rounds of
    ``n // rounds`` tasks (consecutive indices, one sampler). ``reference(start, count)``, if given,
    makes ``count`` reference items right after each round, so that a load change on a shared
    machine hits both; ``ratio`` is the median of the per-round ratios. The first round runs on a
    fresh world (records built as the oracle reads them); ``warm`` rounds reuse them."""
    from osint_gym.tasks import TaskSampler
    from osint_gym.world import WorldConfig
    from osint_gym.world.cache import cached_world

    world = cached_world(WorldConfig(), seed)
    world.cache.pop("records", None)  # measure the fresh world, whatever ran before in this process
    sampler = TaskSampler(world, seed)
    per = max(1, n // rounds)
    ours: list[float] = []
    refs: list[float] = []
    start = 0
    for r in range(rounds):
        t0 = time.perf_counter()
        tasks = sampler.generate(per, start=start, unique=True)  # duplicates skipped within a round
        ours.append(len(tasks) / (time.perf_counter() - t0))
        start = tasks[-1].provenance["index"] + 1
        if reference is not None:
            t0 = time.perf_counter()
            reference(r * per, per)
            refs.append(per / (time.perf_counter() - t0))
    out: dict[str, Any] = {
        "tasks": per * rounds, "rounds": rounds, "tasks_per_s": statistics.median(ours), "cold_tasks_per_s": ours[0],
        "warm_tasks_per_s": statistics.median(ours[1:] or ours), "rounds_tasks_per_s": [round(x) for x in ours],
        "rejected": sum(sampler.rejections.values()),
    }
    if refs:
        out.update(
            {
                "reference_per_s": statistics.median(refs),
                "ratio": statistics.median(o / f for o, f in zip(ours, refs)),
                "rounds_ratio": [round(o / f, 3) for o, f in zip(ours, refs)],
            }
        )
    return out


def _quantiles(values: list[int]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]}


def _episode_texts(env: Any, agent: Callable[[], Any], runs: list[dict[str, Any]]) -> list[tuple[Any, str, list[str]]]:
    """(record, the whole episode as one text, the actions) of an oracle episode per run's options / seed."""
    from osint_gym.agents import run_episode

    out = []
    for run in runs:
        r = run_episode(env, agent(), **run)
        text = r.first_observation + "".join(f"\n{t.action}\n{t.observation}" for t in r.turns)
        out.append((r, text, [t.action for t in r.turns]))
    return out


def _bpe(texts: list[str], vocab: int = 4096) -> Any:
    """A byte-level BPE trained on ``texts`` that keeps `` person_12`` whole (NOTES-tiny-models.md's pre-tokenizer)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r" ?[A-Za-z0-9_]+| ?[^\sA-Za-z0-9_]+|\s+"), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def episode_chars(per_difficulty: int = 150, benchmark: str = "v0:dev", train_episodes: int = 2000) -> dict[str, Any]:
    """Characters (and, with ``tokenizers`` installed, tokens) of oracle episodes: first observation +
    every action and observation, in the JSON rendering with JSON actions vs the compact rendering with
    short actions, on the same tasks. Each rendering's tokenizer is trained on its own oracle episodes
    in a training world (seed 1, not the benchmark's)."""
    from osint_gym.agents import OracleAgent
    from osint_gym.env import OSINTEnv

    try:
        import tokenizers  # noqa: F401
    except ImportError:
        train_episodes = 0
    runs = [{"options": {"difficulty": d, "task_index": i}} for d in ("easy", "medium") for i in range(per_difficulty)]
    out: dict[str, Any] = {"benchmark": benchmark, "tasks": len(runs)}
    for fmt, actions in (("json", "json"), ("compact", "short")):
        episodes = _episode_texts(
            OSINTEnv(benchmark=benchmark, observation_format=fmt), functools.partial(OracleAgent, actions), runs
        )
        records = [r for r, _, _ in episodes]
        sizes = [len(text) for _, text, _ in episodes]
        # the same episode without the reset's tool list (one constant line a trainer can put in a system prompt)
        bare = [n - len(r.first_observation) + len(r.task.question) for n, r in zip(sizes, records)]
        out[fmt] = {"episode_chars": _quantiles(sizes), "without_tool_list": _quantiles(bare),
                    "action_chars": _quantiles([sum(map(len, a)) for _, _, a in episodes]),
                    "turns_median": statistics.median(len(r.turns) for r in records),
                    "oracle_success": sum(r.correct for r in records) / len(records)}
        if train_episodes:
            train_env = OSINTEnv(seed=1, observation_format=fmt)
            train = _episode_texts(
                train_env, functools.partial(OracleAgent, actions), [{"seed": i} for i in range(train_episodes)]
            )
            tok = _bpe([text for _, text, _ in train])
            out[fmt]["episode_tokens"] = _quantiles([len(tok.encode(text).ids) for _, text, _ in episodes])
            out[fmt]["action_tokens"] = _quantiles(
                [sum(len(tok.encode(a).ids) for a in acts) for _, _, acts in episodes]
            )
    out["ratio_median"] = out["json"]["episode_chars"]["median"] / out["compact"]["episode_chars"]["median"]
    return out


def print_episode_chars(c: dict[str, Any]) -> None:
    for fmt, label in (("json", "JSON + JSON actions"), ("compact", "compact + short actions")):
        f = c[fmt]
        tokens = (
            f"; tokens median {f['episode_tokens']['median']:.0f} (p95 {f['episode_tokens']['p95']}), action tokens "
            f"median {f['action_tokens']['median']:.0f}"
            if "episode_tokens" in f
            else ""
        )
        print(
            f"{label:>24}: episode chars median {f['episode_chars']['median']:.0f}, p95 {f['episode_chars']['p95']}; "
            f"without the tool list median {f['without_tool_list']['median']:.0f}, "
            f"p95 {f['without_tool_list']['p95']}; "
            f"action chars median {f['action_chars']['median']:.0f}; turns median {f['turns_median']:.0f}; "
            f"oracle success {f['oracle_success']:.3f}{tokens}"
        )
    print(
        f"{c['tasks']} {c['benchmark']} easy+medium oracle episodes; "
        f"JSON/compact median ratio {c['ratio_median']:.2f}x "
        "(tokens: a 4,096-token byte-level BPE per rendering, "
        "trained on that rendering's oracle episodes in another world)"
    )
