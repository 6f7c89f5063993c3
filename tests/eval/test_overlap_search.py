"""The overlap searcher: the question-reading shortcut played through the tools (one lookup step per named
entity, then the answer-type id most of them showed). It reads v1's questions and v2's near-misses defeat it."""

from __future__ import annotations

import json

import pytest

from osint_eval.baselines import SHORTCUTS
from osint_eval.policies import make_policy
from osint_eval.reading import references
from osint_eval.runner import run_multi_turn
from osint_gym.benchmark import benchmark_tasks, benchmark_world


def test_references_are_every_entity_a_question_names_once_in_order():
    assert references("Identify the acquaintance of Olga Becker who lives in Oslo.") == ["Olga Becker", "Oslo"]
    assert references("Which person is the acquaintance of Noah Lopez (person_39) who works at Raltar Group?") == [
        "person_39", "Raltar Group"]
    assert references("Deanonymize @quiet_fox3: its owner is the person who works at Nexa Labs. Who is it?") == [
        "@quiet_fox3", "Nexa Labs"]
    text = "Start from Ralven AI Summit 2025. Take the attendee of Ralven AI Summit 2025. Which person do you reach?"
    assert references(text) == ["Ralven AI Summit 2025"] and references("Which person operates post_12?") == ["post_12"]


def test_it_looks_up_each_named_entity_then_answers_the_id_most_lookups_showed():
    tasks, world = benchmark_tasks("v1:test", family="network_discovery", difficulty="easy", limit=20), \
        benchmark_world("v1:test")
    results = run_multi_turn(make_policy("overlap-search"), world, tasks)
    for task, r in zip(tasks, results):
        refs = references(task.question)
        assert len(r.transcript) == len(refs) + 1 and r.steps == len(refs) + 1
        first = json.loads(r.transcript[0]["action"])["tool_calls"]
        assert [c["name"] for c in first] == ["get_profile", "get_connections", "search_people", "search_people"]
        assert first[0]["arguments"] == {"handle_or_id": refs[0]}
    # on v1's one-hop questions that name two entities, the gold is the one acquaintance that touches both
    assert sum(r.correct for r in results) >= 15
    assert SHORTCUTS["overlap-search"].mode == "multi_turn"


@pytest.mark.slow
def test_v2_near_misses_defeat_it_where_v1_questions_gave_it_away():
    rates = {}
    for ref in ("v1:test", "v2:test"):
        tasks, world = benchmark_tasks(ref), benchmark_world(ref)
        rates[ref] = sum(r.correct for r in run_multi_turn(make_policy("overlap-search"), world, tasks)) / len(tasks)
    assert rates["v1:test"] > 0.2 and rates["v2:test"] <= 0.15, rates
