"""Fixed benchmark splits on disjoint worlds: ``benchmark_tasks("v0:test")``.

Each split has its own world (a different world seed), so no entity of a test task appears in
training data. Split ``s`` of version ``v`` is a pure function of the spec below. This module is
``osint_gym.benchmark``; its entry points are also exported as ``osint_gym.benchmark_tasks`` and
``osint_gym.benchmark_world`` (there is no function named ``benchmark``, which would shadow the module).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from osint_gym.errors import ConfigError
from osint_gym.tasks import DIFFICULTIES, Task, TaskSampler, list_families
from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world


@dataclass(frozen=True)
class SplitSpec:
    world_seed: int
    task_seed: int
    size: int


@dataclass(frozen=True)
class BenchmarkSpec:
    world_config: WorldConfig
    splits: dict[str, SplitSpec]


BENCHMARKS: dict[str, BenchmarkSpec] = {
    "v0": BenchmarkSpec(
        world_config=WorldConfig(),
        splits={
            "train": SplitSpec(world_seed=1001, task_seed=11, size=5000),
            "dev": SplitSpec(world_seed=2002, task_seed=22, size=1000),
            "test": SplitSpec(world_seed=3003, task_seed=33, size=1000),
        },
    )
}


def parse_ref(ref: str) -> tuple[str, str]:
    """``"v0:test"`` -> ("v0", "test"), with a clear error for anything else."""
    version, _, split = ref.partition(":") if isinstance(ref, str) else ("", "", "")
    if version not in BENCHMARKS:
        raise ConfigError(f"unknown benchmark {ref!r}; known: {', '.join(f'{v}:{s}' for v, b in BENCHMARKS.items() for s in b.splits)}")
    if split not in BENCHMARKS[version].splits:
        raise ConfigError(f"unknown split {split!r} of benchmark {version!r}; known: {', '.join(BENCHMARKS[version].splits)}")
    return version, split


def benchmark_world(ref: str) -> World:
    version, split = parse_ref(ref)
    spec = BENCHMARKS[version]
    return cached_world(spec.world_config, spec.splits[split].world_seed)


@lru_cache(maxsize=8)
def _split_tasks(version: str, split: str) -> tuple[Task, ...]:
    spec = BENCHMARKS[version]
    sp = spec.splits[split]
    sampler = TaskSampler(cached_world(spec.world_config, sp.world_seed), sp.task_seed)
    return tuple(sampler.generate(sp.size))


def _check_filters(family: str | None, difficulty: str | None, limit: int | None) -> None:
    """The same errors as ``reset(options=...)`` and `TaskSampler` give for the same bad filters."""
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ConfigError(f"difficulty must be one of {DIFFICULTIES} or None, got {difficulty!r}")
    if family is not None and family not in list_families():
        raise ConfigError(f"unknown task family {family!r}; known: {', '.join(list_families())}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ConfigError(f"limit must be an integer >= 0 or None, got {limit!r}")


def benchmark_tasks(ref: str, *, family: str | None = None, difficulty: str | None = None, limit: int | None = None) -> list[Task]:
    """Tasks of a split (``"v0:dev"``), optionally filtered by family and difficulty.

    An unknown family or difficulty raises `ConfigError`, and so do valid filters that no task of
    the split matches (a family that makes no tasks of that difficulty): the result is never
    silently empty, except for ``limit=0``.
    """
    version, split = parse_ref(ref)
    _check_filters(family, difficulty, limit)
    tasks = [t for t in _split_tasks(version, split)
             if (family is None or t.family == family) and (difficulty is None or t.difficulty == difficulty)]
    if not tasks:
        raise ConfigError(f"benchmark {ref!r} has no task with family={family!r}, difficulty={difficulty!r}")
    return tasks[:limit] if limit is not None else tasks


def to_records(tasks: list[Task]) -> list[dict[str, Any]]:
    """Rows for ``datasets.Dataset.from_list`` (or JSONL); datasets itself stays optional."""
    return [t.to_dict() for t in tasks]


def to_hf_dataset(tasks: list[Task] | str) -> Any:
    """A ``datasets.Dataset`` of tasks, or of a whole benchmark split given its id (``"v0:test"``)."""
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ImportError("to_hf_dataset needs the optional dependency: pip install 'osint-gym[datasets]'") from exc
    return datasets.Dataset.from_list(to_records(benchmark_tasks(tasks) if isinstance(tasks, str) else tasks))
