"""The verifiers environment (`osint_gym.integrations.verifiers_env`): driven through verifiers' own rollout
machinery by a scripted OpenAI-compatible server (oracle replay, wrong answers, attacks, random probes) and by `vf-eval`
against a real ``transformers serve`` of a tiny model; scores equal the env's, episode by episode."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import osint_gym
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.env import OSINTEnv
from osint_gym.tasks import names_entity
from tests.adapters.attacks import ATTACKS, attack_policy
from tests.adapters.scripted_openai import GARBAGE, MALFORMED, MISSING_TOOL, ONE_LINE_ERRORS, scripted_server
from tests.gym.test_exploits import _episode
from tests.gym.test_leakage import _outside_results, _random_action, _secrets

pytestmark = pytest.mark.adapters

SPLIT = "v0:test"
ID = re.compile(r"\b(?:person|account|org|loc|event|post|thread)_\d+\b")


def run_adapter(script, **load_kwargs):
    """Every task of ``load_environment(**load_kwargs)`` played once by ``script`` (served on loopback)
    through verifiers' episode machinery; returns ``(tasks, traces, server)`` in task order."""
    import verifiers.v1 as vf

    from osint_gym import load_environment

    env = load_environment(**load_kwargs)
    tasks = list(env.taskset)
    with scripted_server(script) as (url, server):
        ctx = vf.ModelContext(
            model="scripted", client=vf.EvalClientConfig(base_url=url, api_key_var="OSINT_SCRIPTED_KEY")
        )

        async def play():
            async with env.serving():
                return await asyncio.gather(*(env.run_episode(t, ctx) for t in tasks))

        episodes = asyncio.run(play())
    traces = []
    for ep in episodes:
        assert ep.ok and len(ep.traces) == 1, [e.message for e in ep.errors] + [
            e.message for t in ep.traces for e in t.errors
        ]
        assert not ep.traces[0].errors, [e.message for e in ep.traces[0].errors]
        traces.append(ep.traces[0])
    return tasks, traces, server


def task_of(messages, tasks):
    """The benchmark task a conversation is about (its first user message is the env's reset observation)."""
    first = messages[1]["content"]
    found = [t for t in tasks if t.question in first]
    assert len(found) == 1, first[:200]
    return found[0]


def turn_of(messages):
    return sum(m["role"] == "assistant" for m in messages)


def in_process(task, actions_for, max_steps=24):
    """The reward the env gives ``actions_for(core, obs, turn)`` on ``task``, in process (test_exploits' loop)."""
    env = OSINTEnv(world=benchmark_world(SPLIT), tasks=[task], max_steps=max_steps)
    return _episode(env, actions_for, 0)


def test_import_osint_gym_leaves_verifiers_unimported_and_lists_the_plugin():
    code = ("import sys, osint_gym; assert 'verifiers' not in sys.modules, 'imported'; "
            "print(sorted(set(osint_gym.__all__) & {'OSINTTaskset', 'OSINTHarness', 'OSINTVerifiersEnv'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['OSINTHarness', 'OSINTTaskset', 'OSINTVerifiersEnv']"
    import verifiers.v1 as vf

    from osint_gym.integrations.verifiers_env import OSINTHarness, OSINTTaskset, OSINTVerifiersEnv

    assert vf.environment_class("osint-gym") is OSINTVerifiersEnv
    assert vf.default_harness_id("osint-gym") == "osint-gym"
    from verifiers.v1.utils.loaders import harness_class, taskset_class

    assert taskset_class("osint-gym") is OSINTTaskset and harness_class("osint-gym") is OSINTHarness


def test_oracle_replay_scores_exactly_what_osint_eval_oracle_scores():
    from osint_eval.policies import OraclePolicy
    from osint_eval.runner import run_multi_turn

    tasks = benchmark_tasks(SPLIT, limit=50)
    oracle = {r.task_id: r for r in run_multi_turn(OraclePolicy(), benchmark_world(SPLIT), tasks)}
    plans = {r.task_id: [t["action"] for t in r.transcript] for r in oracle.values()}
    played, traces, _ = run_adapter(lambda m: plans[task_of(m, tasks).task_id][turn_of(m)], limit=50)
    assert [t.data.id for t in played] == [t.task_id for t in tasks]
    for task, trace in zip(played, traces):
        want = oracle[task.data.id]
        assert trace.rewards["osint_reward"].score == want.reward, task.data.id
        assert trace.metrics["correct"] == float(want.correct)
        assert trace.metrics["evidence_f1"] == want.evidence_f1
        assert trace.metrics["critical_steps"] == want.steps and trace.metrics["tool_calls"] == want.tool_calls
        assert trace.info["osint_episode"]["breakdown"] == want.breakdown
    assert sum(t.metrics["correct"] for t in traces) == sum(r.correct for r in oracle.values()) >= 45


def test_the_knobs_sample_tasks_on_a_knobbed_world_and_the_oracle_replays_them():
    from osint_eval.policies import OraclePolicy
    from osint_eval.runner import run_multi_turn
    from osint_gym.knobs import knob_tasks

    knobs = {"hops": 2, "decoy_density": 0.5, "name_collision_rate": 0.2}
    world, tasks, source = knob_tasks(None, seed=4, limit=6, **knobs)
    oracle = {r.task_id: r for r in run_multi_turn(OraclePolicy(), world, tasks)}
    plans = {r.task_id: [t["action"] for t in r.transcript] for r in oracle.values()}
    played, traces, _ = run_adapter(lambda m: plans[task_of(m, tasks).task_id][turn_of(m)], limit=6, seed=4,
                                    **knobs)
    assert [t.data.id for t in played] == [t.task_id for t in tasks] and {t.data.split for t in played} == {source}
    assert all(t.data.world_config["decoy_density"] == 0.5 for t in played)
    for task, trace in zip(played, traces):
        assert trace.rewards["osint_reward"].score == oracle[task.data.id].reward
    from osint_gym import load_environment
    from osint_gym.errors import ConfigError

    for bad, needle in (({"hops": 9}, "hops must be an integer in [1, 5]"),
                        ({"split": "v1:test", "decoy_density": 0.3}, "fixes its world")):
        with pytest.raises(ConfigError) as err:
            load_environment(**bad)
        assert needle in str(err.value) and "\n" not in str(err.value)


def _wrong(task):
    world = benchmark_world(SPLIT)
    return next(e for e in world.ids(task.answer_type) if e not in task.answers)


def test_a_scripted_wrong_answer_scores_what_the_env_scores_it():
    tasks = benchmark_tasks(SPLIT, limit=8)

    def script(messages):
        task = task_of(messages, tasks)
        return json.dumps({"tool": "get_profile", "args": {"handle_or_id": _wrong(task)}}) if turn_of(messages) == 0 \
            else json.dumps({"answer": _wrong(task)})

    _, traces, _ = run_adapter(script, limit=8)
    for task, trace in zip(tasks, traces):
        def act(core, obs, turn, task=task):
            return json.dumps({"tool": "get_profile", "args": {"handle_or_id": _wrong(task)}}) if turn == 0 \
                else json.dumps({"answer": _wrong(task)})

        assert trace.rewards["osint_reward"].score == in_process(task, act)
        assert trace.metrics["correct"] == 0.0 and trace.metrics["answered"] == 1.0
        assert trace.info["osint_episode"]["answer"] == _wrong(task)


@pytest.mark.parametrize("served", ["served_tiny", "served_smollm2"], ids=["tiny", "smollm2"])
def test_vf_eval_runs_against_a_real_local_server_and_scores_every_rollout(served, request, tmp_path):
    """The `vf-eval` CLI, offline, against `transformers serve` of a local model (the tiny one, or
    SmolLM2-135M-Instruct): neither solves a task in 2 turns, and every rollout still ends within the env's step
    budget with the env's score."""
    base_url, model = request.getfixturevalue(served)
    exe = Path(sys.executable).with_name("vf-eval")
    cmd = [str(exe), "osint-gym", "-m", model, "--client.base-url", base_url, "--client.api-key-var", "OSINT_TEST_KEY",
           "--env.taskset.split", SPLIT, "--env.taskset.max-turns", "2", "-n", "2", "-r", "2", "--no-push", "--no-rich",
           "--sampling.max-tokens", "16", "-o", str(tmp_path), "--run.name", "tiny"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    traces = [json.loads(line) for line in (tmp_path / "tiny" / "traces.jsonl").read_text().splitlines()]
    traces = [t for ep in traces for t in ep.get("traces", [ep])]
    assert len(traces) == 4
    tasks = {t.task_id: t for t in benchmark_tasks(SPLIT, limit=2)}
    for trace in traces:
        assert trace["ok"] and not trace["errors"], trace["errors"]
        record = trace["info"]["osint_episode"]
        assert record["task"]["task_id"] in tasks and record["end"] in ("answered", "step_budget")
        assert trace["rewards"]["osint_reward"]["score"] == record["reward"]
        assert trace["metrics"]["correct"] == float(record["correct"]) == 0.0
        assert 1 <= len(record["turns"]) <= 2  # the model spoke, and the env budget ended it


def test_nothing_the_model_is_shown_before_answering_names_the_gold():
    tasks = benchmark_tasks(SPLIT, limit=26)
    world = benchmark_world(SPLIT)

    def script(messages):
        task, turn = task_of(messages, tasks), turn_of(messages)
        seen = [i for m in messages[2:] if m["role"] != "assistant" for i in ID.findall(m["content"] or "")]
        rng = np.random.default_rng([tasks.index(task), turn])
        return _random_action(rng, world, seen)

    _, traces, server = run_adapter(script, limit=26, max_turns=6)
    assert len(server.requests) >= 26 * 5
    for messages in server.requests:
        secrets = _secrets(task_of(messages, tasks))
        assert not any(names_entity(world, messages[1]["content"], s) for s in secrets)
        said = ""
        for m in messages[2:]:
            if m["role"] == "assistant":
                said += json.dumps(m)
                continue
            visible = _outside_results(m["content"])
            for secret in secrets:
                if secret in visible:
                    assert secret in said, (secret, visible[:300])  # only ever the model's own echo


def test_unknown_split_is_one_line_error(tmp_path):
    from osint_gym import load_environment
    from osint_gym.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        load_environment(split="v0:nope")
    assert "unknown split 'nope'" in str(err.value) and "\n" not in str(err.value)
    exe = Path(sys.executable).with_name("vf-eval")
    done = subprocess.run(
        [str(exe), "osint-gym", "--env.taskset.split", "v0:nope", "--no-push", "--no-rich", "-m", "x"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    shown = done.stderr + done.stdout
    assert done.returncode == 1 and "Traceback" not in shown
    (line,) = [line for line in shown.splitlines() if "unknown split" in line]  # in vf-eval's config-error box
    assert "unknown split 'nope' of benchmark 'v0'; known: train, dev, test" in line, shown
    assert not list(tmp_path.iterdir())  # refused before any run directory was written


def test_a_missing_tool_or_malformed_arguments_get_the_env_error_observation():
    tasks = benchmark_tasks(SPLIT, limit=2)
    turns = [MISSING_TOOL, MALFORMED, GARBAGE, json.dumps({"answer": "person_0"})]
    _, traces, server = run_adapter(lambda m: turns[turn_of(m)], limit=2)
    env = OSINTEnv(world=benchmark_world(SPLIT), tasks=[tasks[0]])
    env.reset(seed=0, options={"task_index": 0})
    expected = [env.step(json.dumps({"tool_calls": [t["tool_calls"][0]["function"]]}))[0] for t in turns[:2]]
    expected.append(env.step(turns[2])[0])
    last = next(m for m in server.requests if turn_of(m) == 3 and tasks[0].question in m[1]["content"])
    shown = [m["content"] for m in last[2:] if m["role"] != "assistant"]
    assert shown == expected
    for observation, needle in zip(shown, ONE_LINE_ERRORS):  # the env's error, one line, naming the problem
        assert "\n" not in observation and needle in json.loads(observation)["error"], observation
    assert traces[0].metrics["invalid_actions"] + traces[0].metrics["parse_failures"] >= 3
    assert traces[0].rewards["osint_reward"].score == env.step(turns[3])[1] + sum(
        t["reward"] for t in traces[0].info["osint_episode"]["turns"][:3])


@pytest.mark.parametrize("attack", ATTACKS)
def test_exploit_policies_score_no_more_through_the_adapter_than_in_process(attack):
    tasks = benchmark_tasks(SPLIT, limit=10)
    act = attack_policy(attack)
    cores = {}
    for t in tasks:
        cores[t.task_id] = OSINTEnv(world=benchmark_world(SPLIT), tasks=[t], max_steps=12)
        cores[t.task_id].reset(seed=0)

    def script(messages):
        return act(cores[task_of(messages, tasks).task_id], None, turn_of(messages))

    _, traces, _ = run_adapter(script, limit=10, max_turns=12)
    for task, trace in zip(tasks, traces):
        assert trace.rewards["osint_reward"].score == in_process(task, act, max_steps=12), (attack, task.task_id)
        assert trace.metrics["correct"] == 0.0


def test_the_old_path_is_this_module_with_a_future_warning():
    """``osint_gym.verifiers_env`` (the path before the integrations moved) imports as the same module."""
    code = ("import warnings\nimport osint_gym.integrations.verifiers_env as new\n"
            "with warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
            "    import osint_gym.verifiers_env as old\n"
            "print(old is new, [str(w.message) for w in caught if w.category is FutureWarning])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    same, warned = out.split(" ", 1)
    assert same == "True" and warned.count("osint_gym.integrations.verifiers_env") == 1, out
    from osint_gym.integrations import verifiers_env

    assert osint_gym.load_environment is verifiers_env.load_environment  # the package's lazy export, from the new path
