"""Bad input outside the env gets a typed one-line error: config ranges, seeds, TOML decoding, benchmark filters."""

from __future__ import annotations

import dataclasses
import math
import re

import gymnasium as gym
import pytest

import osint_gym
from osint_gym import RewardConfig, TaskSampler, WorldConfig, generate_world
from osint_gym.errors import ConfigError
from osint_gym.world.cache import cached_world

NUMERIC_FIELDS = [f.name for f in dataclasses.fields(WorldConfig) if f.name != "n_people"]


@pytest.mark.parametrize("name", NUMERIC_FIELDS)
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e300])
def test_world_config_rejects_inf_nan_and_huge_values_by_name(name, value):
    lo, hi = next(f for f in dataclasses.fields(WorldConfig) if f.name == name).metadata["range"]
    with pytest.raises(ConfigError, match=rf"^WorldConfig\.{name} must be in \[{lo}, {hi}\] \(a finite number\), got "):
        WorldConfig(**{name: value})


@pytest.mark.parametrize("value", [10**12, 3, 10.0, math.inf, True])
def test_world_config_rejects_out_of_range_people_counts(value):
    with pytest.raises(ConfigError, match=r"n_people must be an integer >= 4 and <= 1_000_000"):
        WorldConfig(n_people=value)


def test_world_config_range_bounds_are_inclusive_and_finite():
    for f in dataclasses.fields(WorldConfig):
        lo, hi = f.metadata["range"]
        assert math.isfinite(lo) and math.isfinite(hi) and lo < hi
    assert WorldConfig(knows_per_person=100.0, n_people=4).knows_per_person == 100.0


def test_world_config_from_a_non_utf8_toml_file_names_the_file(tmp_path):
    path = tmp_path / "world.toml"
    path.write_bytes(b"[world]\nn_people = 10\n# caf\xe9\n")
    with pytest.raises(
        ConfigError,
        match=rf"^{re.escape(str(path))}: world config is not UTF-8 text \(invalid continuation byte at byte 27\)$",
    ):
        WorldConfig.from_toml(str(path))


def test_world_config_from_toml_with_inf_is_a_config_error(tmp_path):
    path = tmp_path / "world.toml"
    path.write_text("[world]\nposts_per_account = inf\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"WorldConfig\.posts_per_account must be in \[0\.0, 100\.0\]"):
        WorldConfig.from_toml(str(path))


@pytest.mark.parametrize(
    "build",
    [
        lambda: generate_world(WorldConfig(n_people=10), seed=[1]),
        lambda: cached_world(WorldConfig(n_people=10), [1]),
        lambda: gym.make("OSINT-v0", seed=[1]),
    ],
    ids=["generate_world", "cached_world", "gym.make"],
)
def test_a_list_seed_is_a_config_error(build):
    with pytest.raises(ConfigError, match=r"world seed must be an integer, got \[1\]"):
        build()


def test_a_task_seed_that_is_not_an_integer_is_a_config_error(clean_world):
    with pytest.raises(ConfigError, match=r"task seed must be an integer, got \[1\]"):
        TaskSampler(clean_world, seed=[1])


def test_cached_world_needs_a_world_config():
    with pytest.raises(ConfigError, match="world_config must be a WorldConfig, got dict"):
        cached_world({"n_people": 10}, 0)


@pytest.mark.parametrize("value", [math.inf, math.nan, -1.0])
def test_reward_config_rejects_non_finite_values(value):
    with pytest.raises(ConfigError, match=r"RewardConfig\.correct must be a number >= 0 and finite"):
        RewardConfig(correct=value)


def test_the_benchmark_module_is_not_shadowed_and_to_hf_dataset_takes_an_id():
    import osint_gym.benchmark as module

    assert osint_gym.benchmark is module
    ds = osint_gym.benchmark.to_hf_dataset("v0:dev")
    assert ds.num_rows == 1000 and ds[0]["task_id"] == osint_gym.benchmark_tasks("v0:dev")[0].task_id


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"family": "nope"}, r"unknown task family 'nope'; known: identity_resolution, "),
        ({"difficulty": "extreme"}, r"difficulty must be one of \('easy', 'medium', 'hard'\) or None, got 'extreme'"),
        ({"family": "convoluted_trace", "difficulty": "easy"},
         r"benchmark 'v0:dev' has no task with family='convoluted_trace', difficulty='easy'"),
        ({"limit": -1}, r"limit must be an integer >= 0 or None, got -1"),
    ],
)
def test_benchmark_filters_raise_instead_of_returning_nothing(filters, message):
    with pytest.raises(ConfigError, match=message):
        osint_gym.benchmark_tasks("v0:dev", **filters)


def test_benchmark_filters_match_the_env_reset_errors():
    env = gym.make("OSINT-v0", benchmark="v0:dev")
    for bad in ({"difficulty": "extreme"}, {"family": "nope"}):
        with pytest.raises(ConfigError):
            osint_gym.benchmark_tasks("v0:dev", **bad)
        with pytest.raises(ConfigError):
            env.reset(options=bad)
    assert osint_gym.benchmark_tasks("v0:dev", limit=0) == []
    easy = osint_gym.benchmark_tasks("v0:dev", family="event_tracing", difficulty="easy")
    assert easy and {(t.family, t.difficulty) for t in easy} == {("event_tracing", "easy")}
