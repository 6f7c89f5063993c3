"""What a scripted policy reads off what the agent sees: ids, handles, names, the answer type's candidates.

Shared by the scripted baselines (`osint_eval.policies`), the shortcut baselines (`osint_eval.baselines`)
and the shortcut audit (`osint_eval.audit`). None of it reads a task's structured query, gold answer or
evidence: only the answer type (the question says it), the question's text and the context or observations.
"""

from __future__ import annotations

import re

from osint_gym.schema import ID_PATTERN, ID_PREFIX, EntityType
from osint_gym.single_turn import Context
from osint_gym.tasks import Task
from osint_gym.world import World

ID = re.compile(ID_PATTERN)
HANDLE = re.compile(r"@[A-Za-z0-9_.]+[A-Za-z0-9_]")
# a run of capitalised words (a person's, event's or organisation's name), the question's leading verb excluded
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z0-9][A-Za-z0-9]*)+")
_LEADING = {"Start", "Which", "Who", "What", "Find", "Take", "Then", "Identify", "Name", "Give"}


def answer_prefix(task: Task) -> str | None:
    """The id prefix of the task's answer type (``person_``), or None for a type without one."""
    types = {t.value for t in ID_PREFIX}
    return ID_PREFIX[EntityType(task.answer_type)] if task.answer_type in types else None


def mentions(context: Context) -> list[str]:
    """Entity ids of the context in reading order, one entry per appearance (named entities excluded)."""
    shown = set(context.entities)
    return [n for e in context.edges for n in (e.head, e.tail) if n in shown]


def candidates(prefix: str | None, context: Context) -> list[str]:
    """Ids with ``prefix`` (the answer type's) in order of first appearance (every shown id when there is none)."""
    pool = [e for e in context.entities if prefix and e.startswith(prefix)]
    return pool or list(context.entities)


def named_in_question(task: Task, world: World, context: Context) -> set[str]:
    """Context entities the question names: those whose name, handle or id (as the context writes
    them) occurs in the question as a whole word."""
    q = task.question
    nodes = dict.fromkeys(n for e in context.edges for n in (e.head, e.tail))
    return {n for n in nodes if any(re.search(rf"(?<![\w@]){re.escape(ref)}(?![\w])", q)
                                    for ref in {n, world.surface(n)} if n in world)}


_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[ -][A-Z0-9][A-Za-z0-9]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.?!:]\s+)\Z")


def references(question: str) -> list[str]:
    """Every entity the question names, as it names them, in order and once each: ids, @handles and runs of
    capitalised words (a name, or a one-word city) other than a sentence's leading verb. A name followed by its
    id (``Noah Lopez (person_39)``, a name two people share) is given by the id."""
    found = [(m.start(), m.group()) for rx in (ID, HANDLE) for m in rx.finditer(question)]
    for m in _CAPITALISED.finditer(question):
        words, start = m.group().split(" "), m.start()
        while words and words[0] in _LEADING:
            start += len(words.pop(0)) + 1
        if not words or (len(words) == 1 and _SENTENCE_START.search(question[:start])):
            continue  # a sentence's first word alone ("Deanonymize @x") is no name
        name = " ".join(words)
        if not re.match(r"\s*\(" + ID.pattern, question[start + len(name):]):
            found.append((start, name))
    return list(dict.fromkeys(ref for _, ref in sorted(found)))


def first_reference(question: str) -> str | None:
    """The question's first id, @handle or capitalised name, whichever comes first."""
    found = [(m.start(), m.group()) for rx in (ID, HANDLE) for m in rx.finditer(question)]
    for m in _NAME.finditer(question):
        words = m.group().split(" ")
        while words and words[0] in _LEADING:
            words = words[1:]
        if len(words) >= 2:
            found.append((m.start() + len(m.group()) - len(" ".join(words)), " ".join(words)))
    return min(found)[1] if found else None
