"""The oracle as a teacher on another agent's state (`oracle_continuation`): it continues within the
steps left, uses only ids the agent has seen, and never fetches again what the agent already read."""

from __future__ import annotations

import pytest

from osint_gym.actions import parse_action
from osint_gym.agents import OracleAgent, oracle_continuation, run_episode, unseen_ids
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.env import OSINTEnv

WORLD = "v0:dev"


def _env(task, max_steps: int = 8) -> OSINTEnv:
    return OSINTEnv(world=benchmark_world(WORLD), tasks=[task], observation_format="compact", max_steps=max_steps)


@pytest.fixture(scope="module")
def demonstrations():
    tasks = benchmark_tasks(WORLD, limit=60)
    demos = [(t, run_episode(_env(t), OracleAgent("short", names_first=True), seed=0, options={"task_index": 0}))
             for t in tasks]
    solved = [(t, d) for t, d in demos if d.correct]  # two of these tasks need more than 8 steps from the start
    assert len(solved) >= 55
    return solved


def _calls(action: str) -> set[tuple[str, str]]:
    return {(c.name, repr(sorted(c.args.items()))) for c in parse_action(action).calls if isinstance(c.args, dict)}


def test_continuing_the_demonstrators_own_prefix_repeats_no_call(demonstrations):
    """From any state of its own episode the teacher finishes exactly as the demonstrator did: what
    the prefix read counts as read, so the episode is no longer than the demonstration."""
    checked = 0
    for task, demo in demonstrations:
        actions = [t.action for t in demo.turns]
        for k in range(1, len(actions)):
            record = oracle_continuation(_env(task), actions[:k], options={"task_index": 0})
            assert record is not None and record.correct
            assert [t.action for t in record.turns] == actions
            checked += 1
    assert checked > 60


def test_a_wrong_prefix_is_recovered_with_seen_ids_only_and_nothing_fetched_twice(demonstrations):
    recovered = 0
    for task, demo in demonstrations:
        # a student who looked the names up as the demonstrator did, then fetched a wrong profile
        first = demo.turns[0].action
        seen_wrong = "get_profile person_1" if "person_1 " not in first else "get_profile person_2"
        record = oracle_continuation(_env(task), [first, seen_wrong], options={"task_index": 0})
        if record is None:
            continue
        assert unseen_ids(record, from_turn=2) == []
        student = set().union(*(_calls(t.action) for t in record.turns[:2] if t.error is None))
        for turn in record.turns[2:]:
            assert not (_calls(turn.action) & student), turn.action
        recovered += record.correct
    assert recovered >= 0.9 * len(demonstrations)


def test_the_teacher_keeps_to_the_steps_left(demonstrations):
    task, demo = next((t, d) for t, d in demonstrations if len(d.turns) >= 3)
    # two wasted steps in a budget of exactly the demonstration's length leave too few to finish
    record = oracle_continuation(_env(task, max_steps=len(demo.turns)), ["get_profile nobody", "get_profile nobody"],
                                 options={"task_index": 0})
    assert record is None or (not record.correct and len(record.turns) <= len(demo.turns))


def test_a_prefix_that_ended_the_episode_has_no_continuation(demonstrations):
    task, demo = demonstrations[0]
    assert oracle_continuation(_env(task), [t.action for t in demo.turns], options={"task_index": 0}) is None


def test_unseen_ids_from_a_turn_ignores_the_students_own_guesses():
    task = benchmark_tasks(WORLD, limit=1)[0]
    env = _env(task)
    env.reset(seed=0, options={"task_index": 0})
    env.step("get_profile person_999")  # the student guessed an id nothing showed
    record = env.episode()
    assert unseen_ids(record) == ["person_999"]
    assert unseen_ids(record, from_turn=1) == []
