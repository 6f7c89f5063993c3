"""Duplicate tasks: one rule for the sampler, proposal batches and the generator's diversity term.

Two tasks are duplicates when they ask the same thing:

* the same question text, or
* the same `task_signature` (same world, same gold answers, same evidence up to symmetry): a
  rewording of a task is still that task, or
* optionally, question-token Jaccard similarity at or above ``jaccard`` (near-copies whose
  wording barely differs, even about other entities).

A rung of a task (`Task.start_depth`: the episode starts after the demonstrator's first steps) is a task of its
own: the same question at another start depth is no duplicate.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from osint_gym.errors import ConfigError
from osint_gym.schema import Edge, canonical_edge
from osint_gym.tasks.task import Task

_WORD = re.compile(r"[a-z0-9_@.]+")

Signature = tuple[Any, Any, frozenset[str], frozenset[Edge], int]


def task_signature(task: Task) -> Signature:
    """What a task asks, independent of its wording: its world (name and seed from the provenance),
    its gold answers, its evidence edges in canonical form, and where its episode starts (its rung)."""
    prov = task.provenance
    return (prov.get("world"), prov.get("world_seed"), frozenset(task.answers),
            frozenset(canonical_edge(e) for e in task.evidence), task.start_depth)


def question_tokens(question: str) -> frozenset[str]:
    return frozenset(_WORD.findall(question.lower()))


class DuplicateFilter:
    """Remembers tasks and says whether a new one repeats a remembered one.

    ``by_signature=False`` compares question texts only (the rule the v0 benchmark splits were
    drawn with; see `TaskSampler.generate`). ``jaccard`` adds the near-copy rule. ``max_history``
    forgets the oldest tasks beyond that many (the generator's recent-history window).
    """

    def __init__(
        self, *, by_signature: bool = True, jaccard: float | None = None, max_history: int | None = None
    ) -> None:
        if jaccard is not None and not 0.0 < jaccard <= 1.0:
            raise ConfigError(f"duplicate filter: jaccard must be in (0, 1], got {jaccard!r}")
        if max_history is not None and max_history < 1:
            raise ConfigError(f"duplicate filter: max_history must be >= 1 or None, got {max_history!r}")
        self.by_signature = by_signature
        self.jaccard = jaccard
        self._seen: deque[tuple[str, Signature | None, frozenset[str]]] = deque(maxlen=max_history)
        self._depths: deque[int] = deque(maxlen=max_history)  # each remembered task's start depth
        self._questions: dict[str, int] = {}  # question -> how many remembered entries hold it
        self._signatures: dict[Signature, int] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def _entry(self, task: Task) -> tuple[str, Signature | None, frozenset[str]]:
        signature = task_signature(task) if self.by_signature else None
        tokens = question_tokens(task.question) if self.jaccard is not None else frozenset()
        # another rung of a question is no copy: its depth is part of its text's key (and of its signature)
        return task.question + (f"\n@depth {task.start_depth}" if task.start_depth else ""), signature, tokens

    def is_duplicate(self, task: Task) -> bool:
        """Whether ``task`` repeats a remembered task (it is not remembered by this call)."""
        question, signature, tokens = self._entry(task)
        if question in self._questions or (signature is not None and signature in self._signatures):
            return True
        if self.jaccard is None:
            return False
        for (_, _, other), depth in zip(self._seen, self._depths):
            union = len(tokens | other)
            if depth == task.start_depth and union and len(tokens & other) / union >= self.jaccard:  # of one rung
                return True
        return False

    def add(self, task: Task) -> None:
        if self._seen.maxlen is not None and len(self._seen) == self._seen.maxlen:
            old_question, old_signature, _ = self._seen[0]
            _decrement(self._questions, old_question)
            if old_signature is not None:
                _decrement(self._signatures, old_signature)
        entry = self._entry(task)
        self._seen.append(entry)
        self._depths.append(task.start_depth)
        self._questions[entry[0]] = self._questions.get(entry[0], 0) + 1
        if entry[1] is not None:
            self._signatures[entry[1]] = self._signatures.get(entry[1], 0) + 1

    def admit(self, task: Task) -> bool:
        """Remember ``task`` and return True, unless it is a duplicate (then False, not remembered)."""
        if self.is_duplicate(task):
            return False
        self.add(task)
        return True


def _decrement(counts: dict[Any, int], key: Any) -> None:
    counts[key] -= 1
    if not counts[key]:
        del counts[key]
