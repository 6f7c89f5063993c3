"""`Task` (a question, its gold answer(s) and evidence) and `Verdict` (why a task is or is not valid)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from osint_gym.errors import ConfigError, TaskError
from osint_gym.files import atomic_write_jsonl
from osint_gym.schema import Edge
from osint_gym.tasks.query import Query

DIFFICULTIES = ("easy", "medium", "hard")
OBSERVATION_FORMATS = ("json", "compact")


@dataclass(frozen=True)
class Budgets:
    """The budgets a task is verified under and served with; the one home of their defaults.

    A task verified under budgets ``b`` stays solvable under any budgets that `cover` ``b``: more
    steps, more parallel calls and longer observations never take an oracle step away. The
    observation format decides how an observation is cut, so a stamp covers only its own format.
    """

    max_steps: int = 24
    max_parallel_calls: int = 4
    max_observation_chars: int = 16_384
    observation_format: str = "json"  # "json" or "compact" (`osint_gym.compact`)

    def __post_init__(self) -> None:
        for name, lo, hi in (
            ("max_steps", 1, 10_000),
            ("max_parallel_calls", 1, 64),
            ("max_observation_chars", 256, 10_000_000),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ConfigError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
        if self.observation_format not in OBSERVATION_FORMATS:
            raise ConfigError(
                f"observation_format must be one of {OBSERVATION_FORMATS}, got {self.observation_format!r}"
            )

    def covers(self, verified: Budgets) -> bool:
        """Whether a task verified under ``verified`` is still solvable under these budgets."""
        return (self.max_steps >= verified.max_steps and self.max_parallel_calls >= verified.max_parallel_calls
                and self.max_observation_chars >= verified.max_observation_chars
                and self.observation_format == verified.observation_format)

    def to_dict(self) -> dict[str, Any]:
        """The budgets as a row; the default format is left out, so JSON-format stamps and digests
        read exactly as before formats existed."""
        out: dict[str, Any] = {"max_steps": self.max_steps, "max_parallel_calls": self.max_parallel_calls,
                               "max_observation_chars": self.max_observation_chars}
        if self.observation_format != "json":
            out["observation_format"] = self.observation_format
        return out


DEFAULT_BUDGETS = Budgets()


@dataclass(frozen=True)
class Stamp:
    """Proof that a task passed `verify_task` in one world under some budgets.

    ``digest`` binds the stamp to the task's content, so a task edited after verification (or a
    file row whose fields were changed) carries no valid stamp and is verified again.
    """

    world: str  # World.fingerprint() of the world it was verified in
    budgets: Budgets
    digest: str

    def to_dict(self) -> dict[str, Any]:
        return {"world": self.world, "budgets": self.budgets.to_dict(), "digest": self.digest}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stamp:
        return cls(str(data["world"]), Budgets(**data["budgets"]), str(data["digest"]))


def difficulty_for_hops(n_hops: int) -> str:
    """easy = 1 hop, medium = 2 hops, hard = 3 or more."""
    return "easy" if n_hops <= 1 else "medium" if n_hops == 2 else "hard"


class FailureReason(str, Enum):
    OK = "ok"
    MALFORMED = "malformed"  # missing fields, wrong types, unparseable proposal
    UNKNOWN_ENTITY = "unknown_entity"  # the answer or an evidence entity is not in the world
    EDGE_NOT_IN_WORLD = "edge_not_in_world"  # evidence does not replay
    NOT_A_PATH = "not_a_path"  # evidence edges do not chain from the start entity to the answer
    START_NOT_NAMED = "start_not_named"  # the question does not name its start entity
    ANSWER_LEAKED = "answer_leaked"  # the question contains the answer
    AMBIGUOUS = "ambiguous"  # the question's query determines several entities
    ANSWER_MISMATCH = "answer_mismatch"  # the query determines a different entity
    TOO_LARGE = "too_large"  # too many hops or too long a question
    UNSOLVABLE = "unsolvable"  # the tool-only oracle cannot reach the answer within the step budget
    DUPLICATE = "duplicate"  # a near-copy of a task seen before (checked by callers that keep history)
    OUT_OF_RANGE = "out_of_range"  # a choose-mode proposal names a path number the offer did not show


@dataclass(frozen=True)
class Verdict:
    reason: FailureReason
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.reason is FailureReason.OK

    @classmethod
    def success(cls) -> Verdict:
        return cls(FailureReason.OK)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason.value, "detail": self.detail}


@dataclass(frozen=True, eq=True)
class Task:
    """One investigation task.

    ``answers`` holds every accepted entity id: generated tasks have exactly one; imported
    knowledge-graph questions may have several, any of which counts (Hits@1).
    ``query`` is the structured meaning of the question; it stays in metadata and is never shown
    to the agent.
    """

    task_id: str
    question: str
    answers: tuple[str, ...]
    evidence: tuple[Edge, ...]
    family: str
    difficulty: str
    query: Query | None = None
    answer_type: str = "entity"
    provenance: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    stamp: Stamp | None = field(default=None, hash=False, compare=False, repr=False)
    # a rung: the episode starts after the demonstrator's first ``start_depth`` steps, played by the env
    # (`OSINTEnv`'s start depth); 0, the whole episode, for every benchmark task
    start_depth: int = 0

    def __post_init__(self) -> None:
        if not self.answers or not all(isinstance(a, str) and a for a in self.answers):
            raise TaskError(f"task {self.task_id!r}: answers must be non-empty strings, got {self.answers!r}")
        if self.difficulty not in DIFFICULTIES:
            raise TaskError(f"task {self.task_id!r}: difficulty must be one of {DIFFICULTIES}, got {self.difficulty!r}")
        if not isinstance(self.question, str) or not self.question.strip():
            raise TaskError(f"task {self.task_id!r}: question must be a non-empty string")
        if isinstance(self.start_depth, bool) or not isinstance(self.start_depth, int) or self.start_depth < 0:
            raise TaskError(f"task {self.task_id!r}: start_depth must be an integer >= 0, got {self.start_depth!r}")

    @property
    def answer(self) -> str:
        return self.answers[0]

    def content_digest(self, world: str, budgets: Budgets) -> str:
        """sha256 over what verification judged (not the id or provenance) plus world and budgets."""
        content = [self.question, list(self.answers), [list(e) for e in self.evidence], self.family, self.difficulty,
                   self.query.to_dict() if self.query else None, self.answer_type, world, budgets.to_dict()]
        if self.start_depth:  # a rung's depth is stamped too; a whole episode's digest reads as it always did
            content.append({"start_depth": self.start_depth})
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()

    def stamped(self, world: str, budgets: Budgets) -> Task:
        """This task with a verification stamp (called by verification only)."""
        return replace(self, stamp=Stamp(world, budgets, self.content_digest(world, budgets)))

    def verified_for(self, world: str, budgets: Budgets) -> bool:
        """Whether this task carries a stamp that covers ``world`` and ``budgets`` (no re-verification)."""
        s = self.stamp
        return s is not None and s.world == world and budgets.covers(s.budgets)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready row (also a valid Hugging Face ``datasets`` row)."""
        return {
            "task_id": self.task_id,
            "question": self.question,
            "answers": list(self.answers),
            "evidence": [list(e) for e in self.evidence],
            "family": self.family,
            "difficulty": self.difficulty,
            "answer_type": self.answer_type,
            "query": json.dumps(self.query.to_dict()) if self.query else "",
            "provenance": json.dumps(self.provenance, sort_keys=True),
            "stamp": json.dumps(self.stamp.to_dict(), sort_keys=True) if self.stamp else "",
            **({"start_depth": self.start_depth} if self.start_depth else {}),  # whole episodes' rows unchanged
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Task:
        if not isinstance(row, dict):
            raise TaskError(f"a task row must be a JSON object, got {type(row).__name__}")
        try:
            query = row.get("query") or None
            if isinstance(query, str):
                query = json.loads(query)
            provenance = row.get("provenance") or {}
            if isinstance(provenance, str):
                provenance = json.loads(provenance)
            evidence = tuple(Edge(*map(str, e)) for e in row.get("evidence", []))
            answers = row["answers"] if "answers" in row else [row["answer"]]
            if isinstance(answers, str) or not isinstance(answers, list):
                answers = [answers]
            task = cls(
                task_id=str(row.get("task_id", "")),
                question=row["question"],
                answers=tuple(answers),
                evidence=evidence,
                family=str(row.get("family", "custom")),
                difficulty=str(row.get("difficulty", "medium")),
                query=Query.from_dict(query) if query else None,
                answer_type=str(row.get("answer_type", "entity")),
                provenance=dict(provenance),
                start_depth=row.get("start_depth", 0),
            )
            stamp = row.get("stamp") or None
            if isinstance(stamp, str):
                stamp = json.loads(stamp)
        except TaskError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise TaskError(f"malformed task row ({type(exc).__name__}: {exc})") from None
        return task._with_row_stamp(stamp)

    def _with_row_stamp(self, data: Any) -> Task:
        """Keep a stamp read from a file only if it still matches this task's content."""
        if not isinstance(data, dict):
            return self
        try:
            stamp = Stamp.from_dict(data)
        except (KeyError, TypeError, ValueError):
            raise TaskError(f"task {self.task_id!r}: malformed stamp {str(data)[:80]!r}") from None
        if stamp.digest != self.content_digest(stamp.world, stamp.budgets):
            return self  # edited since it was verified: it will be verified again
        return replace(self, stamp=stamp)


def save_jsonl(tasks: list[Task], path: str | Path) -> None:
    """One task per line, written atomically (an interrupted save leaves no partial file)."""
    atomic_write_jsonl(path, [t.to_dict() for t in tasks], sort_keys=False)


def load_jsonl(path: str) -> list[Task]:
    tasks = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                tasks.append(Task.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TaskError) as exc:
                raise TaskError(f"{path}:{lineno}: {exc}") from None
    return tasks
