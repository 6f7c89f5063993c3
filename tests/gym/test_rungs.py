"""Start depth (rungs, `osint_gym.rungs`): an episode that begins after the demonstrator's first k steps, played
through the env's own step, marked given in the record, scored on the agent's own steps; depth 0 is the episode it
always was, byte for byte; the prefix shows nothing the demonstrator's own calls did not return."""

from __future__ import annotations

import dataclasses
import json
import re

import gymnasium as gym
import pytest

from osint_gym.agents import OracleAgent, run_episode, unseen_ids
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.env import OSINTEnv
from osint_gym.errors import ConfigError, TaskError
from osint_gym.rungs import check_tasks
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets, Task, names_entity, world_fingerprint
from tests.gym.test_leakage import _secrets

SPEC = EpisodeSpec(Budgets(max_steps=8, max_observation_chars=4000, observation_format="compact"), "short", False)
ID = re.compile(r"\b(?:person|account|org|loc|event|post|thread)_\d+\b")


def _env(task, world, spec=SPEC, **kw):
    return OSINTEnv(world=world, tasks=[task], **{**spec.env_kwargs(), **kw})


def _rungs(ref="v1:test", n=40, spec=SPEC):
    """(world, task, demonstration) of the first ``n`` tasks of ``ref`` the demonstrator solves under ``spec``."""
    world, out = benchmark_world(ref), []
    for task in benchmark_tasks(ref):
        env = _env(task, world, spec)
        spec.reset(env)
        try:
            out.append((world, task, env.demonstration()))
        except TaskError:
            continue
        if len(out) == n:
            break
    return out


def test_depth_zero_is_the_episode_it_always_was_to_the_byte():
    world = benchmark_world("v1:test")
    for task in benchmark_tasks("v1:test")[:30]:
        plain, zero = _env(task, world), _env(task, world, start_depth=0)
        assert spec_reset(plain) == spec_reset(zero)
        a = run_episode(plain, OracleAgent("short", names_first=True), seed=0, options={"task_index": 0})
        b = run_episode(zero, OracleAgent("short", names_first=True), seed=0,
                        options={"task_index": 0, "start_depth": 0})
        assert a.to_dict() == b.to_dict() and "given_steps" not in a.to_dict()
        assert all("given" not in t for t in a.to_dict()["turns"])
    assert task.to_dict() == Task.from_dict(task.to_dict()).to_dict() and "start_depth" not in task.to_dict()


def spec_reset(env):
    obs, info = env.reset(seed=0, options={"task_index": 0})
    return obs, json.dumps(info, sort_keys=True, default=str)


def test_given_steps_are_real_steps_the_agent_does_not_pay_for():
    world, task, demo = next((w, t, d) for w, t, d in _rungs(n=40) if len(d) >= 4)
    k = len(demo) - 1
    env = _env(task, world)
    obs, info = env.reset(seed=0, options={"task_index": 0, "start_depth": k})
    assert info["start_depth"] == k and info["step"] == k and info["critical_steps"] == 0 and info["tool_calls"] == 0
    assert [t["action"] for t in info["given_turns"]] == list(demo[:k])
    assert obs.startswith(info["opening"] + "\n> " + demo[0])
    last, reward, terminated, _, end = env.step(demo[-1])  # the demonstrator's own answer step
    record = env.episode()
    assert terminated and record.correct and record.given_steps == k and record.critical_steps == 1
    assert [t.given for t in record.turns] == [True] * k + [False]
    assert record.tool_calls == 0 and end["critical_steps"] == 1
    whole = run_episode(_env(task, world), OracleAgent("short", names_first=True), seed=0, options={"task_index": 0})
    assert whole.critical_steps == len(demo) and record.breakdown.efficiency > whole.breakdown.efficiency
    # the budget is real: a wrong move after the given steps leaves max_steps - k - 1 steps
    env.reset(seed=0, options={"task_index": 0, "start_depth": k})
    assert env.step("get_profile nobody_at_all")[0].splitlines()[0] == f"step {k + 1}/8"


def test_gym_make_argument_reset_option_and_the_tasks_own_depth():
    env = gym.make("OSINT-v0", benchmark="v1:test", difficulty="medium", start_depth=1, observation_format="compact")
    obs, info = env.reset(seed=0)
    assert info["start_depth"] == 1 and len(info["given_turns"]) == 1 and "\n> " in obs
    obs, info = env.reset(seed=0, options={"start_depth": 0})  # the option wins over the argument
    assert "given_turns" not in info and "\n> " not in obs
    world, task, demo = _rungs(n=1)[0]
    rung = dataclasses.replace(task, start_depth=len(demo) - 1)
    assert Task.from_dict(rung.to_dict()) == rung and rung.to_dict()["start_depth"] == len(demo) - 1
    assert rung.content_digest("w", Budgets()) != task.content_digest("w", Budgets())
    _, info = _env(rung, world).reset(seed=0, options={"task_index": 0})  # a task's own depth is the default
    assert info["start_depth"] == len(demo) - 1
    _, info = _env(rung, world, start_depth=0).reset(seed=0, options={"task_index": 0})  # the argument wins
    assert "start_depth" not in info


def test_a_depth_out_of_range_or_a_task_without_a_plan_is_a_one_line_error():
    world, task, demo = _rungs(n=1)[0]
    env = _env(task, world)
    for bad in (len(demo), -1, 1.5, True, "2"):
        with pytest.raises(ConfigError, match=r"start_depth must be an integer in \[0, "):
            env.reset(seed=0, options={"task_index": 0, "start_depth": bad})
    with pytest.raises(ConfigError, match=r"start_depth must be an integer >= 0 or None"):
        OSINTEnv(benchmark="v1:test", start_depth=-2)
    with pytest.raises(TaskError, match="start_depth must be an integer >= 0"):
        dataclasses.replace(task, start_depth=-1)
    # a row without a query that carries a stamp (a task file's): the env serves it, but has no plan to give steps of
    bare = Task("row-1", task.question, task.answers, task.evidence, task.family, task.difficulty).stamped(
        world_fingerprint(world), SPEC.budgets)
    assert _env(bare, world).reset(seed=0, options={"task_index": 0})[0]  # depth 0 serves it
    with pytest.raises(ConfigError, match="needs a task with a structured query"):
        _env(bare, world).reset(seed=0, options={"task_index": 0, "start_depth": 1})
    with pytest.raises(ConfigError, match="action_format must be one of"):
        OSINTEnv(benchmark="v1:test", action_format="yaml")
    with pytest.raises(ConfigError, match=r"start_depth must be an integer in \[0, "):
        check_tasks(lambda t: _env(t, world, start_depth=0), [task], len(demo))


@pytest.mark.parametrize("refs", [("v1:test", "v0:dev"), pytest.param(("v2:test", "v2:hard"), marks=pytest.mark.slow)])
def test_the_prefix_shows_only_what_the_demonstrators_own_calls_returned(refs):
    """Over every rung of 120 tasks: each given observation is the tool output a fresh env returns for that action,
    no given action uses an id the agent had not seen, the opening names no secret (the answer, a hidden evidence
    entity), and a given action names a secret only after an earlier given observation returned it: every secret the
    reset observation shows, a call returned."""
    checked = 0
    for world, task, demo in _rungs(refs[0], n=60) + _rungs(refs[1], n=60):
        secrets = _secrets(task)
        replay = _env(task, world)
        SPEC.reset(replay)
        returned = [replay.step(action)[0] for action in demo[:-1]]
        for k in range(1, len(demo)):
            env = _env(task, world)
            obs, info = env.reset(seed=0, options={"task_index": 0, "start_depth": k})
            given = info["given_turns"]
            assert [g["observation"] for g in given] == returned[:k]  # real tool outputs, nothing added
            assert obs == rungs_text(info)  # and the reset observation is the opening and those turns
            assert unseen_ids(env.episode()) == []  # every given action uses ids the agent had seen
            assert not any(names_entity(world, info["opening"], s) for s in secrets), task.task_id
            for j, g in enumerate(given):
                for secret in secrets:
                    if names_entity(world, g["action"], secret):  # typed only once a call had returned it
                        assert any(names_entity(world, e["observation"], secret) for e in given[:j]), (task, secret)
            for secret in secrets:
                if names_entity(world, obs, secret):
                    assert any(names_entity(world, g["observation"], secret) for g in given), (task.task_id, secret)
            checked += 1
    assert checked >= 300


def rungs_text(info):
    from osint_gym.episode import Turn
    from osint_gym.rungs import given_text
    from osint_gym.text import fit_text

    turns = [Turn(g["action"], g["observation"], 0.0, None, given=True) for g in info["given_turns"]]
    return fit_text(given_text(info["opening"], turns), SPEC.budgets.max_observation_chars)


def test_the_spec_builds_the_given_turns_into_every_drivers_conversation():
    world, task, demo = _rungs(n=1)[0]
    env = SPEC.make_env(world, task)
    obs, info = env.reset(seed=0, options={"task_index": 0, "start_depth": len(demo) - 1})
    messages = SPEC.start_messages(obs, info)
    assert [m["role"] for m in messages] == ["user"] + ["assistant", "user"] * (len(demo) - 1)
    assert messages[0]["content"] == info["opening"] and [m["content"] for m in messages[1::2]] == list(demo[:-1])
    env.step(demo[-1])
    conversation = SPEC.conversation(env.episode())
    assert conversation[: len(messages)] == messages and conversation[-1]["content"] == demo[-1]


def test_the_trl_adapter_takes_a_depth_and_a_rows_column():
    from osint_gym.integrations.trl_env import OSINTToolEnv, task_rows

    tasks = benchmark_tasks("v0:dev", difficulty="medium", limit=2)
    plain = OSINTToolEnv().reset(**task_rows(tasks, split="v0:dev")[0])
    deep = OSINTToolEnv(start_depth=1)
    obs = deep.reset(**task_rows(tasks, split="v0:dev")[0])
    assert obs.startswith(plain + "\n> ") and deep.env.episode().given_steps == 1
    row = task_rows(tasks, split="v0:dev", start_depth=0)[0]
    assert row["start_depth"] == 0 and deep.reset(**row) == plain  # the row's column wins


# ---------------------------------------------------------------------------- the generator's rungs
@pytest.fixture(scope="module")
def rung_offers():
    from osint_gym import proposals as P

    world = benchmark_world("v2:dev")
    return world, [P.make_offer(world, 3, i, mode="choose", max_hops=3, filters=True, choices=4,
                                rungs=SPEC.budgets) for i in range(8)]


def test_an_offer_with_rungs_shows_each_paths_demonstration_length(rung_offers):
    from osint_gym import proposals as P
    from osint_gym.offers import choice_task

    world, offers = rung_offers
    for offer in offers:
        assert P.Offer.from_json(offer.to_json()) == offer and len(offer.steps) == len(offer.choices)
        user = P.generator_messages(world, offer)
        assert user[0]["content"] == P.RUNG_SYSTEM_PROMPT
        for k, steps in enumerate(offer.steps, 1):
            assert f" ({steps} steps)" in user[1]["content"].splitlines()[k]
            env = _env(choice_task(world, offer, k), world)
            SPEC.reset(env)
            assert len(env.demonstration()) == steps  # what the env plays at that rung
    plain = P.make_offer(world, 3, 0, mode="choose", max_hops=3, filters=True, choices=4)
    assert plain.steps == () and "steps" not in plain.to_json()  # without rungs the offer is as it was


def test_a_proposal_names_a_path_and_the_steps_the_answerer_plays(rung_offers):
    from osint_gym import proposals as P
    from osint_gym.tasks import FailureReason

    world, offers = rung_offers
    offer = offers[0]
    steps = offer.steps[0]
    for left in range(1, steps + 1):
        verdict, task = P.validate_proposal(world, P.parse_proposal(f"P: 1 {left}"), offer=offer, max_hops=3)
        assert verdict.ok and task.start_depth == steps - left and task.provenance["demonstration_steps"] == steps
        assert task.stamp is not None and task.verified_for(task.stamp.world, task.stamp.budgets)
        _, info = _env(task, world).reset(seed=0, options={"task_index": 0})  # the rung the proposal named
        assert info.get("start_depth", 0) == steps - left
    verdict, task = P.validate_proposal(world, P.parse_proposal("P: 1"), offer=offer, max_hops=3)
    assert verdict.ok and task.start_depth == 0  # no steps named: the whole episode
    for text, reason in ((f"P: 1 {steps + 1}", FailureReason.OUT_OF_RANGE), ("P: 1 0", FailureReason.OUT_OF_RANGE),
                         ("P: 1 2 3", FailureReason.MALFORMED)):
        verdict, task = P.validate_proposal(world, P.parse_proposal(text), offer=offer, max_hops=3)
        assert verdict.reason is reason and task is None, text
    gold = P.gold_proposal(world, offer)
    assert P.validate_proposal(world, P.parse_proposal(gold), offer=offer, max_hops=3)[0].ok
    assert len(P.parse_proposal(gold).refs) == 2


def test_rungs_of_one_question_are_not_duplicates():
    from osint_gym.tasks import DuplicateFilter, task_signature

    world, task, demo = _rungs(n=1)[0]
    deeper = dataclasses.replace(task, start_depth=1)
    assert task_signature(task) != task_signature(deeper)
    seen = DuplicateFilter(jaccard=0.9)
    assert seen.admit(task) and seen.admit(deeper) and not seen.admit(dataclasses.replace(task))


def test_a_rung_served_as_a_hint_shows_the_steps_and_leaves_every_one_to_the_agent():
    world, task, demo = next((w, t, d) for w, t, d in _rungs(n=20) if len(d) >= 3)
    spec = EpisodeSpec(SPEC.budgets, "short", False, rung_mode="hint")
    env = spec.make_env(world, dataclasses.replace(task, start_depth=2))
    obs, info = spec.reset(env)
    assert obs == info.get("opening", task.question) + f"\nhint> {demo[0]}\nhint> {demo[1]}"
    assert info["hints"] == list(demo[:2]) and info["step"] == 0 and "given_turns" not in info
    assert spec.start_messages(obs, info) == [{"role": "user", "content": obs}]  # the hint is part of the question
    for action in demo:
        env.step(action)
    record = env.episode()
    assert record.correct and record.given_steps == 0 and record.critical_steps == len(demo)
    with pytest.raises(ConfigError, match="rung_mode must be one of"):
        EpisodeSpec(rung_mode="whisper")
