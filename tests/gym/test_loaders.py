from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

from osint_gym.errors import LoaderError
from osint_gym.tasks import run_oracle, verify_task
from osint_gym.world.loaders import load_metaqa_kb, load_metaqa_qa, load_tsv

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
QA1 = """who directed [Kismet]\tWilliam Dieterle
who acted in [Kismet]\tMarlene Dietrich|Ronald Colman
when was [Kismet] released\t1944
who directed [Missing Movie]\tSomebody
who directed [Les Quatre Cents Coups]\tFrançois Truffaut
"""
QA2 = """which films share the director of [Flags of Our Fathers]\tUnforgiven
who acted in films directed by [William Dieterle]\tMarlene Dietrich|Ronald Colman
who acted in films directed by [Clint Eastwood]\tGene Hackman
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


def test_metaqa_qa_one_hop_with_several_answers(kb, tmp_path):
    (tmp_path / "qa1.txt").write_text(QA1, encoding="utf-8")
    tasks, report = load_metaqa_qa(kb, tmp_path / "qa1.txt", hops=1)
    assert report.to_dict() == {"loaded": 4, "rejected": {"topic_not_in_graph": 1}}
    acted = next(t for t in tasks if t.question == "who acted in Kismet")
    assert set(acted.answers) == {"Marlene Dietrich", "Ronald Colman"}
    assert acted.difficulty == "easy" and acted.family == "kgqa_1hop"
    assert {e for e in acted.evidence} == {("Kismet", "starred_actors", "Marlene Dietrich"), ("Kismet", "starred_actors", "Ronald Colman")}
    for t in tasks:
        assert verify_task(kb, t).ok


def test_metaqa_qa_two_hops_finds_the_relation_path(kb, tmp_path):
    (tmp_path / "qa2.txt").write_text(QA2, encoding="utf-8")
    tasks, report = load_metaqa_qa(kb, tmp_path / "qa2.txt", hops=2)
    # as in MetaQA, the topic entity is never its own answer (Clint Eastwood starred in his own film)
    assert report.loaded == 3 and report.rejected == {}
    share, _, eastwood = tasks
    assert share.difficulty == "medium" and share.query.hops[0].relation == "directed_by"
    assert share.query.evaluate(kb) == ["Unforgiven"]
    assert run_oracle(kb, share.query, 24, 4).answer == "Unforgiven"
    assert eastwood.answers == ("Gene Hackman",) and eastwood.query.evaluate(kb) == ["Gene Hackman"]
    assert ("Unforgiven", "starred_actors", "Gene Hackman") in eastwood.evidence
    assert all(verify_task(kb, t).ok for t in tasks)

    bad = tmp_path / "qa3.txt"  # an answer set no path of that length determines
    bad.write_text("who directed [Kismet]\tRonald Colman|William Dieterle\n", encoding="utf-8")
    assert load_metaqa_qa(kb, bad, hops=1)[1].rejected == {"no_relation_path_gives_answers": 1}


def test_kg_tasks_run_in_the_env_and_any_gold_answer_counts(kb, tmp_path):
    (tmp_path / "qa1.txt").write_text(QA1, encoding="utf-8")
    tasks, _ = load_metaqa_qa(kb, tmp_path / "qa1.txt", hops=1)
    env = gym.make("OSINT-v0", world=kb, tasks=tasks)
    obs, info = env.reset(options={"task_index": 1})
    assert "who acted in Kismet" in obs
    assert [s["function"]["name"] for s in info["tools"]][:4] == ["get_profile", "search_people", "get_connections", "search_notes"]
    obs, *_ = env.step('{"tool": "get_connections", "args": {"person_or_account": "Kismet", "relation": "starred_actors"}}')
    assert "Ronald Colman" in obs
    *_, info = env.step('{"answer": "Ronald Colman"}')
    assert info["correct"]


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


def test_malformed_qa_files_and_missing_files(kb, tmp_path):
    bad = tmp_path / "qa.txt"
    bad.write_text("who directed Kismet\tWilliam Dieterle\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"qa.txt:1: expected 'question with \[topic\]"):
        load_metaqa_qa(kb, bad, hops=1)
    bad.write_text("who directed [Kismet]\t\n", encoding="utf-8")
    with pytest.raises(LoaderError, match="no answer after the tab"):
        load_metaqa_qa(kb, bad, hops=1)
    with pytest.raises(LoaderError, match="hops must be an integer in 1..5"):
        load_metaqa_qa(kb, bad, hops=9)
    with pytest.raises(LoaderError, match="no such file"):
        load_tsv(tmp_path / "absent.tsv")
    binary = tmp_path / "bin.tsv"
    binary.write_bytes(b"\xff\xfe\x00a\tb\tc")
    with pytest.raises(LoaderError, match="not UTF-8"):
        load_tsv(binary)
