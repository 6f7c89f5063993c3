"""Verified task sampling: task ``index`` is a pure function of (world, seed, index, filters)."""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Callable, Iterable

from osint_gym.errors import ConfigError, TaskError
from osint_gym.tasks.duplicates import DuplicateFilter
from osint_gym.tasks.families import TaskFamily, create_family, list_families
from osint_gym.tasks.paths import make_task
from osint_gym.tasks.task import DEFAULT_BUDGETS, DIFFICULTIES, Budgets, Task, difficulty_for_hops
from osint_gym.tasks.verify import verify_task, world_fingerprint
from osint_gym.world.config import check_seed
from osint_gym.world.graph import World


class TaskSampler:
    """Draws verified tasks from a world.

    Every draw uses its own ``random.Random(f"{seed}:{index}")`` (reasoning-gym's habit), so item
    ``i`` can be produced without producing the items before it. Candidates that fail
    verification (under ``budgets``) are counted by reason in ``rejections`` and redrawn from the
    same rng; accepted tasks carry their verification stamp. Build one sampler per world and
    reuse it: the families are built once, here. With ``minimal_constraints`` a proposal loses the filters
    its answer does not need (`Query.minimal`) and is phrased again from the same rng (benchmark v2).
    """

    def __init__(
        self,
        world: World,
        seed: int = 0,
        *,
        families: Iterable[str] | None = None,
        difficulty: str | None = None,
        budgets: Budgets = DEFAULT_BUDGETS,
        max_attempts: int = 200,
        minimal_constraints: bool = False,
    ) -> None:
        if difficulty is not None and difficulty not in DIFFICULTIES:
            raise ConfigError(f"difficulty must be one of {DIFFICULTIES} or None, got {difficulty!r}")
        names = list(families) if families is not None else list_families()
        self.world = world
        self.seed = check_seed(seed, "task seed")
        self.difficulty = difficulty
        self.budgets = budgets
        self.max_attempts = max_attempts
        self.minimal_constraints = minimal_constraints
        self.families: dict[str, TaskFamily] = {n: create_family(n) for n in names}
        self.rejections: Counter[str] = Counter()
        self.accepted = 0
        if not self._eligible(None, difficulty):
            raise ConfigError(
                f"no task family among {names} can make {difficulty or 'any'} tasks in a {world.kind.value!r} world"
            )

    def _eligible(self, family: str | None, difficulty: str | None) -> list[TaskFamily]:
        if family is not None and family not in self.families:
            raise ConfigError(f"unknown task family {family!r}; this sampler has {', '.join(self.families)}")
        pool = [self.families[family]] if family else list(self.families.values())
        return [
            f
            for f in pool
            if (difficulty is None and f.difficulties_for(self.world)) or difficulty in f.difficulties_for(self.world)
        ]

    def sample(self, index: int, *, family: str | None = None, difficulty: str | None = None,
               hops: int | None = None) -> Task:
        """The verified task number ``index`` (optionally restricted to a family / difficulty / number of hops)."""
        task = self._draw(index, family, difficulty, hops, None)
        assert task is not None  # only an `admit` check ends a draw without a task
        return task

    def _draw(self, index: int, family: str | None, difficulty: str | None, hops: int | None,
              admit: Callable[[Task], bool] | None) -> Task | None:
        """Task ``index``: proposals drawn from its own rng until one verifies; a proposal with another number of
        hops is drawn again, one that ``admit`` rejects ends the draw (None: no task at this index)."""
        difficulty = check_hops(hops, difficulty or self.difficulty)
        eligible = self._eligible(family, difficulty)
        if not eligible:
            raise ConfigError(f"family {family!r} makes no {difficulty} tasks in this world")
        rng = random.Random(f"{self.seed}:{index}")
        # The difficulty is drawn once per index, then a family that makes it: redrawing it after a
        # rejection would favour the difficulty that is easiest to verify.
        diff = difficulty or rng.choice(
            [d for d in DIFFICULTIES if any(d in f.difficulties_for(self.world) for f in eligible)]
        )
        fams = [f for f in eligible if diff in f.difficulties_for(self.world)
                and (hops is None or hops in f.hop_counts(diff))]
        if not fams:
            raise ConfigError(f"no task family {'(' + family + ') ' if family else ''}makes {hops}-hop {diff} tasks")
        for attempt in range(self.max_attempts):
            fam = rng.choices(fams, weights=[f.config.weight for f in fams])[0]
            provenance = {
                "world": self.world.name,
                "world_seed": self.world.seed,
                "seed": self.seed,
                "index": index,
                "attempt": attempt,
            }
            # a family is asked for a number of hops only when one is wanted (families written before hops existed)
            task = fam.propose(self.world, rng, diff, provenance, **({} if hops is None else {"hops": hops}))
            if task is None:
                self.rejections["no_unique_path"] += 1
                continue
            if hops is not None and task.query is not None and task.query.n_hops != hops:
                self.rejections["other_hops"] += 1
                continue
            if self.minimal_constraints:
                task = self._minimal(task, rng)
            if admit is not None and not admit(task):
                self.rejections["not_admitted"] += 1
                return None
            b = self.budgets
            verdict = verify_task(
                self.world,
                task,
                max_steps=b.max_steps,
                max_parallel_calls=b.max_parallel_calls,
                max_observation_chars=b.max_observation_chars,
                observation_format=b.observation_format,
            )
            if not verdict.ok:
                self.rejections[verdict.reason.value] += 1
                continue
            self.accepted += 1
            return task.stamped(world_fingerprint(self.world), b)
        raise TaskError(
            f"no verified {family or 'any-family'} {difficulty or 'any-difficulty'} task at index {index} "
            f"after {self.max_attempts} attempts (rejections so far: {dict(self.rejections)})"
        )

    def _minimal(self, task: Task, rng: random.Random) -> Task:
        """The task without the constraints its answer does not need, phrased again (a query without a start,
        whose question its family words itself, is left as it is)."""
        query = task.query
        if query is None or query.start is None:
            return task
        lighter = query.minimal(self.world)
        path = lighter.chain(self.world)
        if lighter == query or path is None:  # minimal() keeps the chain: None only for a query without one
            return task
        return make_task(self.world, lighter, path, task.family, rng, task.provenance, difficulty=task.difficulty)

    def generate(
        self, n: int, *, family: str | None = None, difficulty: str | None = None, start: int = 0, unique: bool = True,
        by_signature: bool = False, keep: Callable[[Task], bool] | None = None,
        admit: Callable[[Task], bool] | None = None, hops: int | None = None,
    ) -> list[Task]:
        """``n`` verified tasks from consecutive indices (of ``hops`` hops, if given); with ``unique``, repeated
        questions are skipped.

        By default only the question text counts (``DuplicateFilter(by_signature=False)``): the v0 benchmark
        splits were drawn with this rule and stay byte-identical; rewordings of one task are kept.
        ``by_signature`` also skips rewordings (the same `task_signature`: the v1 splits). Tasks ``keep``
        rejects are skipped and counted as ``filtered``. ``admit`` judges proposals before they are verified: an
        index whose proposal it rejects gives no task (cheaper where it rejects most; `keep` then has the last
        word on verified tasks)."""
        tasks: list[Task] = []
        seen = DuplicateFilter(by_signature=by_signature)
        index = start
        while len(tasks) < n:
            drawn = self._draw(index, family, difficulty, hops, admit)
            index += 1
            if drawn is None:
                continue
            task = drawn
            if unique and not seen.admit(task):
                self.rejections["duplicate"] += 1
                continue
            if keep is not None and not keep(task):
                self.rejections["filtered"] += 1
                continue
            tasks.append(task)
        return tasks


MAX_HOPS = 5  # the longest chains the task families make (convoluted_trace)


def check_hops(hops: object, difficulty: str | None) -> str | None:
    """The difficulty a number of hops implies (1 easy, 2 medium, 3 or more hard), checked against ``difficulty``;
    a bad value is a `ConfigError` naming the expected ones."""
    if hops is None:
        return difficulty
    if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= MAX_HOPS:
        raise ConfigError(f"hops must be an integer in [1, {MAX_HOPS}] or None, got {hops!r}")
    implied = difficulty_for_hops(hops)
    if difficulty is not None and difficulty != implied:
        raise ConfigError(f"hops={hops} makes {implied} tasks, not {difficulty} ones; drop one of the two")
    return implied


class TaskStream:
    """Verified tasks in sampler order from ``start`` (``sampler.sample(start)``, then ``start + 1``, ...),
    generated, and so verified, in batches ahead of serving: the env's default mode serves a stamped task
    per reset instead of verifying one.

    A batch doubles from 1 after each ``restart`` up to ``max_batch``: a stream restarted at every reset
    (``reset(seed=i)`` for each i) generates one task per reset, as a plain sampler would, and a stream that
    runs on pays verification once per ``max_batch`` resets. What is served is a pure function of
    (sampler, filters, start): batching decides when tasks are verified, never which.
    """

    def __init__(self, sampler: TaskSampler, start: int = 0, *, family: str | None = None,
                 difficulty: str | None = None, hops: int | None = None, max_batch: int = 64) -> None:
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise ConfigError(f"max_batch must be an integer >= 1, got {max_batch!r}")
        self.sampler, self.family, self.difficulty, self.max_batch = sampler, family, difficulty, max_batch
        self.hops = hops
        self._ready: deque[Task] = deque()
        self.restart(start)

    def restart(self, start: int) -> None:
        """Serve from sampler index ``start`` on; tasks generated for the old position are dropped."""
        self._next, self._batch = start, 1
        self._ready.clear()

    def __len__(self) -> int:
        """Tasks generated and not yet served."""
        return len(self._ready)

    def next(self) -> Task:
        if not self._ready:
            self._ready.extend(self.sampler.sample(self._next + i, family=self.family, difficulty=self.difficulty,
                                                   hops=self.hops) for i in range(self._batch))
            self._next += self._batch
            self._batch = min(2 * self._batch, self.max_batch)
        return self._ready.popleft()
