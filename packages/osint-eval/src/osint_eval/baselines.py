"""Shortcut baselines: scripted policies that answer without following the question's query.

Each one exploits a surface regularity a model could learn instead of reading the question; a task
format in which one of them beats the uniform type-correct guess (``random-guess``) carries a
shortcut. `SHORTCUTS` is their one registry (name -> mode, description, rule): `make_policy`, the
CLI's ``--baselines``, the shortcut audit's tests and ``benchmarks/bench_card.py`` (which measures the
benchmark card's figures, stored per name in `osint_gym.card`) all read it.

None of them reads the task's structured query, gold answer or evidence: only the answer type (the
question says it) and what the agent sees (`osint_eval.reading`).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from osint_eval.interface import Policy, PolicyInput
from osint_eval.reading import (
    ID,
    answer_prefix,
    candidates,
    first_reference,
    mentions,
    named_in_question,
    references,
)
from osint_gym.single_turn import Context, random_guess
from osint_gym.single_turn import adjacency_is_the_question as adjacency_is_the_question  # re-exported

# one single-turn rule: (turn, its context, the answer type's candidates (never empty), seed) -> an id
Rule = Callable[[PolicyInput, Context, list[str], int], str]


@dataclass(frozen=True)
class Shortcut:
    name: str  # the policy spec (``make_policy(name)``) and its name in reports
    mode: str  # "single_turn" or "multi_turn": the mode whose format it exploits
    description: str
    act: Callable[[PolicyInput, int], str]  # one completion for one turn, given the policy's seed


def _single_turn(rule: Rule) -> Callable[[PolicyInput, int], str]:
    """A single-turn rule as a turn: in a multi-turn episode it gives up at once."""

    def act(item: PolicyInput, seed: int) -> str:
        if item.context is None:
            return json.dumps({"answer": "none"})
        pool = candidates(answer_prefix(item.task), item.context)
        return (rule(item, item.context, pool, seed) if pool else "") or "none"

    return act


def _first_mentioned(item: PolicyInput, context: Context, pool: list[str], seed: int) -> str:
    return pool[0]


def _last_mentioned(item: PolicyInput, context: Context, pool: list[str], seed: int) -> str:
    typed = [m for m in mentions(context) if m in set(pool)]
    return typed[-1] if typed else pool[-1]


def _most_frequent(item: PolicyInput, context: Context, pool: list[str], seed: int) -> str:
    counts = Counter(m for m in mentions(context) if m in set(pool))
    return max(pool, key=lambda c: counts[c])  # max keeps the first of equals: ties go to the first mentioned


def _adjacent(item: PolicyInput, context: Context, pool: list[str], seed: int) -> str:
    rng = random.Random(f"{seed}:{item.task.task_id}:adjacent")
    named = named_in_question(item.task, item.world, context)
    near = list(dict.fromkeys(n for e in context.edges if e.head in named or e.tail in named
                              for n in (e.head, e.tail) if n in set(pool)))
    return rng.choice(near) if near else random_guess(item.task, context, rng)


def _most_named(item: PolicyInput, context: Context, pool: list[str], seed: int) -> str:
    named = named_in_question(item.task, item.world, context)
    touches = Counter(n for e in context.edges for a, n in ((e.head, e.tail), (e.tail, e.head)) if a in named)
    top = max(touches[c] for c in pool)
    return random.Random(f"{seed}:{item.task.task_id}:overlap").choice([c for c in pool if touches[c] == top])


def _naive_search(item: PolicyInput, seed: int) -> str:
    if item.context is not None:  # single-turn: the first-mentioned candidate is its analogue
        pool = candidates(answer_prefix(item.task), item.context)
        return pool[0] if pool else "none"
    ref = first_reference(item.task.question)
    if item.turn == 0 and ref:
        return json.dumps({"tool": "search_threads", "args": {"query": ref}})
    prefix = answer_prefix(item.task)
    seen = ID.findall(item.seen[-1]) if item.turn else []
    typed = [i for i in seen if prefix and i.startswith(prefix)] or seen
    return json.dumps({"answer": typed[0] if typed else "none"})


def _lookups(ref: str) -> list[dict[str, object]]:
    """The calls that show what touches one named entity, whatever it is (the ones that do not apply to it
    fail, and the episode goes on): its page (an event's attendees, a post's author), its connections (a
    person's acquaintances, an account's followers) and the directory's people at it (an employer, a city)."""
    return [{"tool": "get_profile", "args": {"handle_or_id": ref}},
            {"tool": "get_connections", "args": {"person_or_account": ref}},
            {"tool": "search_people", "args": {"organization": ref, "limit": 20}},
            {"tool": "search_people", "args": {"location": ref, "limit": 20}}]


def _overlap_search(item: PolicyInput, seed: int) -> str:
    """Look up every entity the question names, one step each, then answer the id of the answer type that the
    most of those lookups showed (ties: a seeded pick): the question-reading shortcut, played through the tools."""
    if item.context is not None:  # single-turn: the same reading of the context (the audit's next-to-named:max)
        return _single_turn(_most_named)(item, seed)
    refs = references(item.task.question)
    if item.turn < len(refs):
        calls = [{"name": c["tool"], "arguments": c["args"]} for c in _lookups(refs[item.turn])]
        return json.dumps({"tool_calls": calls})
    prefix = answer_prefix(item.task)
    shown = [set(ID.findall(obs)) for obs in item.seen[1:len(refs) + 1]]
    named = {i for ids, ref in zip(shown, refs) for i in ids if i == ref} | _profile_ids(item.seen[1:len(refs) + 1])
    votes = Counter(i for ids in shown for i in ids if i not in named and (not prefix or i.startswith(prefix)))
    if not votes:
        return json.dumps({"answer": "none"})
    top = max(votes.values())
    rng = random.Random(f"{seed}:{item.task.task_id}:overlap")
    return json.dumps({"answer": rng.choice(sorted(i for i, v in votes.items() if v == top))})


def _profile_ids(observations: list[str]) -> set[str]:
    """The ids of the named entities themselves: each lookup step's first record (its ``get_profile`` page)."""
    found = set()
    for obs in observations:
        first = ID.search(obs.split("get_profile", 1)[1]) if "get_profile" in obs else None
        if first is not None:
            found.add(first.group())
    return found


SHORTCUTS: dict[str, Shortcut] = {s.name: s for s in (
    Shortcut("most-frequent", "single_turn", "the candidate of the answer type that the context shows most often "
             "(ties: the first mentioned)", _single_turn(_most_frequent)),
    Shortcut("first-mentioned", "single_turn", "the first candidate of the answer type in the context",
             _single_turn(_first_mentioned)),
    Shortcut("last-mentioned", "single_turn", "the last candidate of the answer type in the context",
             _single_turn(_last_mentioned)),
    Shortcut("adjacent", "single_turn", "a candidate of the answer type on a line with an entity the question "
             "names (its name, handle or id occurs in the question); a seeded pick among several, a "
             "type-correct guess when there is none", _single_turn(_adjacent)),
    Shortcut("naive-search", "multi_turn", "one search_threads for the question's first name, handle or id, then "
             "the first id of the answer type in the results (any id when none has that type)", _naive_search),
    Shortcut("overlap-search", "multi_turn", "looks up every entity the question names (its page, connections and "
             "the directory's people at it, one step each), then answers the id of the answer type that the most "
             "of those lookups showed (ties: a seeded pick)", _overlap_search),
)}
SHORTCUTS_BY_MODE = {mode: tuple(n for n, s in SHORTCUTS.items() if s.mode == mode)
                     for mode in ("single_turn", "multi_turn")}
SINGLE_TURN_SHORTCUTS = SHORTCUTS_BY_MODE["single_turn"]
MULTI_TURN_SHORTCUTS = SHORTCUTS_BY_MODE["multi_turn"]


class ShortcutPolicy(Policy):
    """The shortcut baseline ``name`` of `SHORTCUTS`, as a policy."""

    def __init__(self, name: str, seed: int = 0) -> None:
        if name not in SHORTCUTS:
            raise ValueError(f"unknown shortcut {name!r}; known: {', '.join(SHORTCUTS)}")
        self.name = self.rule = name
        self.seed = seed

    def act(self, batch: list[PolicyInput]) -> list[str]:
        act = SHORTCUTS[self.name].act
        return [act(item, self.seed) for item in batch]
