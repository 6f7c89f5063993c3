"""The episode spec builds every driver's env, episode and opening conversation."""

from __future__ import annotations

import pytest

from osint_gym import chat
from osint_gym.agents import OracleAgent
from osint_gym.errors import ConfigError
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets, TaskSampler


@pytest.fixture(scope="module")
def task(world):
    return TaskSampler(world, 3).sample(0, difficulty="easy")


def test_one_env_per_task_played_from_the_same_opening(world, task):
    spec = EpisodeSpec(Budgets(max_steps=12, observation_format="compact"), "short")
    env = spec.make_env(world, task)
    assert env.max_steps == 12 and env.tasks == [task]
    observation, info = spec.reset(env)
    assert spec.reset(spec.make_env(world, task))[0] == observation and task.question in observation
    record = spec.play_one(env, OracleAgent("short"))
    assert record.correct and record.first_observation == observation and record.task == task
    records = spec.play([spec.make_env(world, task), spec.make_env(world, task)], OracleAgentBatch())
    assert [r.first_observation for r in records] == [observation] * 2 and all(r.correct for r in records)


class OracleAgentBatch:
    """The oracle per episode, as a `BatchAgent`."""

    def reset(self, index, env, observation, info):
        self.agents = getattr(self, "agents", {})
        self.agents[index] = OracleAgent()
        self.agents[index].reset(env, observation, info)

    def act(self, pending):
        return [self.agents[i].act(obs) for i, obs in pending]


@pytest.mark.parametrize("describe", [True, False])
def test_the_opening_follows_the_spec_in_both_formats(world, task, describe):
    spec = EpisodeSpec(action_format="short", describe_tools=describe)
    observation, info = spec.reset(spec.make_env(world, task))
    plain = spec.start_messages(observation, info)
    native = spec.start_messages(observation, info, native=True)
    system = [{"role": "system", "content": chat.SHORT_SYSTEM_PROMPT}] if describe else []
    assert plain == system + [{"role": "user", "content": observation}]
    assert native[-1] == plain[-1] and len(native) == len(plain)
    assert not describe or native[0]["content"] == chat.NATIVE_SYSTEM_PROMPT
    full = spec.start_messages(observation, info, full_schemas=True)
    assert ("Tool schemas:" in full[0]["content"]) is describe  # written into a plain system prompt only
    assert spec.start_messages(observation, info, native=True, full_schemas=True) == native  # the template lists them
    assert spec.template_kwargs(info, True) == {"tools": info["tools"]} and spec.template_kwargs(info, False) == {}


def test_a_played_episode_becomes_the_training_conversation(world, task):
    spec = EpisodeSpec(describe_tools=False)
    record = spec.play_one(spec.make_env(world, task), OracleAgent())
    conv = spec.conversation(record)
    assert conv[0] == {"role": "user", "content": record.first_observation}
    assert [m["content"] for m in conv if m["role"] == "assistant"] == [t.action for t in record.turns]
    assert len(conv) == 2 * len(record.turns)  # the last observation is not shown
    assert spec.conversation(record, native=True) == chat.native_messages(conv)


def test_a_bad_spec_is_a_clear_error():
    with pytest.raises(ConfigError, match="action_format must be one of"):
        EpisodeSpec(action_format="yaml")
    assert EpisodeSpec.from_dict(EpisodeSpec(Budgets(max_steps=5), "short", False).to_dict()) == EpisodeSpec(
        Budgets(max_steps=5), "short", False)
