from __future__ import annotations

from pathlib import Path

import pytest

from osint_gym.errors import LoaderError
from osint_gym.world.loaders import load_metaqa_kb, load_tsv

EXCERPT = Path(__file__).resolve().parents[1] / "data" / "metaqa-excerpt" / "kb.txt"  # real MetaQA lines, CC BY 3.0

KB = """Kismet|directed_by|William Dieterle
Kismet|starred_actors|Marlene Dietrich
Kismet|starred_actors|Ronald Colman
Kismet|release_year|1944
Flags of Our Fathers|directed_by|Clint Eastwood
Unforgiven|directed_by|Clint Eastwood
Unforgiven|starred_actors|Clint Eastwood
Unforgiven|starred_actors|Gene Hackman
Les Quatre Cents Coups|directed_by|François Truffaut
"""
@pytest.fixture()
def kb(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text(KB, encoding="utf-8")
    return load_metaqa_kb(path)


def test_metaqa_kb_loads_into_a_kg_world(kb):
    assert kb.kind == "kg"
    assert kb.has_edge("Kismet", "directed_by", "William Dieterle")
    assert kb.neighbors("Clint Eastwood", "directed_by", "in") == ["Flags of Our Fathers", "Unforgiven"]
    assert "François Truffaut" in kb


def test_real_metaqa_excerpt_loads():
    world = load_metaqa_kb(EXCERPT)
    assert world.summary()["edges"] == 155
    assert "Väinö Linna" in world or any("Linna" in n for n in world.ids("entity"))
    assert world.neighbors("Clint Eastwood", "directed_by", "in")


def test_tsv_round_trip(tmp_path):
    triples = [("alice", "knows", "bob"), ("bob", "works_at", "acme"), ("acme", "based_in", "oslo")]
    path = tmp_path / "g.tsv"
    path.write_text("# a comment\n" + "\n".join("\t".join(t) for t in triples) + "\n\n", encoding="utf-8")
    world = load_tsv(path)
    assert sorted(tuple(e) for e in world.edges()) == sorted(triples)
    out = tmp_path / "back.tsv"
    out.write_text("\n".join("\t".join(e) for e in world.edges()), encoding="utf-8")
    assert load_tsv(out).fingerprint() == world.fingerprint()


@pytest.mark.parametrize(
    ("content", "loader", "message"),
    [
        ("a|b\n", "kb", r"kb.txt:1: expected head\|relation\|tail"),
        ("a|b|c\nx||y\n", "kb", "kb.txt:2"),
        ("", "kb", "no triples found"),
        ("a\tb\n", "tsv", r"g.tsv:1: expected head\trelation\ttail"),
        ("a\tb\t" + "c" * 600 + "\n", "tsv", "longer than 500"),
    ],
)
def test_malformed_graph_files_name_file_and_line(tmp_path, content, loader, message):
    name = "kb.txt" if loader == "kb" else "g.tsv"
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LoaderError, match=message):
        (load_metaqa_kb if loader == "kb" else load_tsv)(path)


def test_missing_and_non_utf8_graph_files_are_loader_errors(tmp_path):
    with pytest.raises(LoaderError, match="no such file"):
        load_tsv(tmp_path / "absent.tsv")
    binary = tmp_path / "bin.tsv"
    binary.write_bytes(b"\xff\xfe\x00a\tb\tc")
    with pytest.raises(LoaderError, match="not UTF-8"):
        load_tsv(binary)


def test_a_byte_order_mark_does_not_stay_in_the_first_entity_id(tmp_path):
    path = tmp_path / "bom.tsv"
    path.write_bytes("\ufeffalice\tknows\tbob\n".encode("utf-8"))
    world = load_tsv(path)
    assert "alice" in world and "\ufeffalice" not in world
    assert list(world.edges()) == [("alice", "knows", "bob")]

