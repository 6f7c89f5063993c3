"""OSINT-v0 over the network vs in process: steps/s and p50/p99 step latency with 1, 64 and 256 sessions.

    python benchmarks/bench_serve.py [--seconds 10] [--sessions 1,64,256] [--paced 1000]

One run measures, side by side:
- in process: the same episodes (reset + the oracle's actions on v0:test) on `OSINTEnv`, one thread;
- over the wire: a real ``osint-gym serve`` process on a loopback port, driven by N asyncio sessions
  of `AsyncOSINTClient` in this process (so client and server share the machine's cores);
  the server's CPU time per step is read from /proc (its capacity apart from the client's); closed loop
  (each session sends its next step as soon as the reply arrives: the saturated rate,
  latency = sessions / rate by Little's law), then open loop with 256 sessions paced to ``--paced``
  steps/s in total (the latency a trainer sees at that load).
Target (issue 13): >= 1,000 steps/s with 256 sessions on 2 cores, p99 < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import time
from typing import Any

from osint_gym.agents import OracleAgent, run_episode
from osint_gym.env import OSINTEnv
from osint_gym.integrations.serve.client import AsyncOSINTClient
from osint_gym.integrations.serve.process import ServerProcess

EPISODES = 64


def episodes() -> list[tuple[int, list[str]]]:
    env = OSINTEnv(benchmark="v0:test")
    out = []
    for i in range(EPISODES):
        record = run_episode(env, OracleAgent(), seed=i, options={"task_index": i})
        out.append((i, [t.action for t in record.turns]))
    return out


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def figures(lat: list[float], wall: float) -> dict[str, float]:
    return {
        "steps_per_s": len(lat) / wall,
        "p50_ms": 1e3 * pct(lat, 50),
        "p99_ms": 1e3 * pct(lat, 99),
        "steps": len(lat),
    }


def in_process(eps: list[tuple[int, list[str]]], seconds: float) -> dict[str, float]:
    env = OSINTEnv(benchmark="v0:test")
    lat: list[float] = []
    t_end = time.perf_counter() + seconds
    t0 = time.perf_counter()
    while time.perf_counter() < t_end:
        for i, actions in eps:
            env.reset(seed=i, options={"task_index": i})
            for a in actions:
                s = time.perf_counter()
                env.step(a)
                lat.append(time.perf_counter() - s)
    wall = time.perf_counter() - t0
    return figures(lat, wall)


async def _session(env: AsyncOSINTClient, k: int, eps: list[tuple[int, list[str]]], start: asyncio.Event,
                   clock: dict[str, float], lat: list[float], interval: float | None) -> None:
    j = k
    await start.wait()
    t_end = clock["end"]
    next_at = clock["start"] + (interval or 0.0) * k / max(1, clock["sessions"])  # paced sessions evenly spread
    while True:
        i, actions = eps[j % len(eps)]
        j += 1
        await env.reset(seed=i, options={"task_index": i})
        for a in actions:
            if interval is not None:
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                next_at += interval
            if time.perf_counter() >= t_end:
                return
            s = time.perf_counter()
            await env.step(a)
            lat.append(time.perf_counter() - s)


async def over_wire(url: str, sessions: int, eps: list[tuple[int, list[str]]], seconds: float,
                    paced: float | None = None) -> dict[str, float]:
    """Every session connected first (the server builds its env), then the clock starts."""
    clients = [AsyncOSINTClient(url, timeout=60) for _ in range(sessions)]
    await asyncio.gather(*(c.connect() for c in clients))
    lat: list[float] = []
    start, clock = asyncio.Event(), {"sessions": float(sessions)}
    tasks = [asyncio.create_task(_session(c, k, eps, start, clock, lat, sessions / paced if paced else None))
             for k, c in enumerate(clients)]
    gc.collect()
    gc.disable()  # the load generator's own collections would show up as server latency
    clock["start"] = t0 = time.perf_counter()
    clock["end"] = t0 + seconds
    start.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    gc.enable()
    await asyncio.gather(*(c.close() for c in clients))
    return figures(lat, wall)


def run(coro: Any) -> Any:
    """asyncio.run on uvloop where it is installed (as uvicorn's server does), else the stock loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def row(name: str, sessions: int | str, m: dict[str, float], ref: float) -> str:
    cpu = f"{m['server_cpu_us']:.0f}" if "server_cpu_us" in m else "-"
    return (f"| {name} | {sessions} | {m['steps_per_s']:,.0f} | {m['p50_ms']:.2f} | {m['p99_ms']:.2f} | "
            f"{m['steps_per_s'] / ref:.3f}x | {cpu} | {m['steps']:,} |")


def measured(server: ServerProcess, n: int, eps: list[tuple[int, list[str]]], seconds: float,
             paced: float | None = None) -> dict[str, float]:
    assert server.proc is not None
    before = cpu_seconds(server.proc.pid)
    m = run(over_wire(server.url, n, eps, seconds, paced))
    m["server_cpu_us"] = 1e6 * (cpu_seconds(server.proc.pid) - before) / max(1, m["steps"])
    return m


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    p.add_argument("--sessions", default="1,64,256")
    p.add_argument("--paced", type=float, default=1000.0, help="open-loop total steps/s with the largest session count")
    args = p.parse_args()
    counts = [int(x) for x in args.sessions.split(",")]
    print(
        f"# bench_serve: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {args.seconds:g} s per row", flush=True
    )
    eps = episodes()
    ref = in_process(eps, args.seconds)
    lines = ["| mode | sessions | steps/s | p50 ms | p99 ms | vs in process | server CPU us/step | steps |",
             "|---|---|---|---|---|---|---|---|",
             row("in process (OSINTEnv.step)", 1, ref, ref["steps_per_s"])]
    with ServerProcess(
        ["--benchmark", "v0:test", "--max-sessions", str(max(counts) + 8), "--rate", "1000000"]
    ) as server:
        for n in counts:
            m = measured(server, n, eps, args.seconds)
            lines.append(row("WebSocket, closed loop", n, m, ref["steps_per_s"]))
            print(lines[-1], flush=True)
        n = max(counts)
        m = measured(server, n, eps, args.seconds, paced=args.paced)
        lines.append(row(f"WebSocket, paced at {args.paced:,.0f} steps/s", n, m, ref["steps_per_s"]))
        health = server.health()
    print("\n".join(lines))
    print(f"server health after the run: {health}")


if __name__ == "__main__":
    main()
