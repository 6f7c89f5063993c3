"""Difficulty knobs (hops, decoy_density, name_collision_rate): at reset, through gym.make, over the wire and
for the adapters' task lists; validated with one-line errors and deterministic per (seed, options)."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import osint_gym  # noqa: F401  (registers the ids)
from osint_gym.env import OSINTEnv
from osint_gym.errors import ConfigError
from osint_gym.integrations.serve.protocol import ServeSettings, SessionManager
from osint_gym.knobs import KNOBS, check_knobs, knob_tasks
from osint_gym.tasks import TaskSampler
from osint_gym.world import WorldConfig

OPTIONS = {"hops": 2, "decoy_density": 0.4, "name_collision_rate": 0.2}


def _first(env, seed, options):
    obs, info = env.reset(seed=seed, options=options)
    return obs, info["task_id"], env.unwrapped.task.query.n_hops, env.unwrapped.world.config


def test_reset_options_set_the_knobs_and_a_plain_reset_goes_home():
    env = gym.make("OSINT-v0")
    home = env.unwrapped.world
    obs, _, hops, config = _first(env, 3, OPTIONS)
    assert hops == 2 and (config.decoy_density, config.name_collision_rate) == (0.4, 0.2)
    assert env.unwrapped.world is not home and len(env.unwrapped.world.ids("person")) <= 200
    for h in range(1, 6):
        assert _first(env, 7, {"hops": h})[2] == h
    _first(env, 3, {})
    assert env.unwrapped.world is home and env.unwrapped.world.config == WorldConfig()


def test_the_same_seed_and_options_give_the_same_episode_in_any_env_and_process():
    a, b = gym.make("OSINT-v0"), gym.make("OSINT-v0")
    assert _first(a, 11, OPTIONS)[:2] == _first(b, 11, OPTIONS)[:2]
    assert _first(a, 11, OPTIONS)[:2] != _first(a, 11, {})[:2]
    code = ("import gymnasium as gym, osint_gym, json; env = gym.make('OSINT-v0'); "
            f"obs, info = env.reset(seed=11, options={OPTIONS!r}); print(json.dumps([obs, info['task_id']]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": ""}).stdout
    assert json.loads(out) == list(_first(a, 11, OPTIONS)[:2])


def test_gym_make_sets_every_resets_default_and_an_option_overrides_it():
    env = gym.make("OSINT-v0", hops=3, decoy_density=0.8)
    _, _, hops, config = _first(env, 5, None)
    assert hops == 3 and config.decoy_density == 0.8
    assert _first(env, 5, {"hops": 1})[2] == 1
    assert _first(env, 5, {"decoy_density": 0.0})[3].decoy_density == 0.0


@pytest.mark.parametrize(("options", "message"), [
    ({"hops": 0}, r"hops must be an integer in \[1, 5\] or None, got 0"),
    ({"hops": "2"}, "hops must be an integer"),
    ({"hops": 2, "difficulty": "easy"}, "hops=2 makes medium tasks, not easy ones"),
    ({"hops": 5, "family": "network_discovery"}, r"no task family \(network_discovery\) makes 5-hop hard tasks"),
    ({"decoy_density": 0.9}, r"reset option 'decoy_density' must be a number in \[0.0, 0.8\], got 0.9"),
    ({"name_collision_rate": True}, "reset option 'name_collision_rate' must be a number"),
    ({"hop": 1}, r"unknown reset option\(s\) \['hop'\]; known: task, task_index, family, difficulty, hops, "),
])
def test_bad_knobs_are_one_line_config_errors(options, message):
    env = gym.make("OSINT-v0")
    with pytest.raises(ConfigError, match=message) as info:
        env.reset(seed=0, options=options)
    assert "\n" not in str(info.value)


def test_a_fixed_world_takes_hops_but_not_the_world_knobs():
    env = gym.make("OSINT-v0", benchmark="v1:test")
    for _ in range(5):
        assert _first(env, None, {"hops": 2})[2] == 2
    with pytest.raises(ConfigError, match="this env's world is fixed"):
        env.reset(seed=0, options={"decoy_density": 0.3})
    with pytest.raises(ConfigError, match="this env's world is fixed"):
        OSINTEnv(benchmark="v1:test", name_collision_rate=0.3)
    with pytest.raises(ConfigError, match="argument 'decoy_density' must be a number"):
        OSINTEnv(decoy_density=-1)


def test_reset_frames_carry_the_knobs_and_bad_ones_are_validation_errors():
    manager = SessionManager(ServeSettings(benchmark=None, world_config={}, seed=0))
    session = manager.open(0.0)
    frame = {"type": "reset", "data": {"seed": 11, "options": OPTIONS}}
    reply, _ = session.handle(json.dumps(frame), 0.0)
    assert reply["data"]["observation"]["text"] == _first(gym.make("OSINT-v0"), 11, OPTIONS)[0]
    bad, _ = session.handle(json.dumps({"type": "reset", "data": {"options": {"hops": 9}}}), 0.0)
    assert bad["data"]["code"] == "VALIDATION_ERROR" and "hops must be an integer in [1, 5]" in bad["data"]["message"]
    fixed = SessionManager(ServeSettings(benchmark="v0:test")).open(0.0)
    refused, _ = fixed.handle(json.dumps({"type": "reset", "data": {"options": {"decoy_density": 0.2}}}), 0.0)
    assert refused["data"]["code"] == "VALIDATION_ERROR" and "world is fixed" in refused["data"]["message"]


def test_knob_tasks_sample_a_knobbed_world_or_filter_a_split():
    world, tasks, source = knob_tasks(None, seed=2, limit=6, hops=2, decoy_density=0.5)
    assert len(tasks) == 6 and {t.query.n_hops for t in tasks} == {2} and world.config.decoy_density == 0.5
    assert source == "sampled:seed=2:decoy_density=0.5,hops=2"
    assert [t.task_id for t in knob_tasks(None, seed=2, limit=6, hops=2, decoy_density=0.5)[1]] == \
        [t.task_id for t in tasks]
    _, split, ref = knob_tasks("v1:test", hops=1)
    assert ref == "v1:test" and split and {t.query.n_hops for t in split} == {1}
    assert knob_tasks(None, limit=3)[2] == "v0:test"
    with pytest.raises(ConfigError, match="fixes its world"):
        knob_tasks("v1:test", decoy_density=0.2)
    assert check_knobs({"hops": None, "other": 1}) == {} and set(KNOBS) == {"hops", "decoy_density",
                                                                            "name_collision_rate"}


def test_a_sampler_draws_only_from_the_families_that_walk_the_hops(world):
    sampler = TaskSampler(world, 0)
    assert {sampler.sample(i, hops=4).family for i in range(8)} == {"convoluted_trace"}
    assert sampler.families["deanonymization"].hop_counts("hard") == {2, 3}
    assert sampler.families["network_discovery"].hop_counts("easy") == {1}
