"""Task sources: benchmark splits, JSONL task files, and proposals sampled from a generator checkpoint.

Every task is verified against its world before it is scored; a source that yields invalid tasks
says how many and why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osint_eval.errors import EvalError
from osint_gym.benchmark import BENCHMARKS, benchmark_tasks, benchmark_world, parse_ref
from osint_gym.errors import ConfigError, TaskError
from osint_gym.tasks import Task, load_jsonl, verify_task
from osint_gym.world import World

GENERATOR_PREFIX = "generator:"
GENERATOR_STREAM = "eval_generator"  # the offers a generator:MODEL task set samples (`osint_gym.streams`)


@dataclass
class TaskSet:
    source: str
    world: World
    tasks: list[Task]
    world_ref: str
    proposals: dict[str, Any] | None = None  # generator sources: valid/total and reasons
    rejected: dict[str, int] = field(default_factory=dict)  # file sources: tasks that failed verification


def _world_for_file(tasks: list[Task], world_ref: str | None) -> str:
    if world_ref:
        return world_ref
    seeds = {t.provenance.get("world_seed") for t in tasks}
    for version, spec in BENCHMARKS.items():
        for split, sp in spec.splits.items():
            if seeds == {sp.world_seed}:
                return f"{version}:{split}"
    raise EvalError("cannot tell which world the task file belongs to; pass --world v0:<split>")


def load_tasks(source: str, *, world: str | None = None, family: str | None = None, difficulty: str | None = None,
               limit: int | None = None, seed: int = 0, generator_options: dict[str, Any] | None = None) -> TaskSet:
    """``v0:test`` | a ``.jsonl`` file | ``generator:<model>`` (proposals sampled and validated; its
    ``generator_options``: ``mode``, ``max_hops``, ``offer_filters`` as osint-gym's `make_offer` takes
    them, ``max_new_tokens``, ``temperature``)."""
    try:
        if source.startswith(GENERATOR_PREFIX):
            return _from_generator(
                source[len(GENERATOR_PREFIX) :], world or "v0:test", limit or 200, seed, generator_options or {}
            )
        if source.endswith(".jsonl") or Path(source).is_file():
            if not Path(source).is_file():
                raise EvalError(f"task file {source!r} does not exist")
            tasks = load_jsonl(source)
            ref = _world_for_file(tasks, world)
            w = benchmark_world(ref)
            verdicts = [verify_task(w, t) for t in tasks]
            rejected = Counter(v.reason.value for v in verdicts if not v.ok)
            kept = [t for t, v in zip(tasks, verdicts) if v.ok and (family is None or t.family == family)
                    and (difficulty is None or t.difficulty == difficulty)]
            return TaskSet(source, w, kept[:limit] if limit else kept, ref, rejected=dict(rejected))
        parse_ref(source)
        tasks = benchmark_tasks(source, family=family, difficulty=difficulty, limit=limit)
        if not tasks:
            raise EvalError(f"no task of {source} matches family={family!r} difficulty={difficulty!r}")
        return TaskSet(source, benchmark_world(source), tasks, source)
    except (ConfigError, TaskError) as exc:
        raise EvalError(str(exc)) from None


def _from_generator(model: str, world_ref: str, n: int, seed: int, options: dict[str, Any]) -> TaskSet:
    from osint_eval.policies import HFPolicy
    from osint_gym import proposals

    w = benchmark_world(world_ref)
    mode, max_hops = options.get("mode", "fixed"), options.get("max_hops", 2)
    offers = proposals.stream_offers(w, seed, GENERATOR_STREAM, n, mode=mode, max_hops=max_hops,
                                     filters=options.get("offer_filters", False))
    policy = HFPolicy(
        model, max_new_tokens=options.get("max_new_tokens", 128), temperature=options.get("temperature", 1.0), seed=seed
    )
    try:
        batch = proposals.sample_tasks([w] * len(offers), offers, policy.generate, max_hops=max_hops,
                                       id_prefix="generated-")
    finally:
        policy.close()
    tasks, reasons = batch.tasks, batch.reasons
    return TaskSet(f"{GENERATOR_PREFIX}{model}", w, tasks, world_ref,
                   proposals={"total": n, "valid": len(tasks), "reasons": dict(reasons)})
