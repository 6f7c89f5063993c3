"""Property-based fuzzing (hypothesis): env actions, parsers, config and task loaders.

Budgets are sized for CI; set OSINT_FUZZ_EXAMPLES (e.g. 5000) for a local soak run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osint_gym.actions import parse_action
from osint_gym.errors import ConfigError, LoaderError, TaskError
from osint_gym.proposals import parse_proposal, validate_proposal
from osint_gym.reward import RewardConfig
from osint_gym.single_turn import parse_answer
from osint_gym.tasks import Task
from osint_gym.tasks.kg import load_metaqa_qa
from osint_gym.world import WorldConfig
from osint_gym.world.loaders import load_metaqa_kb, load_tsv

pytestmark = pytest.mark.slow  # fuzzing: the full suite only

EXAMPLES = int(os.environ.get("OSINT_FUZZ_EXAMPLES", "150"))
PARSE_BOUND_S = 0.25  # one parse of any input, however hostile
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=30,
)
tool_names = st.sampled_from(
    ["get_profile", "search_posts", "get_connections", "answer", "add_edge", "search_people", "nope"]
)
call_like = st.fixed_dictionaries({"tool": tool_names, "args": json_values}) | st.fixed_dictionaries(
    {"name": tool_names, "arguments": json_values | st.text(max_size=60)})
actions = (
    st.text(max_size=400)
    | json_values.map(json.dumps)
    | call_like.map(json.dumps)
    | st.lists(call_like, max_size=6).map(lambda cs: json.dumps({"tool_calls": cs}))
    | call_like.map(lambda c: f"<tool_call>{json.dumps(c)}</tool_call>")
    | st.text(max_size=200).map(lambda t: t + json.dumps({"answer": t}))
    | st.integers(1, 6000).map(lambda n: "[" * n + "]" * n)
    | st.integers(1, 3000).map(lambda n: '{"a":' * n + "1" + "}" * n)
    | st.integers(1000, 40_000).map(lambda n: "x" * n)
    | st.text(
        alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)), max_size=300
    )
)


@pytest.fixture(scope="module")
def env():
    e = gym.make("OSINT-v0")
    e.reset(seed=0)
    return e


@FUZZ
@given(action=actions | json_values | call_like)
def test_env_step_never_raises_and_stays_in_its_spaces(env, action):
    obs, reward, terminated, truncated, info = env.step(action)
    assert env.observation_space.contains(obs)
    assert isinstance(reward, float) and -0.3 <= reward <= 1.5
    if terminated or truncated:
        env.reset(seed=1)


def _fastest(fn, text, repeats=3):
    """(result, the fastest of ``repeats`` timings): a hostile input is slow every time, while a
    scheduler or GC pause on a loaded 2-core machine hits one timing only."""
    best, result = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn(text)
        best = min(best, time.perf_counter() - t0)
    return result, best


@FUZZ
@given(action=actions)
def test_action_parsing_is_bounded_in_time(action):
    parsed, seconds = _fastest(parse_action, action)
    assert seconds < PARSE_BOUND_S
    assert parsed.ok or parsed.error


@FUZZ
@given(text=actions)
def test_answer_and_proposal_parsers_return_typed_results(text):
    a, answer_seconds = _fastest(parse_answer, text)
    p, proposal_seconds = _fastest(parse_proposal, text)
    assert answer_seconds + proposal_seconds < PARSE_BOUND_S
    assert a.answer is None or isinstance(a.answer, (str, list))
    assert isinstance(p, str) or p.question or p.refs  # a choose-mode proposal is a path number, no question


@FUZZ
@given(
    q=st.text(max_size=200),
    a=st.text(max_size=30),
    e=st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12), st.text(max_size=12)), max_size=6),
)
def test_proposal_validation_never_raises(q, a, e):
    from osint_gym.world.cache import cached_world

    world = cached_world(WorldConfig(), 0)
    text = f"Q: {q}\nA: {a}\nE: " + "; ".join(" ".join(x) for x in e)
    verdict, task = validate_proposal(world, parse_proposal(text))
    assert (task is None) != verdict.ok


def _accepts(cls, data):
    try:
        cls.from_dict(data)
    except ConfigError:
        return False
    return True


def _first_key_named(message, keys):
    """The key the message names first (the longest of those starting at the same place)."""
    found = [(message.find(k), -len(k), k) for k in keys if k in message]
    return min(found)[2] if found else None


def _assert_names_an_offending_key(message, cls, data):
    """One line, and the first key it names is one that the loader refuses on its own."""
    assert "\n" not in message, message
    offending = [k for k in data if not _accepts(cls, {k: data[k]})]
    keys = [*data, *(f.name for f in dataclasses.fields(cls))]
    assert _first_key_named(message, keys) in offending, (message, offending)


@FUZZ
@given(
    data=st.dictionaries(
        st.sampled_from(["n_people", "decoy_rate", "noise_level", "alias_density", "bogus", "n_peple"]),
        json_values,
        max_size=4,
    )
)
def test_world_config_loader_accepts_or_names_the_problem(data):
    try:
        cfg = WorldConfig.from_dict(data)
    except ConfigError as exc:
        _assert_names_an_offending_key(str(exc), WorldConfig, data)
    else:
        assert {k: getattr(cfg, k) for k in data} == data


@FUZZ
@given(
    data=st.dictionaries(
        st.sampled_from(["correct", "evidence_weight", "penalty_cap", "nope"]), json_values, max_size=3
    )
)
def test_reward_config_loader_accepts_or_names_the_problem(data):
    try:
        cfg = RewardConfig.from_dict(data)
    except ConfigError as exc:
        message = str(exc)
        if "correct - penalty_cap > evidence_weight" in message:  # the cross-field rule: about the values together
            values = {**dataclasses.asdict(RewardConfig()), **{k: float(v) for k, v in data.items()}}
            got = f"(got {values['correct']} - {values['penalty_cap']} <= {values['evidence_weight']})"
            assert "\n" not in message and got in message, message
        else:
            _assert_names_an_offending_key(message, RewardConfig, data)
    else:
        assert {k: getattr(cfg, k) for k in data} == data


@FUZZ
@given(row=json_values)
def test_task_rows_load_or_fail_with_task_error(row):
    try:
        task = Task.from_dict(row)
    except TaskError as exc:
        assert str(exc)
    else:
        assert task.answers and task.question


@FUZZ
@given(
    content=st.text(max_size=600)
    | st.lists(st.tuples(st.text(max_size=20), st.text(max_size=10), st.text(max_size=20)), max_size=20).map(
        lambda ts: "\n".join("|".join(t) for t in ts)
    )
)
def test_graph_and_qa_loaders_load_or_fail_with_loader_error(tmp_path_factory, content):
    folder = tmp_path_factory.mktemp("fuzz")
    for name, loader in (("kb.txt", load_metaqa_kb), ("g.tsv", load_tsv)):
        path = folder / name
        path.write_text(content, encoding="utf-8")
        try:
            world = loader(path)
        except LoaderError as exc:
            assert str(exc)
        else:
            assert len(world) > 0
    try:
        kb = load_metaqa_kb(folder / "kb.txt")
    except LoaderError:
        return
    qa = folder / "qa.txt"
    qa.write_text(content.replace("|", "\t", 1), encoding="utf-8")
    try:
        tasks, report = load_metaqa_qa(kb, qa, hops=1)
    except LoaderError as exc:
        assert str(exc)
    else:
        assert report.loaded == len(tasks)
