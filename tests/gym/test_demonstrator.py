"""The demonstrator (``OracleAgent(names_first=True)``) uses no id before the agent could have seen it."""

from __future__ import annotations

import pytest

from osint_gym.agents import OracleAgent, run_episode, unseen_ids
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.env import OSINTEnv
from osint_gym.episode import EpisodeRecord


@pytest.fixture(scope="module")
def episodes():
    world = benchmark_world("v0:dev")
    tasks = benchmark_tasks("v0:dev", limit=150)

    def run(names_first: bool, fmt: str) -> list[EpisodeRecord]:
        return [
            run_episode(
                OSINTEnv(world=world, tasks=[t], observation_format="compact"),
                OracleAgent(fmt, names_first=names_first),
                seed=0,
                options={"task_index": 0},
            )
            for t in tasks
        ]

    return {(nf, fmt): run(nf, fmt) for nf in (False, True) for fmt in ("short", "json")}


def test_the_plain_oracle_uses_ids_the_question_never_showed(episodes):
    leaking = [r for r in episodes[(False, "short")] if unseen_ids(r)]
    assert len(leaking) > 100  # most tasks name their start by name or handle; the oracle starts from its id


@pytest.mark.parametrize("fmt", ["short", "json"])
def test_the_demonstrator_looks_names_up_first_and_still_solves_every_task(episodes, fmt):
    records = episodes[(True, fmt)]
    assert all(r.correct for r in records)
    assert [unseen_ids(r) for r in records] == [[] for _ in records]
    plain = episodes[(False, fmt)]
    extra = sum(len(a.turns) for a in records) - sum(len(b.turns) for b in plain)
    assert 0 < extra <= 2 * len(records)  # at most a lookup step or two per episode
    first = records[0].turns[0].action
    assert "get_profile" in first


def test_unseen_ids_reads_the_actions_against_what_was_shown():
    world = benchmark_world("v0:dev")
    task = benchmark_tasks("v0:dev", limit=1)[0]
    env = OSINTEnv(world=world, tasks=[task], observation_format="compact")
    env.reset(seed=0, options={"task_index": 0})
    env.step("get_profile person_999")  # nothing showed person_999
    assert unseen_ids(env.episode()) == ["person_999"]
