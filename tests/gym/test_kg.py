"""Tasks from knowledge-graph question files (osint_gym.tasks.kg): path choice, rejections, verification."""

from __future__ import annotations

import gymnasium as gym
import pytest

from osint_gym.errors import LoaderError
from osint_gym.schema import Direction
from osint_gym.tasks import run_oracle, verify_task
from osint_gym.tasks.kg import QARejection, load_metaqa_qa, relation_named
from osint_gym.world.loaders import load_metaqa_kb

from .test_loaders import EXCERPT, KB

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
# Questions over the real MetaQA excerpt (tests/data/metaqa-excerpt/kb.txt), where several relations
# reach the same answers: Andrew Dominik wrote and directed Chopper, Kurosawa wrote and directed his films.
REAL_1HOP = """who wrote [Chopper]\tAndrew Dominik
who directed [Chopper]\tAndrew Dominik
who made [Chopper]\tAndrew Dominik
what films did [Akira Kurosawa] write\tThe Hidden Fortress|Red Beard|Dreams
which language is [Before the Rain] in\tMacedonian
who acted in [Sleep, My Love]\tRobert Cummings|Don Ameche|Claudette Colbert
"""
REAL_2HOP = """the films written by [Akira Kurosawa] were released in which years\t1958|1965|1990
the films directed by [Akira Kurosawa] were released in which years\t1958|1965|1990
who starred in the films directed by [Clint Eastwood]\tMeryl Streep
who starred in the films directed by [Clint Eastwood]\tClint Eastwood|Meryl Streep
which films share the director of [Flags of Our Fathers]\tThe Bridges of Madison County
"""
REAL_3HOP = """who directed [Chopper]\tAndrew Dominik
what language is [Red Beard] in\tJapanese
who directed [The Unknown Soldier]\tRauni Mollberg
the films that share writers with [The Hidden Fortress] were released in which years\t1965|1990
"""


@pytest.fixture()
def kb(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text(KB, encoding="utf-8")
    return load_metaqa_kb(path)


@pytest.fixture(scope="module")
def excerpt():
    return load_metaqa_kb(EXCERPT)


def _load(world, tmp_path, text, hops):
    path = tmp_path / f"qa{hops}.txt"
    path.write_text(text, encoding="utf-8")
    return load_metaqa_qa(world, path, hops=hops)


def _relations(task):
    return [(h.relation, h.direction.value) for h in task.query.hops]


def test_metaqa_qa_one_hop_with_several_answers(kb, tmp_path):
    tasks, report = _load(kb, tmp_path, QA1, 1)
    assert report.to_dict() == {"loaded": 4, "rejected": {"topic_not_in_graph": 1}}
    acted = next(t for t in tasks if t.question == "who acted in Kismet")
    assert set(acted.answers) == {"Marlene Dietrich", "Ronald Colman"}
    assert acted.difficulty == "easy" and acted.family == "kgqa_1hop"
    assert set(acted.evidence) == {
        ("Kismet", "starred_actors", "Marlene Dietrich"),
        ("Kismet", "starred_actors", "Ronald Colman"),
    }
    for t in tasks:
        assert verify_task(kb, t).ok


def test_metaqa_qa_two_hops_finds_the_relation_path_the_question_names(kb, tmp_path):
    tasks, report = _load(kb, tmp_path, QA2, 2)
    assert report.loaded == 3 and report.rejected == {}
    share, _, eastwood = tasks
    # "share the director" walks directed_by there and back, not on through Eastwood's acting
    assert _relations(share) == [("directed_by", "out"), ("directed_by", "in")]
    assert share.difficulty == "medium" and share.query.evaluate(kb) == ["Unforgiven"]
    assert run_oracle(kb, share.query, 24, 4).answer == "Unforgiven"
    assert eastwood.answers == ("Gene Hackman",) and eastwood.query.evaluate(kb) == ["Gene Hackman"]
    assert _relations(eastwood) == [("directed_by", "in"), ("starred_actors", "out")]
    assert ("Unforgiven", "starred_actors", "Gene Hackman") in eastwood.evidence
    assert all(verify_task(kb, t).ok for t in tasks)

    bad = tmp_path / "qa3.txt"  # an answer set no path of that length determines
    bad.write_text("who directed [Kismet]\tRonald Colman|William Dieterle\n", encoding="utf-8")
    assert load_metaqa_qa(kb, bad, hops=1)[1].rejected == {"no_relation_path_gives_answers": 1}


def test_real_excerpt_one_hop_questions_get_the_relation_they_name_and_ties_are_rejected(excerpt, tmp_path):
    tasks, report = _load(excerpt, tmp_path, REAL_1HOP, 1)
    assert report.to_dict() == {"loaded": 5, "rejected": {"tied_relation_paths": 1}}  # "who made [Chopper]"
    by_question = {t.question: t for t in tasks}
    assert by_question["who wrote Chopper"].evidence == (("Chopper", "written_by", "Andrew Dominik"),)
    assert by_question["who directed Chopper"].evidence == (("Chopper", "directed_by", "Andrew Dominik"),)
    assert {e.relation for e in by_question["what films did Akira Kurosawa write"].evidence} == {"written_by"}
    assert _relations(by_question["which language is Before the Rain in"]) == [("in_language", "out")]
    assert _relations(by_question["who acted in Sleep, My Love"]) == [("starred_actors", "out")]


def test_real_excerpt_two_hop_questions_get_written_by_or_directed_by_as_they_say(excerpt, tmp_path):
    tasks, report = _load(excerpt, tmp_path, REAL_2HOP, 2)
    assert report.to_dict() == {"loaded": 4, "rejected": {"topic_is_own_answer": 1}}
    written, directed, starred, share = tasks
    assert _relations(written) == [("written_by", "in"), ("release_year", "out")]
    assert {e.relation for e in written.evidence} == {"written_by", "release_year"}
    assert ("Red Beard", "written_by", "Akira Kurosawa") in written.evidence
    assert _relations(directed) == [("directed_by", "in"), ("release_year", "out")]
    assert {e.relation for e in directed.evidence} == {"directed_by", "release_year"}
    assert _relations(starred) == [("directed_by", "in"), ("starred_actors", "out")]
    assert set(starred.evidence) == {("The Bridges of Madison County", "directed_by", "Clint Eastwood"),
                                     ("The Bridges of Madison County", "starred_actors", "Meryl Streep")}
    assert _relations(share) == [("directed_by", "out"), ("directed_by", "in")]
    assert all(verify_task(excerpt, t).ok for t in tasks)


def test_three_hop_paths_never_revisit_an_entity(excerpt, tmp_path):
    tasks, report = _load(excerpt, tmp_path, REAL_3HOP, 3)
    # one-hop questions no longer load through paths that come back (Chopper -directed_by-> Dominik
    # -written_by^-1-> Chopper -directed_by-> Dominik)
    assert report.to_dict() == {"loaded": 1, "rejected": {"no_relation_path_gives_answers": 3}}
    (shared,) = tasks
    assert _relations(shared) == [("written_by", "out"), ("written_by", "in"), ("release_year", "out")]
    # the topic is not passed through again: its own year (1958) is not an answer
    assert set(shared.query.evaluate(excerpt)) == {"1965", "1990"}
    assert all(e.head != "The Hidden Fortress" or e.relation == "written_by" for e in shared.evidence)
    assert ("The Hidden Fortress", "release_year", "1958") not in shared.evidence
    assert set(run_oracle(excerpt, shared.query, 24, 4).found) == {"1965", "1990"}


def test_a_topic_is_never_its_own_answer(kb, tmp_path):
    _, report = _load(kb, tmp_path, "who acted in films directed by [Clint Eastwood]\tClint Eastwood|Gene Hackman\n", 2)
    assert report.rejected == {QARejection.TOPIC_IS_OWN_ANSWER.value: 1}
    assert report.to_dict()["rejected"] == {"topic_is_own_answer": 1}


@pytest.mark.parametrize(
    ("question", "relation", "named"),
    [
        ("who is the director of [X]", "directed_by", True),
        ("the films written by [X]", "written_by", True),
        ("who was the screenwriter for [X]", "written_by", True),
        ("what films did [X] star in", "starred_actors", True),
        ("in which years were they released", "release_year", True),
        ("what sort of film is [X]", "has_genre", True),
        ("who directed [X]", "written_by", False),
        ("who works for [X]", "works_at", True),  # a word of the relation's own name
        ("who made [X]", "directed_by", False),
    ],
)
def test_relation_words_in_questions(question, relation, named):
    assert relation_named(question, relation) is named


def test_kg_tasks_run_in_the_env_and_any_gold_answer_counts(kb, tmp_path):
    tasks, _ = _load(kb, tmp_path, QA1, 1)
    env = gym.make("OSINT-v0", world=kb, tasks=tasks)
    obs, info = env.reset(options={"task_index": 1})
    assert "who acted in Kismet" in obs
    assert [s["function"]["name"] for s in info["tools"]][:4] == [
        "get_profile",
        "search_people",
        "get_connections",
        "search_notes",
    ]
    obs, *_ = env.step(
        '{"tool": "get_connections", "args": {"person_or_account": "Kismet", "relation": "starred_actors"}}'
    )
    assert "Ronald Colman" in obs
    *_, info = env.step('{"answer": "Ronald Colman"}')
    assert info["correct"]


def test_malformed_qa_files_are_loader_errors(kb, tmp_path):
    bad = tmp_path / "qa.txt"
    bad.write_text("who directed Kismet\tWilliam Dieterle\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"qa.txt:1: expected 'question with \[topic\]"):
        load_metaqa_qa(kb, bad, hops=1)
    bad.write_text("who directed [Kismet]\t\n", encoding="utf-8")
    with pytest.raises(LoaderError, match="no answer after the tab"):
        load_metaqa_qa(kb, bad, hops=1)
    with pytest.raises(LoaderError, match="hops must be an integer in 1..5"):
        load_metaqa_qa(kb, bad, hops=9)
    with pytest.raises(LoaderError, match="limit must be an integer >= 0"):
        load_metaqa_qa(kb, bad, hops=1, limit=-1)
    with pytest.raises(LoaderError, match="no such file"):
        load_metaqa_qa(kb, tmp_path / "absent.txt", hops=1)


def test_kg_tasks_hop_directions_round_trip_through_json(kb, tmp_path):
    from osint_gym.tasks import Task

    tasks, _ = _load(kb, tmp_path, QA2, 2)
    again = Task.from_dict(tasks[0].to_dict())
    assert again.query == tasks[0].query and again.query.hops[1].direction is Direction.IN
    assert again.query.exclude_start
