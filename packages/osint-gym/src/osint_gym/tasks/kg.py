"""Tasks from knowledge-graph question files (MetaQA: ``question with [topic]<TAB>ans1|ans2``).

A question carries its topic entity in brackets (``who directed [Kismet]``) and one or more answers;
any of them counts as correct (Hits@1). The file does not say which relations a question walks, so
the loader searches the relation paths of the given hop count from the topic and keeps the one that

* never revisits an entity (the topic included: a topic is never its own answer, as in MetaQA),
* determines exactly the answer set, and
* names the most of its relations in the question, then the most of its hops ("the films
  *written* by [X] were *released* in which years" -> ``written_by`` then ``release_year``, not
  ``directed_by``; `RELATION_WORDS` lists the words for MetaQA's relations, and any word of a
  relation's own name counts too).

A tie between the best paths is rejected rather than guessed. Every rejected question is counted by
a typed reason (`QARejection`, or the `FailureReason` of verification) in the `QAReport`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from osint_gym.errors import LoaderError
from osint_gym.schema import Direction, Edge
from osint_gym.tasks.query import Hop, Query
from osint_gym.tasks.task import Budgets, Task, difficulty_for_hops
from osint_gym.tasks.verify import DEFAULT_MAX_PARALLEL_CALLS, DEFAULT_MAX_STEPS, verify_task, world_fingerprint
from osint_gym.world.graph import World, tokenize
from osint_gym.world.loaders import read_lines

_TOPIC = re.compile(r"\[([^\[\]]+)\]")
MAX_PATHS = 4096  # relation paths tried per question (bounds the search on hub entities)
MAX_HOPS = 5

Move = tuple[str, Direction]
RelationPath = tuple[Move, ...]

# Words by which questions name MetaQA's relations, on top of the words of the relation name itself.
RELATION_WORDS: dict[str, tuple[str, ...]] = {
    "directed_by": ("direct", "directed", "director", "directors", "directing"),
    "written_by": ("write", "wrote", "written", "writer", "writers", "writing", "screenwriter", "penned"),
    "starred_actors": ("act", "acted", "actor", "actors", "actress", "star", "starred", "starring",
                       "appear", "appeared", "appears", "cast"),
    "release_year": ("released", "release", "year", "years", "when"),
    "has_genre": ("genre", "genres", "type", "types", "kind", "sort"),
    "in_language": ("language", "languages", "spoken", "speak"),
    "has_tags": ("tag", "tags", "tagged", "describe", "described", "topics", "about"),
    "has_imdb_votes": ("votes", "popular", "popularity", "famous"),
    "has_imdb_rating": ("rating", "ratings", "rated", "rate"),
}
_NAME_STOPWORDS = frozenset({"has", "in", "by", "of", "the", "is", "to", "a", "at"})


class QARejection(str, Enum):
    """Why a question of a QA file did not become a task (besides verification's `FailureReason`)."""

    TOPIC_NOT_IN_GRAPH = "topic_not_in_graph"
    ANSWER_NOT_IN_GRAPH = "answer_not_in_graph"
    TOPIC_IS_OWN_ANSWER = "topic_is_own_answer"  # MetaQA never answers a question with its topic
    NO_RELATION_PATH = "no_relation_path_gives_answers"  # no non-revisiting path of that length fits
    TIED_RELATION_PATHS = "tied_relation_paths"  # several paths fit and the question prefers none


@dataclass
class QAReport:
    """What happened to each question of a QA file: nobody's tasks disappear silently."""

    loaded: int = 0
    rejected: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        return {"loaded": self.loaded, "rejected": {str(getattr(k, "value", k)): v for k, v in self.rejected.items()}}


def _words_match(word: str, cue: str) -> bool:
    """Same word, up to a plural ``s`` or a shared 5-letter stem (directed / director)."""
    if word == cue or word.rstrip("s") == cue.rstrip("s"):
        return True
    return len(word) >= 5 and len(cue) >= 5 and word[:5] == cue[:5]


def relation_named(question: str, relation: str) -> bool:
    """Whether the question names the relation (MetaQA's words for it, or a word of its name)."""
    cues = set(RELATION_WORDS.get(relation, ())) | {w for w in tokenize(relation.replace("_", " "))
                                                   if w not in _NAME_STOPWORDS}
    return any(_words_match(word, cue) for word in tokenize(question) for cue in cues)


def relation_paths(world: World, topic: str, hops: int) -> Iterator[tuple[RelationPath, frozenset[str]]]:
    """(path, answers) for the relation paths of length ``hops`` from ``topic`` that never revisit
    an entity: the topic is dropped from every hop (as `Query` with ``exclude_start`` does) and a hop
    that reaches an entity of an earlier hop disqualifies the path."""
    stack: list[tuple[RelationPath, frozenset[str], frozenset[str]]] = [((), frozenset([topic]), frozenset([topic]))]
    produced = 0
    while stack:
        path, frontier, seen = stack.pop()
        if len(path) == hops:
            produced += 1
            if produced > MAX_PATHS:
                return
            yield path, frontier
            continue
        moves: dict[Move, set[str]] = {}
        for node in frontier:
            for rel, direction, other in world.relations_of(node):
                moves.setdefault((rel, Direction(direction)), set()).add(other)
        for move, reached in sorted(moves.items(), key=lambda kv: (kv[0][0], kv[0][1].value), reverse=True):
            reached.discard(topic)
            if reached and not reached & seen:
                stack.append((path + (move,), frozenset(reached), seen | reached))


def choose_path(world: World, question: str, topic: str, answers: set[str], hops: int) -> RelationPath | QARejection:
    """The path that determines ``answers`` and names the most of its relations, or why there is none."""
    fitting = [path for path, reached in relation_paths(world, topic, hops) if reached == answers]
    if not fitting:
        return QARejection.NO_RELATION_PATH
    # first the distinct relations the question names, then the hops they cover: "who starred in the
    # films directed by [X]" prefers directed_by+starred_actors to starred_actors twice, and "which
    # films share the director of [X]" prefers directed_by twice to directed_by+starred_actors
    score = {}
    for path in fitting:
        named = [rel for rel, _ in path if relation_named(question, rel)]
        score[path] = (len(set(named)), len(named))
    best = max(score.values())
    top = [path for path in fitting if score[path] == best]
    return top[0] if len(top) == 1 else QARejection.TIED_RELATION_PATHS


def _parse_line(path: str | Path, lineno: int, line: str) -> tuple[str, str, tuple[str, ...]]:
    question, sep, answer_field = line.partition("\t")
    topic_match = _TOPIC.search(question)
    if not sep or topic_match is None:
        raise LoaderError(f"{path}:{lineno}: expected 'question with [topic]<TAB>answer1|answer2', got {line[:80]!r}")
    answers = tuple(dict.fromkeys(a.strip() for a in answer_field.split("|") if a.strip()))
    if not answers:
        raise LoaderError(f"{path}:{lineno}: no answer after the tab")
    return question, topic_match.group(1).strip(), answers


def _screen(world: World, question: str, topic: str, answers: tuple[str, ...], hops: int) -> Query | QARejection:
    if topic not in world:
        return QARejection.TOPIC_NOT_IN_GRAPH
    if any(a not in world for a in answers):
        return QARejection.ANSWER_NOT_IN_GRAPH
    if topic in answers:
        return QARejection.TOPIC_IS_OWN_ANSWER
    chosen = choose_path(world, question, topic, set(answers), hops)
    if isinstance(chosen, QARejection):
        return chosen
    return Query(topic, tuple(Hop(rel, d) for rel, d in chosen), exclude_start=True)


def load_metaqa_qa(world: World, path: str | Path, hops: int, *, max_steps: int = DEFAULT_MAX_STEPS,
                   max_parallel_calls: int = DEFAULT_MAX_PARALLEL_CALLS,
                   limit: int | None = None) -> tuple[list[Task], QAReport]:
    """Verified tasks from a MetaQA QA file (``question [topic]<TAB>ans1|ans2``) of a known hop count.

    Returns (tasks, report); the report counts every rejected question by reason.
    """
    if not isinstance(hops, int) or isinstance(hops, bool) or not 1 <= hops <= MAX_HOPS:
        raise LoaderError(f"hops must be an integer in 1..{MAX_HOPS}, got {hops!r}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise LoaderError(f"limit must be an integer >= 0 or None, got {limit!r}")
    report = QAReport()
    tasks: list[Task] = []
    for lineno, line in enumerate(read_lines(path), 1):
        if limit is not None and len(tasks) >= limit:
            break
        if not line.strip():
            continue
        question, topic, answers = _parse_line(path, lineno, line)
        query = _screen(world, question, topic, answers, hops)
        if isinstance(query, QARejection):
            report.rejected[query.value] += 1
            continue
        task = Task(
            task_id=f"metaqa-{hops}hop-{lineno}",
            question=_TOPIC.sub(lambda m: m.group(1), question).strip(),
            answers=answers,
            evidence=tuple(kg_evidence(world, query, set(answers))),
            family=f"kgqa_{hops}hop",
            difficulty=difficulty_for_hops(hops),
            query=query,
            provenance={"source": str(path), "line": lineno},
        )
        verdict = verify_task(world, task, max_steps=max_steps, max_parallel_calls=max_parallel_calls)
        if not verdict.ok:
            report.rejected[verdict.reason.value] += 1
            continue
        tasks.append(task.stamped(world_fingerprint(world), Budgets(max_steps, max_parallel_calls)))
        report.loaded += 1
    return tasks, report


def kg_evidence(world: World, query: Query, answers: set[str]) -> list[Edge]:
    """Edges on every path from the topic to an answer along the query's relations (the topic is
    never passed through, as in `Query.evaluate`)."""
    if query.start is None:
        raise LoaderError("a knowledge-graph query starts at its topic entity")
    layers: list[dict[str, list[tuple[str, Edge]]]] = []  # node -> [(parent, edge)]
    frontier = {query.start}
    for hop in query.hops:
        layer: dict[str, list[tuple[str, Edge]]] = {}
        for node in sorted(frontier):
            for nxt in hop.step(world, node):
                if nxt != query.start:
                    layer.setdefault(nxt, []).append((node, hop.edge(node, nxt)))
        layers.append(layer)
        frontier = set(layer)
    keep = set(answers)
    edges: list[Edge] = []
    for layer in reversed(layers):
        parents = set()
        for node in sorted(keep):
            for parent, edge in layer.get(node, []):
                edges.append(edge)
                parents.add(parent)
        keep = parents
    return list(dict.fromkeys(reversed(edges)))
