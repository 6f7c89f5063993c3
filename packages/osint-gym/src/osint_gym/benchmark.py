"""Fixed benchmark splits on disjoint worlds: ``benchmark_tasks("v0:test")``, ``benchmark_tasks("v1:test")``.

Each split has its own world (a different world seed), so no entity of a test task appears in
training data. Split ``s`` of version ``v`` is a pure function of the spec below.

* v0 (``train``, ``dev``, ``test``): repeated question texts skipped; rewordings of one task (the same
  answer and evidence) stay, and so do one-hop tasks whose answer is the start's only neighbour of its
  type. Frozen: it produces the same tasks and contexts as when it was published.
* v1 (``dev``, ``test``, ``hard``): one task per `task_signature` (rewordings skipped), no task whose
  answer adjacency alone gives away (`osint_gym.single_turn.adjacency_is_the_question`), and v1
  single-turn contexts (``provenance["benchmark"]`` selects them): records that show every gold edge.
  ``v1:dev`` and ``v1:test`` draw on v0's dev and test worlds and task seeds (so they share most tasks
  with them); ``v1:hard`` has hard tasks only, on a world of its own. This module is
``osint_gym.benchmark``; its entry points are also exported as ``osint_gym.benchmark_tasks`` and
``osint_gym.benchmark_world`` (there is no function named ``benchmark``, which would shadow the module).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from osint_gym.card import card_markdown
from osint_gym.errors import ConfigError
from osint_gym.single_turn import adjacency_is_the_question
from osint_gym.tasks import DIFFICULTIES, Task, TaskSampler, list_families
from osint_gym.tasks.near_miss import MIN_NEAR_MISSES, reading
from osint_gym.tasks.sampler import check_hops
from osint_gym.world import World, WorldConfig
from osint_gym.world.cache import cached_world


@dataclass(frozen=True)
class SplitSpec:
    world_seed: int
    task_seed: int
    size: int
    difficulty: str | None = None  # only tasks of this difficulty (v1:hard)
    max_share: float = 1.0  # at most this share of the split from one (family, difficulty)


@dataclass(frozen=True)
class BenchmarkSpec:
    world_config: WorldConfig
    splits: dict[str, SplitSpec]
    by_signature: bool = False  # skip rewordings of a task already drawn, not only repeated question texts
    shortcut_free: bool = False  # leave out tasks whose answer adjacency alone gives away
    tagged: bool = False  # tasks carry provenance["benchmark"] (their split id), which selects their contexts
    minimal_constraints: bool = False  # proposals lose the filters their answer does not need (TaskSampler)
    load_bearing: bool = False  # keep a task only if dropping any constraint leaves more than one answer
    near_misses: int = 0  # keep a task only if the question-reading shortcut reads it fairly with this many near-misses


BENCHMARKS: dict[str, BenchmarkSpec] = {
    "v0": BenchmarkSpec(
        world_config=WorldConfig(),
        splits={
            "train": SplitSpec(world_seed=1001, task_seed=11, size=5000),
            "dev": SplitSpec(world_seed=2002, task_seed=22, size=1000),
            "test": SplitSpec(world_seed=3003, task_seed=33, size=1000),
        },
    ),
    "v1": BenchmarkSpec(
        world_config=WorldConfig(),
        splits={
            "dev": SplitSpec(world_seed=2002, task_seed=22, size=1000),
            "test": SplitSpec(world_seed=3003, task_seed=33, size=1000),
            "hard": SplitSpec(world_seed=4004, task_seed=44, size=500, difficulty="hard"),
        },
        by_signature=True, shortcut_free=True, tagged=True,
    ),
    "v2": BenchmarkSpec(
        world_config=WorldConfig(decoy_density=0.8),
        splits={
            "dev": SplitSpec(world_seed=5005, task_seed=55, size=1000, max_share=0.25),
            "test": SplitSpec(world_seed=6006, task_seed=66, size=1000, max_share=0.25),
            "hard": SplitSpec(world_seed=7007, task_seed=77, size=500, difficulty="hard", max_share=0.4),
        },
        by_signature=True, shortcut_free=True, tagged=True, minimal_constraints=True, load_bearing=True,
        near_misses=MIN_NEAR_MISSES,
    ),
}


def split_ids() -> list[str]:
    """Every split id, ``"v0:train"`` first."""
    return [f"{v}:{s}" for v, b in BENCHMARKS.items() for s in b.splits]


def parse_ref(ref: str) -> tuple[str, str]:
    """``"v0:test"`` -> ("v0", "test"), with a clear error for anything else."""
    version, _, split = ref.partition(":") if isinstance(ref, str) else ("", "", "")
    if version not in BENCHMARKS:
        raise ConfigError(f"unknown benchmark {ref!r}; known: {', '.join(split_ids())}")
    if split not in BENCHMARKS[version].splits:
        known = ", ".join(BENCHMARKS[version].splits)
        raise ConfigError(f"unknown split {split!r} of benchmark {version!r}; known: {known}")
    return version, split


def shares_world(a: str, b: str) -> bool:
    """Whether two splits draw on the same world (``v0:test`` and ``v1:test`` do): tasks of one then name
    the entities of the other, so one must not tune what the other evaluates."""
    (va, sa), (vb, sb) = parse_ref(a), parse_ref(b)
    spec_a, spec_b = BENCHMARKS[va], BENCHMARKS[vb]
    return (spec_a.world_config, spec_a.splits[sa].world_seed) == (spec_b.world_config, spec_b.splits[sb].world_seed)


def benchmark_world(ref: str) -> World:
    version, split = parse_ref(ref)
    spec = BENCHMARKS[version]
    return cached_world(spec.world_config, spec.splits[split].world_seed)


@lru_cache(maxsize=8)
def _split_tasks(version: str, split: str) -> tuple[Task, ...]:
    spec = BENCHMARKS[version]
    sp = spec.splits[split]
    world = cached_world(spec.world_config, sp.world_seed)
    sampler = TaskSampler(world, sp.task_seed, minimal_constraints=spec.minimal_constraints)
    chosen = _Selection(spec, world, sp.max_share * sp.size) if spec.shortcut_free else None
    tasks = sampler.generate(sp.size, difficulty=sp.difficulty, by_signature=spec.by_signature,
                             keep=chosen.keep if chosen else None,
                             admit=chosen.admits if chosen and spec.minimal_constraints else None)
    if spec.tagged:  # provenance is no part of a stamp's digest: the stamps stay valid
        tasks = [replace(t, provenance={**t.provenance, "benchmark": f"{version}:{split}"}) for t in tasks]
    return tuple(tasks)


class _Selection:
    """What a split of ``spec`` keeps: no task adjacency alone answers; with ``load_bearing``, only tasks whose
    every constraint is load-bearing; with ``near_misses``, only tasks that the question-reading shortcut reads
    fairly with that many near-misses (`osint_gym.tasks.near_miss.Reading.fair`); at most ``cell`` tasks of one
    (family, difficulty). ``admits`` judges a proposal (nothing is counted), ``keep`` a task joining the split."""

    def __init__(self, spec: BenchmarkSpec, world: World, cell: float) -> None:
        self.spec, self.world, self.cell = spec, world, cell
        self.kept: Counter[tuple[str, str]] = Counter()

    def admits(self, task: Task) -> bool:
        world, spec = self.world, self.spec
        if adjacency_is_the_question(world, task) or self.kept[task.family, task.difficulty] >= self.cell:
            return False
        if spec.load_bearing and task.query is not None and not task.query.load_bearing(world):
            return False
        return not spec.near_misses or reading(world, task).fair(spec.near_misses)

    def keep(self, task: Task) -> bool:
        if not self.admits(task):
            return False
        self.kept[task.family, task.difficulty] += 1
        return True


def _check_filters(family: str | None, difficulty: str | None, limit: int | None, hops: int | None) -> None:
    """The same errors as ``reset(options=...)`` and `TaskSampler` give for the same bad filters."""
    check_hops(hops, None)
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ConfigError(f"difficulty must be one of {DIFFICULTIES} or None, got {difficulty!r}")
    if family is not None and family not in list_families():
        raise ConfigError(f"unknown task family {family!r}; known: {', '.join(list_families())}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ConfigError(f"limit must be an integer >= 0 or None, got {limit!r}")


def benchmark_tasks(ref: str, *, family: str | None = None, difficulty: str | None = None,
                    limit: int | None = None, hops: int | None = None) -> list[Task]:
    """Tasks of a split (``"v0:dev"``), optionally filtered by family, difficulty and number of hops.

    An unknown family or difficulty raises `ConfigError`, and so do valid filters that no task of
    the split matches (a family that makes no tasks of that difficulty): the result is never
    silently empty, except for ``limit=0``.
    """
    version, split = parse_ref(ref)
    _check_filters(family, difficulty, limit, hops)
    tasks = [t for t in _split_tasks(version, split)
             if (family is None or t.family == family) and (difficulty is None or t.difficulty == difficulty)
             and (hops is None or (t.query is not None and t.query.n_hops == hops))]
    if not tasks:
        shown = f", hops={hops!r}" if hops is not None else ""
        raise ConfigError(f"benchmark {ref!r} has no task with family={family!r}, difficulty={difficulty!r}{shown}")
    return tasks[:limit] if limit is not None else tasks


def to_records(tasks: list[Task]) -> list[dict[str, Any]]:
    """Rows for ``datasets.Dataset.from_list`` (or JSONL); datasets itself stays optional."""
    return [t.to_dict() for t in tasks]


def card(ref: str) -> str:
    """The benchmark card of split ``ref`` (markdown): version, composition, shortcut table and scores."""
    return card_markdown(ref, benchmark_tasks(ref))


def to_hf_dataset(tasks: list[Task] | str) -> Any:
    """A ``datasets.Dataset`` of tasks, or of a whole benchmark split given its id (``"v0:test"``); a split's
    dataset carries its benchmark card (`card`) as ``info.description``."""
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ImportError("to_hf_dataset needs the optional dependency: pip install 'osint-gym[datasets]'") from exc
    if not isinstance(tasks, str):
        return datasets.Dataset.from_list(to_records(tasks))
    info = datasets.DatasetInfo(description=card(tasks))
    return datasets.Dataset.from_list(to_records(benchmark_tasks(tasks)), info=info)
