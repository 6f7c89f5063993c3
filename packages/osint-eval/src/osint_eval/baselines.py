"""Shortcut baselines: scripted policies that answer without following the question's query.

Each one exploits a surface regularity a model could learn instead of reading the question; a task
format in which one of them beats the uniform type-correct guess (``random-guess``) carries a
shortcut. Single-turn (they read the context the model sees):

* ``most-frequent``: the candidate of the answer type that the context shows most often (ties: the
  first mentioned);
* ``first-mentioned`` / ``last-mentioned``: the first / last candidate of the answer type in the text;
* ``adjacent``: a candidate of the answer type on a line with an entity the question names (its
  name, handle or id occurs in the question); a seeded pick among several, a type-correct guess
  when there is none.

Multi-turn: ``naive-search`` searches the forum once (``search_threads``) for the question's first name,
handle or id, then answers the first id of the answer type in what came back.

None of them reads the task's structured query, gold answer or evidence: only the answer type (the
question says it) and what the agent sees.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter

from osint_eval.policies import _HANDLE, _ID, SHORTCUTS_BY_MODE, Policy, PolicyInput, _type_prefix
from osint_gym.single_turn import Context, random_guess
from osint_gym.single_turn import adjacency_is_the_question as adjacency_is_the_question  # re-exported

SINGLE_TURN_SHORTCUTS = SHORTCUTS_BY_MODE["single_turn"]
MULTI_TURN_SHORTCUTS = SHORTCUTS_BY_MODE["multi_turn"]
SHORTCUTS = SINGLE_TURN_SHORTCUTS + MULTI_TURN_SHORTCUTS

# a run of capitalised words (a person's, event's or organisation's name), the question's leading verb excluded
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z0-9][A-Za-z0-9]*)+")
_LEADING = {"Start", "Which", "Who", "What", "Find", "Take", "Then", "Identify", "Name", "Give"}


def _mentions(context: Context) -> list[str]:
    """Entity ids of the context in reading order, one entry per appearance (named entities excluded)."""
    shown = set(context.entities)
    return [n for e in context.edges for n in (e.head, e.tail) if n in shown]


def candidates(task_prefix: str | None, context: Context) -> list[str]:
    """Ids of the answer type in order of first appearance (every shown id when the type is unknown)."""
    pool = [e for e in context.entities if task_prefix and e.startswith(task_prefix)]
    return pool or list(context.entities)


class ShortcutPolicy(Policy):
    """One single-turn shortcut rule (see the module docstring); ``rule`` is its name."""

    def __init__(self, rule: str, seed: int = 0) -> None:
        if rule not in SINGLE_TURN_SHORTCUTS:
            raise ValueError(f"unknown single-turn shortcut {rule!r}; known: {', '.join(SINGLE_TURN_SHORTCUTS)}")
        self.name = self.rule = rule
        self.seed = seed

    def act(self, batch: list[PolicyInput]) -> list[str]:
        out = []
        for item in batch:
            if item.context is None:
                out.append(json.dumps({"answer": "none"}))  # a single-turn rule: in an episode it gives up at once
                continue
            out.append(self.pick(item, item.context) or "none")
        return out

    def pick(self, item: PolicyInput, context: Context) -> str:
        pool = candidates(_type_prefix(item.task), context)
        if not pool:
            return ""
        if self.rule == "first-mentioned":
            return pool[0]
        mentions = [m for m in _mentions(context) if m in set(pool)]
        if self.rule == "last-mentioned":
            return mentions[-1] if mentions else pool[-1]
        if self.rule == "most-frequent":
            counts = Counter(mentions)
            return max(pool, key=lambda c: counts[c])  # max keeps the first of equals: ties go to the first mentioned
        rng = random.Random(f"{self.seed}:{item.task.task_id}:{self.rule}")
        named = named_in_question(item, context)
        near = list(dict.fromkeys(n for e in context.edges if e.head in named or e.tail in named
                                  for n in (e.head, e.tail) if n in set(pool)))
        return rng.choice(near) if near else random_guess(item.task, context, rng)


def named_in_question(item: PolicyInput, context: Context) -> set[str]:
    """Context entities the question names: those whose name, handle or id (as the context writes
    them) occurs in the question as a whole word."""
    q = item.task.question
    nodes = dict.fromkeys(n for e in context.edges for n in (e.head, e.tail))
    return {n for n in nodes if any(re.search(rf"(?<![\w@]){re.escape(ref)}(?![\w])", q)
                                    for ref in {n, item.world.surface(n)} if n in item.world)}


def first_reference(question: str) -> str | None:
    """The question's first id, @handle or capitalised name, whichever comes first."""
    found = [(m.start(), m.group()) for rx in (_ID, _HANDLE) for m in rx.finditer(question)]
    for m in _NAME.finditer(question):
        words = m.group().split(" ")
        while words and words[0] in _LEADING:
            words = words[1:]
        if len(words) >= 2:
            found.append((m.start() + len(m.group()) - len(" ".join(words)), " ".join(words)))
    return min(found)[1] if found else None


class NaiveSearchPolicy(Policy):
    """Multi-turn: one full-text search (``search_threads``) for the question's first reference, then the
    first id of the answer type in the results (any id when none has that type). Of the one-call lookups it
    is the strongest on v0:test, ahead of get_profile and search_posts (benchmarks/RESULTS.md)."""

    def __init__(self) -> None:
        self.name = "naive-search"

    def act(self, batch: list[PolicyInput]) -> list[str]:
        out = []
        for item in batch:
            if item.context is not None:  # single-turn: the first-mentioned candidate is its analogue
                pool = candidates(_type_prefix(item.task), item.context)
                out.append(pool[0] if pool else "none")
                continue
            ref = first_reference(item.task.question)
            if item.turn == 0 and ref:
                out.append(json.dumps({"tool": "search_threads", "args": {"query": ref}}))
                continue
            prefix = _type_prefix(item.task)
            seen = [i for i in _ID.findall(item.seen[-1])] if item.turn else []
            typed = [i for i in seen if prefix and i.startswith(prefix)] or seen
            out.append(json.dumps({"answer": typed[0] if typed else "none"}))
        return out


def make_shortcut(spec: str, seed: int = 0) -> Policy:
    if spec == "naive-search":
        return NaiveSearchPolicy()
    return ShortcutPolicy(spec, seed)
