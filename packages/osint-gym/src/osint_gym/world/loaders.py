"""Bring your own graph: MetaQA (``head|relation|tail`` + QA files) and TSV triples.

Imported graphs become a `World` of kind ``"kg"`` whose entity ids are the names in the files.
QA questions carry their topic entity in brackets (``who directed [Kismet]``) and one or more
answers (``ans1|ans2``); any of them counts as correct (Hits@1). A question enters the task list
only if some relation path of its hop count from the topic entity determines exactly its answer
set (the loader searches for that path), and the tool-only oracle can follow it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from osint_gym.errors import LoaderError
from osint_gym.schema import Direction, Edge
from osint_gym.world.graph import World

_TOPIC = re.compile(r"\[([^\[\]]+)\]")
MAX_FIELD_CHARS = 500
MAX_PATHS = 4096  # relation paths tried per question (bounds the search on hub entities)


def _build(triples: Iterable[tuple[str, str, str]], name: str) -> World:
    graph = nx.MultiDiGraph()
    for head, rel, tail in triples:
        for node in (head, tail):
            if node not in graph:
                graph.add_node(node, type="entity", name=node)
        graph.add_edge(head, tail, key=rel)
    if graph.number_of_nodes() == 0:
        raise LoaderError(f"{name}: no triples found")
    return World(graph, kind="kg", name=name)


def _read_lines(path: str | Path) -> list[str]:
    p = Path(path)
    if not p.is_file():
        raise LoaderError(f"{p}: no such file")
    try:
        return p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise LoaderError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _parse_triples(path: str | Path, sep: str) -> list[tuple[str, str, str]]:
    triples = []
    for lineno, line in enumerate(_read_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(sep)]
        if len(parts) != 3 or not all(parts):
            raise LoaderError(f"{path}:{lineno}: expected head{sep}relation{sep}tail, got {line[:80]!r}")
        if any(len(p) > MAX_FIELD_CHARS for p in parts):
            raise LoaderError(f"{path}:{lineno}: a field is longer than {MAX_FIELD_CHARS} characters")
        triples.append((parts[0], parts[1], parts[2]))
    return triples


def load_tsv(path: str | Path, name: str | None = None) -> World:
    """A world from tab-separated ``head<TAB>relation<TAB>tail`` lines (``#`` starts a comment)."""
    return _build(_parse_triples(path, "\t"), name or Path(path).stem)


def load_metaqa_kb(path: str | Path, name: str | None = None) -> World:
    """A world from MetaQA's ``kb.txt`` (``head|relation|tail``)."""
    return _build(_parse_triples(path, "|"), name or "metaqa")


@dataclass
class QAReport:
    """What happened to each question of a QA file: nobody's tasks disappear silently."""

    loaded: int = 0
    rejected: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        return {"loaded": self.loaded, "rejected": dict(self.rejected)}


def _paths(world: World, topic: str, hops: int) -> Iterable[tuple[tuple[str, Direction], ...]]:
    """Relation paths of length ``hops`` that exist from ``topic`` (MetaQA never walks back along
    the edge it just took, so neither do we)."""
    stack: list[tuple[tuple[tuple[str, Direction], ...], frozenset[str]]] = [((), frozenset([topic]))]
    produced = 0
    while stack:
        path, frontier = stack.pop()
        if len(path) == hops:
            produced += 1
            if produced > MAX_PATHS:
                return
            yield path
            continue
        moves: dict[tuple[str, Direction], set[str]] = {}
        for node in frontier:
            for rel, direction, other in world.relations_of(node):
                moves.setdefault((rel, Direction(direction)), set()).add(other)
        for move, nxt in sorted(moves.items(), key=lambda kv: (kv[0][0], kv[0][1].value), reverse=True):
            if path and move[0] == path[-1][0] and move[1] is not path[-1][1]:
                continue
            stack.append((path + (move,), frozenset(nxt)))


def load_metaqa_qa(world: World, path: str | Path, hops: int, *, max_steps: int = 24, max_parallel_calls: int = 4,
                   limit: int | None = None) -> tuple[list, QAReport]:
    """Tasks from a MetaQA QA file (``question [topic]<TAB>ans1|ans2``) with a known hop count.

    Returns (tasks, report); the report counts every rejected question by reason.
    """
    from osint_gym.tasks.query import Hop, Query
    from osint_gym.tasks.task import Task, difficulty_for_hops
    from osint_gym.tasks.verify import verify_task

    if not isinstance(hops, int) or not 1 <= hops <= 5:
        raise LoaderError(f"hops must be an integer in 1..5, got {hops!r}")
    report = QAReport()
    tasks: list[Task] = []
    for lineno, line in enumerate(_read_lines(path), 1):
        if limit is not None and len(tasks) >= limit:
            break
        if not line.strip():
            continue
        question, sep, answer_field = line.partition("\t")
        topic_match = _TOPIC.search(question)
        if not sep or topic_match is None:
            raise LoaderError(f"{path}:{lineno}: expected 'question with [topic]<TAB>answer1|answer2', got {line[:80]!r}")
        topic = topic_match.group(1).strip()
        answers = tuple(dict.fromkeys(a.strip() for a in answer_field.split("|") if a.strip()))
        if not answers:
            raise LoaderError(f"{path}:{lineno}: no answer after the tab")
        if topic not in world:
            report.rejected["topic_not_in_graph"] += 1
            continue
        if any(a not in world for a in answers):
            report.rejected["answer_not_in_graph"] += 1
            continue
        found = None
        for path_rels in _paths(world, topic, hops):
            query = Query(topic, tuple(Hop(rel, d) for rel, d in path_rels), exclude_start=True)
            if set(query.evaluate(world)) == set(answers):
                found = query
                break
        if found is None:
            report.rejected["no_relation_path_gives_answers"] += 1
            continue
        evidence = _evidence(world, found, set(answers))
        task = Task(
            task_id=f"metaqa-{hops}hop-{lineno}",
            question=_TOPIC.sub(lambda m: m.group(1), question).strip(),
            answers=answers,
            evidence=tuple(evidence),
            family=f"kgqa_{hops}hop",
            difficulty=difficulty_for_hops(hops),
            query=found,
            provenance={"source": str(path), "line": lineno},
        )
        verdict = verify_task(world, task, max_steps=max_steps, max_parallel_calls=max_parallel_calls)
        if not verdict.ok:
            report.rejected[verdict.reason.value] += 1
            continue
        tasks.append(task)
        report.loaded += 1
    return tasks, report


def _evidence(world: World, query: object, answers: set[str]) -> list[Edge]:
    """Edges on every path from the topic to an answer along the query's relations."""
    from osint_gym.tasks.query import Query

    assert isinstance(query, Query) and query.start is not None
    layers: list[dict[str, list[tuple[str, Edge]]]] = []  # node -> [(parent, edge)]
    frontier = {query.start}
    for hop in query.hops:
        layer: dict[str, list[tuple[str, Edge]]] = {}
        for node in frontier:
            for nxt in hop.step(world, node):
                layer.setdefault(nxt, []).append((node, hop.edge(node, nxt)))
        layers.append(layer)
        frontier = set(layer)
    keep = set(answers) - {query.start}
    edges: list[Edge] = []
    for layer in reversed(layers):
        parents = set()
        for node in sorted(keep):
            for parent, edge in layer.get(node, []):
                edges.append(edge)
                parents.add(parent)
        keep = parents
    return list(dict.fromkeys(reversed(edges)))
