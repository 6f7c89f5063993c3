from __future__ import annotations

import json
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import osint_gym
from osint_gym.agents import OracleAgent
from osint_gym.env import OSINTEnv
from osint_gym.errors import ConfigError, TaskError
from osint_gym.registration import ENV_IDS


def run_oracle_episode(env, seed=0, options=None):
    obs, info = env.reset(seed=seed, options=options)
    core = env.unwrapped
    policy = OracleAgent()
    policy.reset(core)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs))
        total += reward
        done = terminated or truncated
    return total, info


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_check_env_passes_without_warnings(env_id):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make(env_id)
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_namespaced_make_imports_the_package():
    env = gym.make("osint_gym:OSINT-v0")
    assert isinstance(env.unwrapped, OSINTEnv)


def test_registration_is_idempotent():
    osint_gym.register_envs()
    osint_gym.register_envs()
    assert gym.spec("OSINT-Hard-v0").kwargs == {"difficulty": "hard"}


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_same_seed_same_rollout(env_id):
    def rollout():
        env = gym.make(env_id)
        env.action_space.seed(3)
        trace = [env.reset(seed=11)[0]]
        core = env.unwrapped
        ids = core.world.ids("person")[:5] + core.world.ids("account")[:5]
        for i in range(6):
            obs, r, te, tr, info = env.step(json.dumps({"tool": "get_profile", "args": {"handle_or_id": ids[i]}}))
            trace.append((obs, r, te, tr, info["critical_steps"]))
        return trace

    assert rollout() == rollout()


def test_pickle_round_trip_keeps_the_episode():
    env = gym.make("OSINT-v0")
    env.reset(seed=2)
    env.step('{"tool": "get_profile", "args": {"handle_or_id": "person_1"}}')
    clone = pickle.loads(pickle.dumps(env))
    a = env.step('{"tool": "get_profile", "args": {"handle_or_id": "person_2"}}')
    b = clone.step('{"tool": "get_profile", "args": {"handle_or_id": "person_2"}}')
    assert a[0] == b[0] and a[1] == b[1] and a[4] == b[4]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs(mode):
    # Async needs shared_memory=False: gymnasium reads Text observations out of shared memory only
    # once (its non-Box shared-memory limitation, Farama-Foundation/Gymnasium#1164), so they never update.
    kwargs = {"vector_kwargs": {"shared_memory": False}} if mode == "async" else {}
    envs = gym.make_vec("OSINT-v0", num_envs=2, vectorization_mode=mode, **kwargs)
    try:
        obs, info = envs.reset(seed=[1, 2])
        assert len(obs) == 2 and obs[0] != obs[1]
        obs, reward, term, trunc, info = envs.step(['{"answer": "person_0"}', "nonsense"])
        assert term.tolist() == [True, False]
        assert reward[1] == pytest.approx(-0.02)
        assert info["invalid_actions"].tolist() == [0, 1]
    finally:
        envs.close()


def test_oracle_solves_tasks_through_the_env_with_full_evidence():
    env = gym.make("OSINT-v0", difficulty="hard")
    for seed in range(20):
        total, info = run_oracle_episode(env, seed)
        assert info["correct"], seed
        assert info["reward_breakdown"]["evidence_f1"] == pytest.approx(1.0)
        assert total == pytest.approx(info["reward_breakdown"]["total"])
        assert total > 1.3


def test_oracle_solves_every_benchmark_task_through_the_env():
    for split in ("dev", "test"):
        env = gym.make("OSINT-v0", benchmark=f"v0:{split}")
        n = len(env.unwrapped.tasks)
        solved = sum(run_oracle_episode(env, options={"task_index": i})[1]["correct"] for i in range(n))
        assert solved == n == 1000


def test_parallel_action_runs_all_calls_in_one_critical_step():
    env = gym.make("OSINT-v0", max_parallel_calls=3)
    env.reset(seed=0)
    calls = [{"name": "get_profile", "arguments": {"handle_or_id": f"person_{i}"}} for i in range(3)]
    obs, reward, term, trunc, info = env.step(json.dumps({"tool_calls": calls}))
    results = json.loads(obs)["results"]
    assert [r["result"]["id"] for r in results] == ["person_0", "person_1", "person_2"]
    assert info["critical_steps"] == 1 and info["tool_calls"] == 3
    too_many = json.dumps({"tool_calls": calls + calls[:1]})
    obs, reward, *_rest, info = env.step(too_many)
    assert "4 tool calls in one step (max 3)" in obs and info["tool_calls"] == 3 and reward < 0


def test_useful_parallel_calls_are_counted_from_what_happened():
    env = gym.make("OSINT-v0", max_parallel_calls=2)
    env.reset(seed=0, options={"task_index": 0, "family": "identity_resolution", "difficulty": "easy"})
    task = env.unwrapped.task
    account, person = task.evidence[0].head, task.answer
    env.step(json.dumps({"tool_calls": [
        {"name": "get_profile", "arguments": {"handle_or_id": person}},
        {"name": "get_profile", "arguments": {"handle_or_id": "org_0"}},
    ]}))
    *_, info = env.step(json.dumps([{"add_edge": [account, "alias_of", person]}, {"answer": person}]))
    assert info["parallel_calls"] == 2 and info["useful_parallel_calls"] == 1
    assert info["correct"] and info["reward_breakdown"]["evidence_f1"] == 1.0


def test_add_edge_accepts_only_edges_shown_by_retrieved_records(world):
    env = gym.make("OSINT-v0")
    env.reset(seed=0)
    org = world.neighbors("person_0", "works_at", "out")[0]
    edge = json.dumps({"add_edge": ["person_0", "works_at", org]})
    obs, reward, *_ = env.step(edge)
    assert "not shown by any record you retrieved" in obs and reward < 0
    env.step('{"tool": "get_profile", "args": {"handle_or_id": "person_0"}}')
    obs, reward, *_rest, info = env.step(edge)
    assert '"ok":true' in obs and reward == 0.0 and info["evidence_edges"] == 1
    friend = world.neighbors("person_0", "knows", "out")[0]
    env.step('{"tool": "get_connections", "args": {"person_or_account": "person_0"}}')
    *_, info = env.step(json.dumps({"add_edge": [friend, "knows", "person_0"]}))  # symmetric: either order
    assert info["evidence_edges"] == 2 and info["action_error"] is None
    obs, *_ = env.step('{"add_edge": ["person_0", "likes", "person_1"]}')
    assert "unknown relation 'likes'" in obs


NASTY = [
    "", " ", "\x00\x01", "null", "true", "123", '"string"', "{}", "[]", "[[[[]]]]", "{" * 5000, "]" * 5000,
    '{"tool": null}', '{"tool": "get_profile"}', '{"tool": "get_profile", "args": "notjson"}',
    '{"tool": "get_profile", "args": {"handle_or_id": null}}', '{"tool": "get_profile", "args": {"handle_or_id": []}}',
    '{"tool": "rm -rf", "args": {}}', '{"answer": null}', '{"answer": {"x": 1}}', '{"answer": []}', '{"answer": 7}',
    '{"add_edge": {"src": 1}}', '{"add_edge": null}', '{"tool": "answer", "args": {"id": "x"}}',
    "\ud800", "💥" * 1000, "x" * 100_000, '{"tool": "search_posts", "args": {"query": "a", "limit": -1}}',
    '{"tool": "search_posts", "args": {"query": "a", "limit": 1e309}}', '{"tool_calls": [{"name": "get_post"}]}',
    {"tool": "get_profile", "args": {"handle_or_id": "person_0", "extra": 1}}, ["not a call"], 3.5, None, b"bytes",
]


@pytest.mark.parametrize("action", NASTY)
def test_malformed_actions_never_raise_and_cost_a_small_penalty(action):
    env = gym.make("OSINT-v0")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert env.observation_space.contains(obs)
    assert not terminated and not truncated
    assert reward == pytest.approx(-0.02)
    assert info["action_error"]
    obs, reward, *_ = env.step('{"tool": "get_profile", "args": {"handle_or_id": "person_0"}}')
    assert reward == 0.0 and '"ok":true' in obs  # the episode goes on


def test_budget_truncates_and_unanswered_scores_only_penalties():
    env = gym.make("OSINT-v0", max_steps=3)
    env.reset(seed=0)
    rewards = []
    for action in ("bad", '{"tool": "get_profile", "args": {"handle_or_id": "person_0"}}', "bad"):
        obs, r, term, trunc, info = env.step(action)
        rewards.append(r)
    assert trunc and not term
    assert info["answered"] is False and info["reward_breakdown"]["total"] == pytest.approx(-0.04)
    assert sum(rewards) == pytest.approx(-0.04)
    obs, r, term, *_ = env.step('{"answer": "person_0"}')
    assert "episode is over" in obs and r == 0.0


def test_reset_options(world):
    env = gym.make("OSINT-v0")
    _, info = env.reset(seed=0, options={"family": "event_tracing", "difficulty": "medium"})
    assert (info["family"], info["difficulty"]) == ("event_tracing", "medium")
    task = env.unwrapped.task
    obs, info = env.reset(options={"task": task.to_dict()})
    assert task.question in obs and info["task_id"] == task.task_id
    a, _ = env.reset(options={"task_index": 5})
    b, _ = env.reset(options={"task_index": 5})
    assert a == b
    with pytest.raises(ConfigError, match="unknown reset option"):
        env.reset(options={"tsk": 1})
    with pytest.raises(ConfigError, match="task_index"):
        env.reset(options={"task_index": -1})
    with pytest.raises(TaskError, match="is not valid in world"):
        env.reset(options={"task": {**task.to_dict(), "answers": ["person_1"]}})


def test_constructor_errors_are_clear():
    with pytest.raises(ConfigError, match="difficulty must be one of"):
        gym.make("OSINT-v0", difficulty="impossible")
    with pytest.raises(ConfigError, match=r"max_steps must be an integer in \[1, "):
        gym.make("OSINT-v0", max_steps=0)
    with pytest.raises(ConfigError, match="unknown benchmark"):
        gym.make("OSINT-v0", benchmark="v7:test")
    with pytest.raises(ConfigError, match="did you mean 'n_people'"):
        gym.make("OSINT-v0", world_config={"people": 5})
    with pytest.raises(ConfigError, match="render_mode"), pytest.warns(UserWarning, match="render_mode='human'"):
        gym.make("OSINT-v0", render_mode="human")


def test_render_ansi_shows_the_episode():
    env = gym.make("OSINT-v0", render_mode="ansi")
    env.reset(seed=0)
    env.step('{"tool": "get_profile", "args": {"handle_or_id": "person_0"}}')
    text = env.render()
    assert text.startswith("Q: ") and "ACTION: " in text and "OBS: " in text


def test_observations_fit_the_space_for_unicode_worlds(tmp_path):
    from osint_gym.world.loaders import load_tsv

    path = tmp_path / "kg.tsv"
    path.write_text("François Truffaut\tdirected\tJules et Jim\nJules et Jim\tlanguage\t日本語\n", encoding="utf-8")
    from osint_gym.schema import Direction, Edge
    from osint_gym.tasks import Hop, Query, Task

    world = load_tsv(path)
    task = Task(
        "kg-1",
        "Which language is Jules et Jim in?",
        ("日本語",),
        (Edge("Jules et Jim", "language", "日本語"),),
        "custom",
        "easy",
        Query("Jules et Jim", (Hop("language", Direction.OUT),)),
    )
    env = OSINTEnv(world=world, tasks=[task])
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step('{"tool": "get_profile", "args": {"handle_or_id": "Jules et Jim"}}')
    assert env.observation_space.contains(obs)
    assert "\\u65e5" in obs and "François" in obs
    *_, info = env.step('{"answer": "日本語"}')
    assert info["correct"]


def test_episode_rewards_sum_to_the_breakdown_total():
    env = gym.make("OSINT-v0")
    rng = np.random.default_rng(0)
    for seed in range(15):
        env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            choice = rng.integers(4)
            action = ["junk", '{"tool": "get_profile", "args": {"handle_or_id": "person_1"}}',
                      '{"answer": "person_3"}', '{"add_edge": ["a", "knows", "b"]}'][choice]
            obs, r, term, trunc, info = env.step(action)
            total += r
            done = term or trunc
        assert total == pytest.approx(info["reward_breakdown"]["total"])
