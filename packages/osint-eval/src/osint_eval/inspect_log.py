"""Inspect AI logs of ``osint_gym/osint_v0`` as osint-eval episodes: ``--candidate inspect:<log>``.

osint-gym's Inspect task (`osint_gym.integrations.inspect_task`) scores every sample from the env's episode record
and keeps the whole record in the score's metadata (``metadata["episode"]``). This module reads a log
with Inspect's own reader (``inspect_ai.log.read_eval_log``, imported on first use) and turns each
record into the `EpisodeResult` osint-eval's multi-turn runner makes of the same record
(`osint_eval.runner.episode_result`), so a model evaluated through Inspect gets the same summaries,
paired comparisons, intervals and leaderboard row as one osint-eval ran itself::

    osint-eval compare --mode multi_turn --tasks v0:test --limit 50 --base oracle \\
        --candidate inspect:logs/2026-01-01T00-00-00_osint-v0_abc.eval --out cmp

`InspectLogPolicy` is that ``inspect:<log>`` policy: it plays nothing, it hands back the recorded
episodes of exactly the evaluated tasks (a log missing one of them, or holding others, is an error).
A malformed log, a log of another task or an unfinished one gives one `EvalError` line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osint_eval.errors import EvalError
from osint_eval.interface import Policy, PolicyInput
from osint_eval.runner import EpisodeResult, episode_result
from osint_gym.episode import EpisodeRecord
from osint_gym.tasks import Task

TASK_NAMES = ("osint_gym/osint_v0", "osint_v0")  # the registry name, and the name of a task built in code
SCORER = "osint_scorer"
PREFIX = "inspect:"


@dataclass(frozen=True)
class InspectRun:
    """One Inspect evaluation of OSINT-v0: the model, the task's arguments and every episode."""

    path: str
    model: str
    task_args: dict[str, Any]
    episodes: list[EpisodeResult] = field(default_factory=list)


def _read(path: str) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise EvalError("reading Inspect logs needs inspect-ai: pip install 'osint-gym[inspect]'") from None
    if not Path(path).is_file():
        raise EvalError(f"no Inspect log at {path}")
    try:
        return read_eval_log(path)
    except Exception as exc:  # Inspect raises many types (zip, JSON, pydantic) for a damaged file
        detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise EvalError(f"{path}: not a readable Inspect eval log ({detail})") from None


def _episode(sample: Any, where: str) -> EpisodeResult:
    score = (sample.scores or {}).get(SCORER)
    if score is None:
        raise EvalError(f"{where}: sample {sample.id!r} has no {SCORER} score (was the eval cut before scoring?)")
    try:
        return episode_result(EpisodeRecord.from_dict((score.metadata or {})["episode"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EvalError(
            f"{where}: sample {sample.id!r}: its score holds no OSINT-v0 episode record ({exc!r:.120})"
        ) from None


def read_inspect_log(path: str | Path) -> InspectRun:
    """Every episode of an Inspect log of ``osint_gym/osint_v0``, in the log's sample order."""
    path = str(path)
    log = _read(path)
    task = getattr(getattr(log, "eval", None), "task", None)
    if task not in TASK_NAMES:
        raise EvalError(f"{path}: a log of Inspect task {task!r}, not osint_gym/osint_v0")
    if log.status != "success":
        raise EvalError(f"{path}: the Inspect eval did not finish (status {log.status!r}); rerun or retry it first")
    samples = log.samples or []
    if not samples:
        raise EvalError(f"{path}: the log holds no sample")
    epochs = {s.epoch for s in samples}
    if epochs != {1}:
        raise EvalError(f"{path}: the log holds {len(epochs)} epochs; osint-eval pairs one episode per task "
                        "(run Inspect with --epochs 1)")
    return InspectRun(path, str(log.eval.model), dict(log.eval.task_args or {}), [_episode(s, path) for s in samples])


class InspectLogPolicy(Policy):
    """``inspect:<log>``: the episodes an Inspect eval recorded, as a policy of osint-eval's runs."""

    def __init__(self, path: str) -> None:
        self.run = read_inspect_log(path)
        self.name = f"{PREFIX}{self.run.model}"

    def act(self, batch: list[PolicyInput]) -> list[str]:
        raise EvalError(f"{self.run.path}: an Inspect log replays recorded episodes; it cannot act")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": type(self).__name__, "log": self.run.path, "model": self.run.model,
                "task_args": self.run.task_args}

    def recorded(self, tasks: list[Task], mode: str) -> list[EpisodeResult] | None:
        """The log's episodes of ``tasks``, in their order; the log must hold exactly these tasks."""
        where = self.run.path
        if mode != "multi_turn":
            raise EvalError(f"{where}: Inspect episodes are multi-turn; pass --mode multi_turn")
        by_id = {e.task_id: e for e in self.run.episodes}
        missing = [t.task_id for t in tasks if t.task_id not in by_id]
        if missing or len(by_id) != len(tasks):
            hint = f", e.g. none for {missing[0]}" if missing else ""
            raise EvalError(f"{where}: the log holds {len(by_id)} episodes, the task set {len(tasks)} tasks{hint}; "
                            f"evaluate the tasks the Inspect run played (its task args: {self.run.task_args})")
        other = next((t for t in tasks if by_id[t.task_id].question != t.question), None)
        if other is not None:
            raise EvalError(f"{where}: task {other.task_id!r} of the log asks another question (another split?)")
        return [by_id[t.task_id] for t in tasks]
