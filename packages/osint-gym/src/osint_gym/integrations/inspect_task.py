"""OSINT-v0 as an Inspect AI task: ``inspect eval osint_gym/osint_v0 --model <provider>/<model>``.

Registered through Inspect's package entry point (``[project.entry-points.inspect_ai]`` in osint-gym's
pyproject), so Inspect finds ``osint_gym/osint_v0`` once ``osint-gym[inspect]`` is installed. One
`Sample` per benchmark task (the task id, the question as input, the gold answer ids as target, family
and difficulty as metadata); the solver is Inspect's ``react()`` over the env's own tools with the env's
``answer`` as its submit tool (`osint_gym.integrations.inspect_tools`); the scorer reads the env's episode record:
success is the score's value, and the reward, its breakdown, the critical steps, the evidence F1, the
counts and the whole record (``metadata["episode"]``, `EpisodeRecord.to_dict`) are its metadata, which
osint-eval reads back (``osint-eval compare ... --candidate inspect:<log>``). Nothing is re-scored
outside the env.

Task options (``-T name=value``): ``split`` (any benchmark split: ``v0:test``
by default, ``v1:test``, ``v2:test``, ``v2:hard``, ...), ``difficulty``,
``family``, ``limit``, ``observation_format`` (``json`` or ``compact``), ``max_turns`` (the env's step
budget, default 24), ``max_parallel_calls`` (4) and ``max_observation_chars`` (16384), and the difficulty knobs
(`osint_gym.knobs`): ``hops`` filters the tasks by their number of hops; ``decoy_density`` and
``name_collision_rate`` sample ``limit`` tasks (100 by default) from a world generated with them, world and task
seed ``seed`` (0), instead of a split. ``start_depth`` (0) starts every episode after the demonstrator's first k
steps (`osint_gym.rungs`): the sample's input becomes the question followed by the given steps, and a split with a
task too short for that depth is a one-line error.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    accuracy,
    grouped,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import Solver, TaskState

from osint_gym import rungs
from osint_gym.env import OSINTEnv
from osint_gym.episode import EpisodeRecord
from osint_gym.errors import ConfigError
from osint_gym.integrations.inspect_tools import SESSIONS, close_session, osint_agent
from osint_gym.knobs import knob_tasks
from osint_gym.tasks import DEFAULT_BUDGETS
from osint_gym.tasks import Task as OSINTTask
from osint_gym.tasks.task import OBSERVATION_FORMATS

SCORER_NAME = "osint_scorer"  # the key of the score in an Inspect log (`osint_eval.inspect_log` reads it)

try:  # Inspect's CLI prints this error's message alone, not a traceback (a private class of Inspect's)
    from inspect_ai._util.error import PrerequisiteError as _CLIMessage
except ImportError:  # pragma: no cover - a future Inspect without it: a plain ConfigError
    _CLIMessage = Exception  # type: ignore[assignment,misc,unused-ignore]


class TaskOptionError(ConfigError, _CLIMessage):
    """A bad task option (``-T``): osint-gym's one-line `ConfigError`, shown by ``inspect eval`` as one line."""

    def __init__(self, message: str) -> None:
        ConfigError.__init__(self, message)
        self.message = message  # what Inspect's CLI prints


def task_samples(tasks: list[OSINTTask], split: str) -> list[Sample]:
    """One Sample per task; the gold answers are the target (never shown to the model)."""
    return [Sample(id=t.task_id, input=t.question, target=list(t.answers),
                   metadata={"task_id": t.task_id, "family": t.family, "difficulty": t.difficulty, "split": split})
            for t in tasks]


def _check_budgets(observation_format: str, max_turns: int | None, max_parallel_calls: int,
                   max_observation_chars: int) -> int:
    """The step budget, after the checks that fail at once (before any sample runs)."""
    if observation_format not in OBSERVATION_FORMATS:
        raise ConfigError(f"observation_format must be one of {OBSERVATION_FORMATS}, got {observation_format!r}")
    for name, value, lo in (("max_turns", max_turns, 1), ("max_parallel_calls", max_parallel_calls, 1),
                            ("max_observation_chars", max_observation_chars, 256)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < lo):
            raise ConfigError(f"{name} must be an integer >= {lo}, got {value!r}")
    return DEFAULT_BUDGETS.max_steps if max_turns is None else max_turns


@task
def osint_v0(split: str | None = None, difficulty: str | None = None, family: str | None = None,
             limit: int | None = None, observation_format: str = "json", max_turns: int | None = None,
             max_parallel_calls: int = DEFAULT_BUDGETS.max_parallel_calls,
             max_observation_chars: int = DEFAULT_BUDGETS.max_observation_chars, solver: Solver | None = None,
             hops: int | None = None, decoy_density: float | None = None, name_collision_rate: float | None = None,
             seed: int = 0, start_depth: int = 0) -> Task:
    """OSINT-v0 tasks of a benchmark split (``v0:test`` unless given), or sampled with the world knobs, played by
    react() in the env, scored by the env.

    An unknown split, difficulty or family, a bad budget or knob, raises osint-gym's one-line `ConfigError`
    (a `TaskOptionError`, which ``inspect eval`` prints as that line alone).
    """
    try:
        max_steps = _check_budgets(observation_format, max_turns, max_parallel_calls, max_observation_chars)
        world, tasks, source = knob_tasks(split, seed=seed, limit=limit, family=family, difficulty=difficulty,
                                          hops=hops, decoy_density=decoy_density,
                                          name_collision_rate=name_collision_rate)
        budgets: dict[str, Any] = {"max_steps": max_steps, "max_parallel_calls": max_parallel_calls,
                   "max_observation_chars": max_observation_chars, "observation_format": observation_format,
                   "describe_tools": False}
        rungs.check_tasks(lambda t: OSINTEnv(world=world, tasks=[t], start_depth=0, **budgets), tasks, start_depth)
    except ConfigError as exc:
        raise TaskOptionError(str(exc)) from None
    by_id = {t.task_id: t for t in tasks}

    def make_env(state: TaskState) -> OSINTEnv:
        # the question alone is the sample's input (with a start depth, the given steps after it: osint_agent puts
        # the reset observation there); the tools reach the model as Inspect tools
        return OSINTEnv(world=world, tasks=[by_id[str(state.sample_id)]], start_depth=start_depth, **budgets)

    return Task(dataset=MemoryDataset(task_samples(tasks, source), name=f"osint-{source}"),
                solver=solver or osint_agent(make_env), scorer=osint_scorer(), cleanup=close_session)


@metric
def mean_reward() -> Metric:
    """The mean of the env's episode reward (the score's ``metadata["reward"]``)."""

    def compute(scores: list[SampleScore]) -> float:
        rewards = [float((s.score.metadata or {}).get("reward", 0.0)) for s in scores]
        return sum(rewards) / len(rewards) if rewards else 0.0

    return compute


def score_metadata(record: EpisodeRecord) -> dict[str, Any]:
    """What a score carries: the figures osint-eval reports, and the whole record to read back."""
    b = record.breakdown
    return {"reward": record.reward, "correct": record.correct, "answered": record.answered, "end": record.end,
            "evidence_f1": b.evidence_f1, **record.counts(), "breakdown": b.to_dict(), "episode": record.to_dict()}


@scorer(name=SCORER_NAME, metrics=[accuracy(), stderr(), mean_reward(),
                                   grouped(accuracy(), "difficulty", all=False, name_template="{group_name}"),
                                   grouped(accuracy(), "family", all=False, name_template="{group_name}")])
def osint_scorer() -> Scorer:
    """Success (1.0 or 0.0) from the env's episode record; the reward and the rest in the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        session = SESSIONS.pop(state.uuid, None)
        if session is None:
            return Score(value=0.0, explanation="no OSINT-v0 episode ran for this sample (its solver is not "
                                                "osint_gym's osint_agent)")
        record = session.record()
        return Score(value=1.0 if record.correct else 0.0, answer=None if record.answer is None else str(record.answer),
                     explanation=f"end={record.end} reward={record.reward:.3f} critical_steps={record.critical_steps}",
                     metadata=score_metadata(record))

    return score
