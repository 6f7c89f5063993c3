"""Shortcut audit of single-turn contexts: every rule that reads only counts, positions or adjacency of ids.

The single-turn shortcut baselines (`osint_eval.baselines.SHORTCUTS`) are four such rules. The audit measures the whole
family they come from: for each feature of a candidate (an id of the answer type the context shows) that
counting, position or adjacency gives, the rule that answers the candidate with the highest value and the
rule that answers the lowest, ties broken uniformly. Each rate is exact (the expected success of the
rule, not one seeded draw), next to the exact rate of the uniform type-correct guess; a context format
in which any rule is more than a few points from that guess carries a shortcut.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from osint_eval.reading import ID, answer_prefix, candidates, mentions, named_in_question
from osint_gym.single_turn import Context
from osint_gym.tasks import Task
from osint_gym.world import World

Features = dict[str, Callable[[str], float]]

# a feature's name -> what it reads, for the benchmark card's table
FEATURES = {
    "mentions": "times the id is an end of a shown edge",
    "as-head": "shown edges the id is the head of",
    "as-tail": "shown edges the id is the tail of",
    "text-count": "times the id occurs in the text",
    "first-position": "position of its first mention among the candidates",
    "first-offset": "character offset of its first occurrence in the text",
    "last-offset": "character offset of its last occurrence in the text",
    "neighbours": "distinct entities it shares a shown edge with",
    "relations": "distinct relations of its shown edges",
    "next-to-named": "shown edges to an entity the question names",
    "next-to-name": "shown edges to an entity written by name (the named start or a decoy's start)",
}


@dataclass(frozen=True)
class AuditRow:
    rule: str  # "uniform", or "<feature>:max" / "<feature>:min"
    rate: float  # exact expected success over the tasks
    n: int

    def gap(self, uniform: float) -> float:
        return self.rate - uniform


def _features(task: Task, world: World, context: Context) -> Features:
    """Each feature of `FEATURES` as a function of a candidate id."""
    mentioned = Counter(mentions(context))
    heads = Counter(e.head for e in context.edges)
    tails = Counter(e.tail for e in context.edges)
    found = [(m.group(), m.start()) for m in ID.finditer(context.text)]
    text = Counter(i for i, _ in found)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, offset in found:
        first.setdefault(i, offset)
        last[i] = offset
    order = {n: k for k, n in enumerate(context.entities)}
    named = named_in_question(task, world, context)
    by_name = {n for e in context.edges for n in (e.head, e.tail)} - set(context.entities)
    near: dict[str, list[tuple[str, str]]] = {}
    for e in context.edges:
        near.setdefault(e.head, []).append((e.tail, e.relation))
        near.setdefault(e.tail, []).append((e.head, e.relation))
    return {
        "mentions": lambda c: mentioned[c], "as-head": lambda c: heads[c], "as-tail": lambda c: tails[c],
        "text-count": lambda c: text[c], "first-position": lambda c: order.get(c, len(order)),
        "first-offset": lambda c: first.get(c, -1), "last-offset": lambda c: last.get(c, -1),
        "neighbours": lambda c: len({n for n, _ in near.get(c, ())}),
        "relations": lambda c: len({r for _, r in near.get(c, ())}),
        "next-to-named": lambda c: sum(n in named for n, _ in near.get(c, ())),
        "next-to-name": lambda c: sum(n in by_name for n, _ in near.get(c, ())),
    }


def _share(gold: str, chosen: Sequence[str]) -> float:
    """Expected success of a uniform pick among ``chosen``."""
    return chosen.count(gold) / len(chosen) if chosen else 0.0


def audit(world: World, tasks: Sequence[Task], contexts: Sequence[Context]) -> list[AuditRow]:
    """The uniform type-correct guess first, then the max and min rule of every feature."""
    totals: dict[str, float] = {}
    for task, context in zip(tasks, contexts):
        pool = candidates(answer_prefix(task), context)
        totals["uniform"] = totals.get("uniform", 0.0) + _share(task.answer, pool)
        for name, value in _features(task, world, context).items():
            values = {c: value(c) for c in pool}
            for side, pick in (("max", max), ("min", min)):
                best = pick(values.values()) if values else 0
                rule = f"{name}:{side}"
                totals[rule] = totals.get(rule, 0.0) + _share(task.answer, [c for c in pool if values[c] == best])
    n = len(tasks)
    return [AuditRow(rule, totals.get(rule, 0.0) / n if n else 0.0, n) for rule in
            ["uniform"] + [f"{f}:{s}" for f in FEATURES for s in ("max", "min")]]


def largest_gap(rows: Sequence[AuditRow]) -> AuditRow:
    """The rule farthest from the uniform guess (either way)."""
    uniform = next(r.rate for r in rows if r.rule == "uniform")
    return max((r for r in rows if r.rule != "uniform"), key=lambda r: abs(r.gap(uniform)))

