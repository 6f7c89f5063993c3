"""Bring your own graph: MetaQA's ``kb.txt`` (``head|relation|tail``) and TSV triples.

Imported graphs become a `World` of kind ``"kg"`` whose entity ids are the names in the files.
This module only builds the world; tasks from MetaQA question files are built and verified by
`osint_gym.tasks.kg.load_metaqa_qa` (the world layer never imports the task layer).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import networkx as nx

from osint_gym.errors import LoaderError
from osint_gym.world.graph import World

MAX_FIELD_CHARS = 500


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


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file (a leading byte-order mark is dropped), or a `LoaderError`."""
    p = Path(path)
    if not p.is_file():
        raise LoaderError(f"{p}: no such file")
    try:
        return p.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise LoaderError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _parse_triples(path: str | Path, sep: str) -> list[tuple[str, str, str]]:
    triples = []
    for lineno, line in enumerate(read_lines(path), 1):
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
