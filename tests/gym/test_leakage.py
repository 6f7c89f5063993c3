"""No-leakage audit: before it answers, nothing the agent sees names the gold answer or the hidden
parts of the gold evidence, except inside records it retrieved through tools."""

from __future__ import annotations

import json
import os
import re

import gymnasium as gym
import numpy as np
import pytest

from osint_gym.tasks import names_entity

EPISODES = int(os.environ.get("OSINT_LEAK_EPISODES", "3000"))
COMBOS = [
    ("identity_resolution", "easy"), ("identity_resolution", "medium"), ("identity_resolution", "hard"),
    ("network_discovery", "easy"), ("network_discovery", "medium"), ("network_discovery", "hard"),
    ("event_tracing", "easy"), ("event_tracing", "medium"), ("event_tracing", "hard"),
    ("cross_platform_linking", "medium"), ("cross_platform_linking", "hard"),
    ("deanonymization", "hard"), ("convoluted_trace", "hard"),
]
TOOLS = ["get_profile", "search_posts", "get_connections", "search_people", "get_user_posts", "search_notes"]


def _secrets(task):
    """The answer and every evidence entity the question does not itself name."""
    named = set(task.query.named_entities())
    hidden = {n for e in task.evidence for n in (e.head, e.tail)} - named
    return set(task.answers) | hidden


def _random_action(rng, world, seen):
    tool = TOOLS[rng.integers(len(TOOLS))]
    pool = seen or world.ids("person")[:20]
    ref = str(pool[rng.integers(len(pool))])
    args = {
        "get_profile": {"handle_or_id": ref},
        "search_posts": {"query": ref},
        "get_connections": {"person_or_account": ref},
        "search_people": {"name": ref},
        "get_user_posts": {"account": ref},
        "search_notes": {"query": ref},
    }[tool]
    if rng.random() < 0.15:
        return "garbage " + ref
    return json.dumps({"tool": tool, "args": args})


def _outside_results(obs: str) -> str:
    """The observation with successful tool results removed (they are retrieved records)."""
    try:
        data = json.loads(obs)
    except ValueError:
        return obs
    for entry in data.get("results", []):
        entry.pop("result", None)
    return json.dumps(data)


@pytest.mark.parametrize("version", ["v0", pytest.param("v2", marks=pytest.mark.slow)])
def test_no_gold_answer_or_hidden_evidence_before_answering(version):
    """On the default world, and on a world of benchmark v2's config (near-miss decoys, everyone's past)."""
    from osint_gym.benchmark import BENCHMARKS

    env = gym.make("OSINT-v0", **({} if version == "v0" else {"world_config": BENCHMARKS["v2"].world_config,
                                                               "seed": BENCHMARKS["v2"].splits["test"].world_seed}))
    world = env.unwrapped.world
    rng = np.random.default_rng(0)
    id_pattern = re.compile(r"\b(?:person|account|org|loc|event|post|thread)_\d+\b")
    checked = 0
    for ep in range(EPISODES):
        family, difficulty = COMBOS[ep % len(COMBOS)]
        obs, info = env.reset(seed=ep, options={"family": family, "difficulty": difficulty})
        task = env.unwrapped.task
        secrets = _secrets(task)
        static = {k: v for k, v in info.items() if k != "tools"}
        for secret in secrets:
            assert not names_entity(world, obs, secret), (task.task_id, secret, obs)
            assert secret not in json.dumps(static)
        seen: list[str] = []
        for _ in range(6):
            action = _random_action(rng, world, seen)
            obs, reward, terminated, truncated, info = env.step(action)
            seen += id_pattern.findall(obs)
            visible = _outside_results(obs) + json.dumps({k: v for k, v in info.items() if k != "reward_breakdown"})
            for secret in secrets:
                if secret in visible:
                    assert secret in action, (task.task_id, secret, visible[:300])  # only ever the agent's own echo
            checked += 1
            if terminated or truncated:
                break
    assert checked >= EPISODES * 5


@pytest.mark.parametrize("ref", ["v0:dev", "v0:test",
                                 pytest.param("v2:dev", marks=pytest.mark.slow),
                                 pytest.param("v2:test", marks=pytest.mark.slow),
                                 pytest.param("v2:hard", marks=pytest.mark.slow)])
def test_benchmark_questions_never_name_their_answers(ref):
    from osint_gym.benchmark import benchmark_tasks, benchmark_world

    world = benchmark_world(ref)
    for task in benchmark_tasks(ref):
        for secret in _secrets(task):
            assert not names_entity(world, task.question, secret), (task.task_id, secret)
