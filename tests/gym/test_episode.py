"""The env owns the episode: its record, the one episode loop, stamps, cuts and budgets."""

from __future__ import annotations

import inspect
import json

import gymnasium as gym
import pytest
from gymnasium.wrappers import TimeLimit

import osint_gym  # noqa: F401  (registers the ids)
import osint_gym.tasks.verify as verify_module
from osint_gym.agents import OracleAgent, run_episode, run_episodes
from osint_gym.env import OSINTEnv
from osint_gym.episode import EndReason, EpisodeRecord
from osint_gym.errors import ConfigError, TaskError
from osint_gym.integrations.trl_env import OSINTToolEnv
from osint_gym.tasks import Budgets, Task, TaskSampler
from osint_gym.tools import CONTROL_SCHEMAS, TOOLS

BAD = '{"tool": "get_profile", "args": {"handle_or_id": "nobody_here"}}'


class Scripted:
    """An agent that plays a fixed list of actions (None: stop the episode)."""

    def __init__(self, actions):
        self.actions = list(actions)

    def reset(self, env, observation, info):
        self.i = 0

    def act(self, observation):
        self.i += 1
        return self.actions[self.i - 1] if self.i <= len(self.actions) else BAD


def test_record_at_any_moment_scores_a_running_episode_as_truncation(world):
    env = OSINTEnv(world=world, max_steps=3)
    obs, _ = env.reset(seed=1)
    rec = env.episode()
    assert rec.end == "running" and not rec.ended and rec.turns == () and rec.first_observation == obs
    total = sum(env.step(BAD)[1] for _ in range(2))
    rec = env.episode()
    assert rec.end == "running" and len(rec.turns) == 2 and rec.invalid_actions == 2
    assert rec.reward == pytest.approx(total) == pytest.approx(-0.04) and not rec.answered
    _, r, _, truncated, info = env.step(BAD)
    assert truncated and env.episode().end == "step_budget"
    assert env.episode().reward == pytest.approx(total + r) == pytest.approx(info["reward_breakdown"]["total"])


def test_rewards_of_an_answered_episode_sum_to_the_record(world):
    env = OSINTEnv(world=world)
    obs, _ = env.reset(seed=2)
    agent, total, done = OracleAgent(), 0.0, False
    agent.reset(env)
    while not done:
        obs, r, term, trunc, _ = env.step(agent.act(obs))
        total += r
        done = term or trunc
    rec = env.episode()
    assert rec.end == "answered" and rec.correct and rec.answer == rec.task.answer
    assert rec.reward == pytest.approx(total) and sum(t.reward for t in rec.turns) == pytest.approx(total)
    assert set(rec.evidence) and rec.useful_calls >= 1 and rec.to_dict()["correct"] is True
    json.dumps(rec.to_dict())


def test_gym_time_limit_cut_reads_the_truncation_score_from_the_record():
    env = gym.make("OSINT-v0", max_episode_steps=3)
    env.reset(seed=0)
    total = 0.0
    for _ in range(3):
        _, r, term, trunc, info = env.step(BAD)
        total += r
    assert trunc and not term
    rec = env.unwrapped.episode()  # the wrapper cut it; the record scores it as the env's truncation
    assert rec.critical_steps == 3 and rec.reward == pytest.approx(total) == pytest.approx(-0.06)
    assert not rec.answered and rec.breakdown.penalty == pytest.approx(-0.06)
    assert run_episode(env, Scripted([BAD] * 5), seed=0).end == "time_limit"


def test_a_cut_from_outside_scores_exactly_as_the_envs_own_truncation(world):
    tasks = [TaskSampler(world, 4, difficulty="easy").sample(0)]
    own_rec = run_episode(OSINTEnv(world=world, tasks=tasks, max_steps=2), Scripted([BAD, BAD]), seed=4)
    wrapped = TimeLimit(OSINTEnv(world=world, tasks=tasks, max_steps=24), max_episode_steps=2)
    cut_rec = run_episode(wrapped, Scripted([BAD, BAD]), seed=4)
    stopped = run_episode(OSINTEnv(world=world, tasks=tasks), Scripted([BAD, BAD, None]), seed=4)
    assert own_rec.end == "step_budget" and cut_rec.end == "time_limit" and stopped.end == "token_budget"
    assert own_rec.task == cut_rec.task == stopped.task
    assert own_rec.breakdown == cut_rec.breakdown == stopped.breakdown
    assert own_rec.reward == pytest.approx(-0.04)
    with pytest.raises(ConfigError, match="stop reason"):
        OSINTEnv(world=world).stop("because")
    assert own_rec.end is EndReason.STEP_BUDGET and stopped.end is EndReason.TOKEN_BUDGET  # the enum, not a str
    # a cut named by its value or its member is the same cut; written to JSON as the value and read back the member
    env = OSINTEnv(world=world, tasks=tasks)
    env.reset(seed=4)
    record = env.stop("stopped")
    assert record.end is EndReason.STOPPED and env.stop(EndReason.TIME_LIMIT).end is EndReason.STOPPED  # ended once
    data = json.loads(json.dumps(record.to_dict()))
    assert data["end"] == "stopped" and EpisodeRecord.from_dict(data).end is EndReason.STOPPED


def test_run_episodes_batches_agents_and_matches_single_runs(world):
    sampler = TaskSampler(world, 5)
    tasks = [sampler.sample(i) for i in range(6)]
    envs = [OSINTEnv(world=world, tasks=[t]) for t in tasks]
    calls = []

    class Batch:
        def __init__(self):
            self.agents = {}

        def reset(self, i, env, obs, info):
            self.agents[i] = OracleAgent()
            self.agents[i].reset(env)

        def act(self, pending):
            calls.append(len(pending))
            return [self.agents[i].act(o) for i, o in pending]

    batched = run_episodes(envs, Batch(), seeds=[0] * 6)
    single = [run_episode(OSINTEnv(world=world, tasks=[t]), OracleAgent(), seed=0) for t in tasks]
    assert [r.reward for r in batched] == [r.reward for r in single] and all(r.correct for r in batched)
    assert calls[0] == 6 and max(calls) == 6  # every pending turn went to the agent in one call
    with pytest.raises(ConfigError, match="seeds has 1 entries for 6 envs"):
        run_episodes(envs, Batch(), seeds=[0])



def test_run_episodes_max_active_refills_slots_and_keeps_order(world):
    sampler = TaskSampler(world, 5)
    tasks = [sampler.sample(i) for i in range(7)]
    # episode lengths differ: episode i takes i % 3 bad calls, then the oracle
    calls, active, ended = [], set(), []

    class Batch:
        def __init__(self):
            self.agents, self.bad = {}, {}

        def reset(self, i, env, obs, info):
            active.add(i)
            self.agents[i], self.bad[i] = OracleAgent(), i % 3
            self.agents[i].reset(env)

        def act(self, pending):
            calls.append(sorted(i for i, _ in pending))
            out = []
            for i, o in pending:
                if self.bad[i]:
                    self.bad[i] -= 1
                    out.append(BAD)
                else:
                    out.append(self.agents[i].act(o))
            return out

    def on_end(i, record):
        active.discard(i)
        ended.append(i)

    envs = [OSINTEnv(world=world, tasks=[t]) for t in tasks]
    records = run_episodes(envs, Batch(), seeds=[0] * 7, max_active=3, on_end=on_end)
    single = [run_episode(OSINTEnv(world=world, tasks=[t]), OracleAgent(), seed=0) for t in tasks]
    assert [r.task.task_id for r in records] == [t.task_id for t in tasks]  # the envs' order, not the end order
    assert all(r.correct for r in records) and ended != sorted(ended)
    assert [r.tool_calls for r in records] == [s.tool_calls + i % 3 for i, s in enumerate(single)]
    assert max(len(c) for c in calls) == 3 and calls[0] == [0, 1, 2]
    # a slot freed in one turn is filled before the next: every turn is full until the queue runs out
    last_start = next(k for k, c in enumerate(calls) if 6 in c)
    assert all(len(c) == 3 for c in calls[: last_start + 1]) and not active
    with pytest.raises(ConfigError, match="max_active must be >= 1"):
        run_episodes(envs, Batch(), max_active=0)

def test_env_on_stamped_tasks_verifies_nothing(world, monkeypatch):
    tasks = TaskSampler(world, 9).generate(5)
    assert all(t.stamp is not None for t in tasks)

    def boom(*a, **k):
        raise AssertionError("verify_task called for a stamped task")

    monkeypatch.setattr(verify_module, "verify_task", boom)
    env = OSINTEnv(world=world, tasks=tasks)
    env.reset(options={"task": tasks[0]})
    back = Task.from_dict(json.loads(json.dumps(tasks[1].to_dict())))  # the stamp survives a file
    OSINTEnv(world=world, tasks=[back])


def test_edited_or_foreign_tasks_are_verified_again(world):
    task = TaskSampler(world, 9, difficulty="easy").sample(0)
    row = task.to_dict()
    row["answers"] = ["person_0" if task.answer != "person_0" else "person_1"]
    edited = Task.from_dict(row)
    assert edited.stamp is None  # the digest no longer matches
    with pytest.raises(TaskError, match="is not valid in world"):
        OSINTEnv(world=world, tasks=[edited])
    tighter = OSINTEnv(world=world, tasks=[task], max_observation_chars=2000, max_steps=6)
    # re-verified under the served observation budget; a tighter step budget is a harder evaluation
    assert tighter.tasks[0].stamp.budgets == Budgets(24, 4, 2000)


def test_cut_observations_stay_valid_json_and_say_what_was_cut(world):
    env = OSINTEnv(world=world, max_observation_chars=1000, difficulty="easy")
    env.reset(seed=0)
    big = '{"tool": "search_people", "args": {"name": "a", "limit": 20}}'
    cut_seen = False
    for action in (big, '{"tool": "get_user_posts", "args": {"account": "account_1", "limit": 20}}', BAD):
        obs = env.step(action)[0]
        data = json.loads(obs)
        assert len(obs) <= 1000 and data["step"] >= 1
        cut_seen |= "truncated" in data
    assert cut_seen


def test_tasks_verified_under_a_small_observation_budget_are_solved_under_it(world):
    budgets = Budgets(max_steps=24, max_parallel_calls=4, max_observation_chars=900)
    sampler = TaskSampler(world, 3, difficulty="hard", budgets=budgets)
    tasks = [sampler.sample(i) for i in range(15)]
    records = [
        run_episode(OSINTEnv(world=world, tasks=[t], max_observation_chars=900), OracleAgent(), seed=0) for t in tasks
    ]
    assert all(r.correct for r in records), [r.end for r in records]
    assert all(len(t.observation) <= 900 for r in records for t in r.turns)


def test_out_of_range_task_index_is_an_error_not_a_wrap(world):
    tasks = TaskSampler(world, 1).generate(3)
    env = OSINTEnv(world=world, tasks=tasks)
    assert env.reset(options={"task_index": 2})[1]["task_id"] == tasks[2].task_id
    with pytest.raises(ConfigError, match="task_index'] is 3, but this env has 3"):
        env.reset(options={"task_index": 3})


@pytest.mark.parametrize("extra", [{"seed": 3}, {"world_config": {}}, {"task_seed": 1}, {"tasks": []}])
def test_benchmark_refuses_what_it_would_override(extra):
    with pytest.raises(ConfigError, match="benchmark='v0:test' fixes the world"):
        OSINTEnv(benchmark="v0:test", **extra)


def test_async_vector_env_returns_what_sync_returns():
    actions = ['{"tool": "get_profile", "args": {"handle_or_id": "person_1"}}', BAD]
    out = {}
    for mode in ("async", "sync"):
        venv = gym.make_vec("OSINT-v0", num_envs=2, vectorization_mode=mode)
        obs, _ = venv.reset(seed=0)
        obs2 = venv.step(actions)[0]
        out[mode] = (tuple(obs), tuple(obs2))
        venv.close()
    assert out["async"] == out["sync"] and len(out["sync"][0][0]) < 16_384


def test_trl_adapter_tools_are_generated_from_the_tool_specs(world):
    methods = {n for n, _ in inspect.getmembers(OSINTToolEnv, predicate=inspect.isfunction) if not n.startswith("_")}
    assert methods - {"reset", "get_reward"} == set(TOOLS) | {s["function"]["name"] for s in CONTROL_SCHEMAS}
    for name, spec in TOOLS.items():
        params = list(inspect.signature(getattr(OSINTToolEnv, name)).parameters)[1:]
        assert params == list(spec.parameters["properties"]), name
        assert all(p in getattr(OSINTToolEnv, name).__doc__ for p in params)
    assert "relation" in inspect.signature(OSINTToolEnv.get_connections).parameters


def test_trl_adapter_reward_comes_from_the_env_record():
    from osint_gym.benchmark import benchmark_tasks
    from osint_gym.integrations.trl_env import task_rows

    row = task_rows(benchmark_tasks("v0:train", difficulty="easy", limit=1), split="v0:train")[0]
    tool_env = OSINTToolEnv()
    tool_env.reset(**row)
    tool_env.get_profile(handle_or_id="nobody_here")
    assert tool_env.get_reward() == pytest.approx(-0.02) == tool_env.env.episode().reward
    tool_env.answer(entity_id="person_0")
    assert tool_env.get_reward() == tool_env.env.episode().reward and tool_env.env.episode().ended


def test_record_read_back_from_its_dict_equals_the_record(world):
    """`EpisodeRecord.from_dict` reads `to_dict` back (osint-eval reads Inspect logs' records this way)."""
    from osint_gym.episode import EpisodeRecord

    env = OSINTEnv(world=world, max_steps=6)
    record = run_episode(env, OracleAgent(), seed=3, options={"difficulty": "medium"})
    again = EpisodeRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again == record and again.reward == record.reward and again.evidence == record.evidence
    with pytest.raises(KeyError):
        EpisodeRecord.from_dict({k: v for k, v in record.to_dict().items() if k != "breakdown"})
