"""The short action syntax, the oracle in the compact format, and verification under the served format."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from osint_gym.actions import Call, parse_action, short_action
from osint_gym.agents import OracleAgent, read_observation, run_episode
from osint_gym.env import OSINTEnv
from osint_gym.errors import ConfigError
from osint_gym.tasks.oracle import run_oracle
from osint_gym.tasks.task import DEFAULT_BUDGETS, Budgets
from osint_gym.tasks.verify import verified, verify_task

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("get_profile account_164", [Call("get_profile", {"handle_or_id": "account_164"})]),
        (
            "get_profile person_7 person_43",
            [Call("get_profile", {"handle_or_id": "person_7"}), Call("get_profile", {"handle_or_id": "person_43"})],
        ),
        (
            'search_people name="Olga Becker" organization=org_16',
            [Call("search_people", {"name": "Olga Becker", "organization": "org_16"})],
        ),
        (
            'search_people name=" Olga Becker" organization= org_16 limit= 20',
            [Call("search_people", {"name": "Olga Becker", "organization": "org_16", "limit": 20})],
        ),
        ("search_people name=Olga Becker", [Call("search_people", {"name": "Olga Becker"})]),
        (
            "add_edge account_164 authored post_493",
            [Call("add_edge", {"src": "account_164", "rel": "authored", "dst": "post_493"})],
        ),
        ("add_edge src=a rel=knows dst=b", [Call("add_edge", {"src": "a", "rel": "knows", "dst": "b"})]),
        ("answer person_103", [Call("answer", {"entity_id": "person_103"})]),
        ("answer person_1 person_2", [Call("answer", {"entity_id": ["person_1", "person_2"]})]),
        ("get_user_posts @vera limit=5", [Call("get_user_posts", {"account": "@vera", "limit": 5})]),
        ("search_posts query=12", [Call("search_posts", {"query": "12"})]),  # a string parameter stays a string
        ('get_profile {"handle_or_id": "x"}', [Call("get_profile", {"handle_or_id": "x"})]),
        ('search_posts query="[1]"', [Call("search_posts", {"query": "[1]"})]),
        (
            "get_profile person_1\n\n  add_edge a knows b\nanswer person_1",
            [
                Call("get_profile", {"handle_or_id": "person_1"}),
                Call("add_edge", {"src": "a", "rel": "knows", "dst": "b"}),
                Call("answer", {"entity_id": "person_1"}),
            ],
        ),
    ],
)
def test_short_actions_parse_to_these_calls(text, calls):
    parsed = parse_action(text)
    assert parsed.ok, parsed.error
    assert list(parsed.calls) == calls


@pytest.mark.parametrize(("text", "message"), [
    ("get_profile person_1\nget_profle person_2", "line 2: unknown action 'get_profle'"),
    ("add_edge a knows", "add_edge takes src rel dst"),
    ('search_people name="unterminated', "line 1: unterminated"),
    ("get_profile x handle_or_id=y", "given both by position"),
    ("get_profile =x", "without a key"),
    ("get_profile {not json", "not valid JSON"),
])
def test_bad_short_actions_are_clear_parse_errors(text, message):
    parsed = parse_action(text)
    assert not parsed.ok and message in parsed.error and "\n" not in parsed.error


@pytest.mark.parametrize(("text", "call"), [
    ('{"tool": "get_profile", "args": {"handle_or_id": "@x"}}', Call("get_profile", {"handle_or_id": "@x"})),
    ("answer: person_12", Call("answer", {"entity_id": "person_12"})),
    ('<tool_call>{"name": "answer", "arguments": {"entity_id": "p"}}</tool_call>', Call("answer", {"entity_id": "p"})),
    ('I will call {"answer": "person_1"} now', Call("answer", {"entity_id": "person_1"})),
    ("final answer = person_3", Call("answer", {"entity_id": "person_3"})),
])
def test_existing_shapes_parse_as_before(text, call):
    parsed = parse_action(text)
    assert (parsed.ok, parsed.error, list(parsed.calls)) == (True, None, [call])


def test_short_action_writes_what_parse_action_reads():
    calls = [
        ("get_profile", {"handle_or_id": "person_7"}),
        ("get_profile", {"handle_or_id": "person_43"}),
        ("search_people", {"name": "Olga Becker", "organization": "org_16", "limit": 20}),
        ("add_edge", {"src": "account_164", "rel": "authored", "dst": "post_493"}),
        ("answer", {"entity_id": "person_103"}),
    ]
    text = short_action(calls)
    assert text.split("\n") == [
        "get_profile person_7 person_43",
        'search_people name=" Olga Becker" organization= org_16 limit= 20',
        "add_edge account_164 authored post_493",
        "answer person_103",
    ]
    assert [(c.name, c.args) for c in parse_action(text).calls] == calls


def test_a_bad_short_action_gets_the_same_error_observation_as_bad_json():
    for fmt in ("json", "compact"):
        env = OSINTEnv(seed=0, observation_format=fmt)
        env.reset(seed=1)
        obs, reward, terminated, _, info = env.step("get_profile nobody_999")
        assert info["action_error"].startswith("get_profile: ") or "no entity matches" in info["action_error"]
        same = env.step(json.dumps({"tool": "get_profile", "args": {"handle_or_id": "nobody_999"}}))[4]["action_error"]
        assert info["action_error"] == same and reward < 0 and not terminated
        assert read_observation(obs)["results"][0] == {"call": "get_profile", "ok": False, "error": same}


@pytest.mark.parametrize(("action_format", "message"), [
    ("json", 'no action found; send JSON such as {"tool": "get_profile", "args": {"handle_or_id": "@name"}} '
             'or {"answer": "<entity id>"}'),
    ("short", "no action found; write one call per line, such as get_profile @name or answer <entity id>"),
])
def test_prose_is_told_the_syntax_its_episode_asked_for(action_format, message):
    env = OSINTEnv(seed=0, action_format=action_format, observation_format="compact")
    env.reset(seed=1)
    info = env.step("The account is run by @vera_gallo.")[4]
    assert info["action_error"] == message
    # the example it is shown is itself an action that parses in that episode
    shown = message.split("such as ", 1)[1].split(" or ")[0]
    assert [c.name for c in parse_action(shown, action_format=action_format).calls] == ["get_profile"]
    # whatever the format, every shape still parses
    json_answer = parse_action('{"answer": "person_3"}', action_format="short")
    assert json_answer.calls == (Call("answer", {"entity_id": "person_3"}),)
    with pytest.raises(ConfigError, match=r"action_format must be one of \('json', 'short'\), got 'xml'"):
        parse_action("answer person_3", action_format="xml")


def test_the_default_json_rendering_is_unchanged():
    env = OSINTEnv(seed=0)
    first, _ = env.reset(seed=3)
    assert (
        "\nInvestigate with tools and answer with one entity id. "
        "Budget: 24 steps, up to 4 tool calls per step.\nActions: " in first
    )
    obs = env.step("get_profile person_1")[0]
    assert obs.startswith(
        '{"step":1,"steps_left":23,"results":[{"call":"get_profile","ok":true,"result":{"id":"person_1"'
    )
    assert Budgets().to_dict() == {"max_steps": 24, "max_parallel_calls": 4, "max_observation_chars": 16384}


def test_the_compact_reset_observation_is_the_question_budgets_and_tools():
    env = OSINTEnv(seed=0, observation_format="compact", max_steps=8)
    first, info = env.reset(seed=3)
    question, budget, tools = first.split("\n")
    assert question == env.task.question
    assert budget == "steps 8, calls per step 4, answer with one id"
    assert (
        tools.startswith("tools search_posts(query limit) ")
        and "search_people(name organization location limit)" in tools
    )
    assert len(first) < len(OSINTEnv(seed=0, max_steps=8).reset(seed=3)[0]) - 50
    step = env.step("get_profile person_1")[0]
    assert step.startswith("step 1/8\nget_profile ok\nperson person_1 name=")


def test_bad_formats_are_config_errors():
    with pytest.raises(ConfigError, match="observation_format"):
        OSINTEnv(seed=0, observation_format="yaml")
    with pytest.raises(ConfigError, match="action_format"):
        OracleAgent("xml")


@pytest.mark.parametrize(("fmt", "action_format"), [("compact", "short"), ("compact", "json"), ("json", "short")])
def test_the_oracle_solves_easy_medium_and_hard_tasks_in_every_format(fmt, action_format):
    env = OSINTEnv(benchmark="v0:dev", observation_format=fmt)
    records = [run_episode(env, OracleAgent(action_format), options={"difficulty": d, "task_index": i})
               for d in ("easy", "medium", "hard") for i in range(12)]
    assert all(r.correct for r in records), [r.task.task_id for r in records if not r.correct]
    assert all(r.invalid_actions == 0 for r in records)
    if action_format == "short":
        assert all(not t.action.startswith("{") for r in records for t in r.turns)
    if fmt == "compact":
        assert all(t.observation.startswith("step ") for r in records for t in r.turns)


def test_a_stamp_covers_only_its_observation_format(world):
    env = OSINTEnv(seed=0)
    env.reset(seed=5)
    task = env.task
    assert task.stamp is not None and task.stamp.budgets.observation_format == "json"
    compact = Budgets(observation_format="compact")
    assert not task.verified_for(task.stamp.world, compact)
    again = verified(env.world, task, compact)
    assert again.stamp.budgets == compact and again.verified_for(task.stamp.world, compact)
    assert not again.verified_for(task.stamp.world, DEFAULT_BUDGETS)
    assert again.stamp.budgets.to_dict()["observation_format"] == "compact"


def test_tasks_verified_for_compact_observations_are_solved_by_the_oracle_in_that_env():
    # a tight budget, where JSON cuts lose more than compact ones: what verification accepts the oracle solves
    env = OSINTEnv(seed=0, observation_format="compact", max_observation_chars=700)
    records = [run_episode(env, OracleAgent("short"), seed=i) for i in range(30)]
    assert all(r.correct for r in records)
    assert all(r.task.stamp.budgets.observation_format == "compact" for r in records)
    assert any("truncated:" in t.observation for r in records for t in r.turns)  # cuts happened and did no harm


def test_verification_follows_the_cut_of_the_served_format():
    from osint_gym.benchmark import benchmark_tasks, benchmark_world

    world = benchmark_world("v0:dev")
    tasks = list(benchmark_tasks("v0:dev"))[:150]
    ok = {f: {t.task_id for t in tasks if verify_task(world, t, max_observation_chars=1200, observation_format=f).ok}
          for f in ("json", "compact")}
    assert len(ok["compact"]) > len(ok["json"])  # the same facts fit in fewer characters
    for task in tasks:
        for fmt in ("json", "compact"):
            found = run_oracle(world, task.query, 24, 4, 1200, fmt)
            assert (found.answer in task.answers and len(found.found) == 1) == (task.task_id in ok[fmt])


def test_json_verification_is_unchanged_by_the_format_argument():
    from osint_gym.benchmark import benchmark_tasks, benchmark_world

    world = benchmark_world("v0:dev")
    for task in list(benchmark_tasks("v0:dev"))[:40]:
        assert run_oracle(world, task.query, 24, 4, 900) == run_oracle(world, task.query, 24, 4, 900, "json")


TOOLISH = st.sampled_from(["get_profile", "answer", "add_edge", "search_people", "get_user_posts", "search_posts"])


@FUZZ
@given(text=st.text(max_size=300) | st.builds(lambda n, r: f"{n} {r}", TOOLISH, st.text(max_size=200))
       | st.builds(lambda n, r, m: f"{n}{r}\n{m}", TOOLISH, st.text(max_size=80), st.text(max_size=80)))
def test_no_string_crashes_the_action_parser(text):
    t0 = time.perf_counter()
    parsed = parse_action(text)
    assert time.perf_counter() - t0 < 0.25
    assert parsed.ok == (parsed.error is None)
    assert parsed.ok or (isinstance(parsed.error, str) and parsed.error)
    assert all(isinstance(c, Call) and isinstance(c.name, str) for c in parsed.calls)


@FUZZ
@given(text=st.builds(lambda n, r: f"{n} {r}", TOOLISH, st.text(max_size=120)))
def test_no_short_action_crashes_the_env(text):
    env = OSINTEnv(seed=0, observation_format="compact", max_steps=3)
    env.reset(seed=0)
    obs, reward, *_ = env.step(text)
    assert obs.startswith("step 1/3\n") and -0.3 <= reward <= 1.5
    read_observation(obs)


def test_the_compact_env_passes_check_env_and_pickles():
    import pickle
    import warnings

    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("OSINT-v0", observation_format="compact")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    env.reset(seed=2)
    env.step("get_profile person_1")
    clone = pickle.loads(pickle.dumps(env))
    a, b = env.step("get_connections person_1"), clone.step("get_connections person_1")
    assert a[0] == b[0] and a[0].startswith("step 2/24\nget_connections ok\nconnections person_1 knows= ")
