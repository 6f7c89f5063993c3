"""OSINT-v0 through Inspect AI (`osint_gym.integrations.inspect_task`) and its logs read back by osint-eval
(`osint_eval.inspect_log`). Inspect is imported inside the tests: the default test env lacks it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from osint_gym.actions import parse_action
from osint_gym.benchmark import benchmark_tasks, benchmark_world
from osint_gym.env import OSINTEnv
from tests.adapters.attacks import ATTACKS, attack_policy
from tests.adapters.scripted_openai import GARBAGE, MALFORMED, MISSING_TOOL, ONE_LINE_ERRORS, scripted_server
from tests.gym.test_exploits import _episode
from tests.gym.test_leakage import _outside_results, _random_action, _secrets

pytestmark = pytest.mark.adapters

N_ORACLE = 50
WRONG = "person_0"


# ---------------------------------------------------------------------------- a scripted Inspect model
def _calls(action):
    """A text action as Inspect tool calls ``[(name, arguments)]``; None: a turn of plain text."""
    parsed = parse_action(action)
    return [(c.name, c.args) for c in parsed.calls] if isinstance(action, str) and parsed.ok else None


def _env_action(turn):
    """What the Inspect session sends the env for a scripted turn (`EpisodeSession.take_turn`)."""
    return [{"name": n, "arguments": a} for n, a in turn] if isinstance(turn, list) else turn


def scripted_model(script):
    """mockllm whose outputs replay ``script[question]``: per turn a list of tool calls, a text, or a
    function called at that turn that returns one of them (or raises: a crashing sample)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import ToolCall

    def outputs(messages, tools, tool_choice, config):
        question = next(m.text for m in messages if m.role == "user")
        turns = script[question]
        turn = turns[min(sum(m.role == "assistant" for m in messages), len(turns) - 1)]
        if callable(turn):
            turn = turn()  # a turn computed (or a crash raised) when the model is called
        if isinstance(turn, str):
            out = ModelOutput.from_content("mockllm/model", turn)
        else:
            out = ModelOutput.for_tool_call("mockllm/model", turn[0][0], turn[0][1], tool_call_id="c0")
            out.message.tool_calls += [
                ToolCall(id=f"c{i}", function=n, arguments=a) for i, (n, a) in enumerate(turn[1:], 1)
            ]
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return out

    return get_model("mockllm/model", custom_outputs=outputs)


def run_inspect(script, log_dir, model=None, **task_args):
    from inspect_ai import eval as inspect_eval

    from osint_gym.integrations.inspect_task import osint_v0
    from osint_gym.integrations.inspect_tools import SESSIONS

    model = model or scripted_model(script)
    (log,) = inspect_eval(osint_v0(**task_args), model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    assert not SESSIONS  # every sample's env was dropped
    return log


def scores_by_id(log):
    return {s.id: s.scores["osint_scorer"] for s in log.samples}


def in_process(task, turns, **budgets):
    """The env's own record of the same turns, played in process."""
    env = OSINTEnv(world=benchmark_world("v0:test"), tasks=[task], describe_tools=False, **budgets)
    env.reset(seed=0, options={"task_index": 0})
    for turn in turns:
        _, _, terminated, truncated, _ = env.step(_env_action(turn))
        if terminated or truncated:
            break
    return env.episode()


# ---------------------------------------------------------------------------- (a) the oracle, replayed
@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory):
    """osint-eval's oracle on the first 50 v0:test tasks, and an Inspect eval replaying its actions."""
    from osint_eval.policies import OraclePolicy
    from osint_eval.runner import run_multi_turn

    tasks = benchmark_tasks("v0:test", limit=N_ORACLE)
    oracle = run_multi_turn(OraclePolicy(), benchmark_world("v0:test"), tasks)
    script = {e.question: [_calls(t["action"]) for t in e.transcript] for e in oracle}
    assert len(script) == N_ORACLE and all(all(script[q]) for q in script)  # distinct questions, tool calls only
    log = run_inspect(script, tmp_path_factory.mktemp("oracle-logs"), limit=N_ORACLE)
    return tasks, oracle, log


def test_replayed_oracle_scores_what_osint_evals_oracle_scores(oracle_run):
    _, oracle, log = oracle_run
    scores = scores_by_id(log)
    assert len(scores) == N_ORACLE
    for e in oracle:
        s = scores[e.task_id]
        assert (s.value, s.metadata["correct"], s.metadata["reward"]) == (float(e.correct), e.correct, e.reward), (
            e.task_id
        )
        assert s.metadata["critical_steps"] == e.steps and s.metadata["breakdown"] == e.breakdown
    assert sum(e.correct for e in oracle) == N_ORACLE  # the oracle solves every task it replays
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert metrics["accuracy"] == 1.0 and metrics["mean_reward"] == pytest.approx(np.mean([e.reward for e in oracle]))
    assert {"easy", "medium", "hard"} & set(metrics) and {e.family for e in oracle} <= set(
        metrics
    )  # by difficulty, family


def test_scripted_wrong_answer_scores_what_the_env_scores(oracle_run, tmp_path):
    tasks, oracle, _ = oracle_run
    script = {}
    for e in oracle[:5]:
        turns = [_calls(t["action"]) for t in e.transcript]
        turns[-1] = [(n, {"entity_id": WRONG} if n == "answer" else a) for n, a in turns[-1]]
        script[e.question] = turns
    log = run_inspect(script, tmp_path, limit=5)
    for task in tasks[:5]:
        expected = in_process(task, script[task.question])
        s = scores_by_id(log)[task.task_id]
        assert not expected.correct and s.value == 0.0 and s.metadata["answered"]
        assert s.metadata["reward"] == expected.reward and s.metadata["breakdown"] == expected.breakdown.to_dict()
        assert s.metadata["episode"]["answer"] == WRONG


@pytest.mark.parametrize("attack", ATTACKS)
def test_exploit_policies_score_no_more_through_inspect_than_in_process(attack, tmp_path):
    """tests/gym/test_exploits.py's attacks as mockllm outputs: each episode's reward through Inspect is the
    reward the env gives the same raw actions in process, and no attack is scored a success."""
    tasks = benchmark_tasks("v0:test", limit=10)
    world, act = benchmark_world("v0:test"), attack_policy(attack)
    script, in_process_reward = {}, {}
    for task in tasks:
        core = OSINTEnv(world=world, tasks=[task], max_steps=12)
        core.reset(seed=0)
        script[task.question] = [_calls(a) or a for a in (act(core, None, turn) for turn in range(12))]
        in_process_reward[task.task_id] = _episode(OSINTEnv(world=world, tasks=[task], max_steps=12), act, 0)
    log = run_inspect(script, tmp_path, limit=10, max_turns=12)
    scores = scores_by_id(log)
    assert len(scores) == 10
    for task in tasks:
        s = scores[task.task_id]
        assert s.metadata["reward"] == in_process_reward[task.task_id], (attack, task.task_id)
        assert s.value == 0.0 and not s.metadata["correct"], (attack, task.task_id)


# ---------------------------------------------------------------------------- crashing samples
class ModelCrash(RuntimeError):
    pass


@pytest.fixture(scope="module")
def crashed_logs(tmp_path_factory):
    """Two evals of 4 samples in which the model crashes on the second turn of 2 of them: one going on past
    a sample's error (``fail_on_error=False``), one stopped by it. Records how many episodes were live at
    each crash."""
    from inspect_ai import eval as inspect_eval

    from osint_gym.integrations.inspect_task import osint_v0
    from osint_gym.integrations.inspect_tools import SESSIONS

    tasks = benchmark_tasks("v0:test", limit=4)
    live_at_crash = []

    def crash():
        live_at_crash.append(len(SESSIONS))
        raise ModelCrash("the model server went away")

    probe = [("get_profile", {"handle_or_id": "person_0"})]
    script = {t.question: [probe, crash if i < 2 else [("answer", {"entity_id": WRONG})]] for i, t in enumerate(tasks)}
    logs = {}
    for fail_on_error in (False, True):
        (logs[fail_on_error],) = inspect_eval(
            osint_v0(limit=4),
            model=scripted_model(script),
            display="none",
            log_dir=str(tmp_path_factory.mktemp("crash")),
            fail_on_error=fail_on_error,
        )
        logs[f"sessions_after_{fail_on_error}"] = dict(SESSIONS)
    return tasks, logs, live_at_crash


def test_a_crashing_sample_leaves_no_episode_behind(crashed_logs):
    tasks, logs, live_at_crash = crashed_logs
    assert live_at_crash and min(live_at_crash) >= 1  # the crashed sample's env was live when the model crashed
    assert logs["sessions_after_False"] == {} and logs["sessions_after_True"] == {}
    going_on = logs[False]
    assert going_on.status == "success"
    by_id = {s.id: s for s in going_on.samples}
    for i, task in enumerate(tasks):
        sample = by_id[task.task_id]
        if i < 2:
            assert "the model server went away" in sample.error.message and not sample.scores
        else:
            assert sample.scores["osint_scorer"].metadata["episode"]["answer"] == WRONG
    assert logs[True].status == "error" and "the model server went away" in logs[True].error.message


# ---------------------------------------------------------------------------- (b) a real local server
@pytest.mark.parametrize("served", ["served_tiny", "served_smollm2"], ids=["tiny", "smollm2"])
def test_inspect_eval_cli_against_a_served_local_model(served, request, tmp_path):
    """``inspect eval osint_gym/osint_v0`` (found through the entry point) against transformers serve of a local
    model, the tiny one or SmolLM2-135M-Instruct (a real pretrained chat model): neither solves a task in 3
    turns; every sample ends in the env's budget and is scored."""
    from inspect_ai.log import read_eval_log

    base_url, model_dir = request.getfixturevalue(served)
    exe = Path(sys.executable).with_name("inspect")
    cmd = [str(exe), "eval", "osint_gym/osint_v0", "--model", f"openai-api/local/{model_dir}", "-T", "limit=3",
           "-T", "max_turns=3", "--max-tokens", "24", "--log-dir", str(tmp_path), "--display", "plain"]
    env = {**os.environ, "LOCAL_BASE_URL": base_url, "LOCAL_API_KEY": "none", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.task == "osint_gym/osint_v0" and len(log.samples) == 3
    for sample in log.samples:
        episode = sample.scores["osint_scorer"].metadata["episode"]
        assert episode["end"] in ("answered", "step_budget") and 1 <= episode["critical_steps"] <= 3
        assert sample.scores["osint_scorer"].value in (0.0, 1.0)


# ---------------------------------------------------------------------------- (c) leakage
def test_nothing_before_the_answer_names_the_gold_answer_or_hidden_evidence(tmp_path):
    tasks = benchmark_tasks("v0:test", limit=12)
    world = benchmark_world("v0:test")
    rng = np.random.default_rng(0)
    script = {}
    for t in tasks:  # random valid calls and garbage on ids the question or earlier picks name (never answers)
        seen = [i for i in t.question.split() if "_" in i] or []
        turns = [_calls(a) or a for a in (_random_action(rng, world, seen) for _ in range(6))]
        script[t.question] = turns
    log = run_inspect(script, tmp_path, limit=12, max_turns=6)
    by_id = {t.task_id: t for t in tasks}
    checked = 0
    for sample in log.samples:
        secrets, echoed = _secrets(by_id[sample.id]), ""
        for m in sample.messages:
            if m.role == "assistant":
                echoed += json.dumps([tc.arguments for tc in m.tool_calls or []]) + m.text
                continue
            visible = _outside_results(m.text) if m.role == "tool" else m.text
            for secret in secrets:
                assert secret not in visible or secret in echoed, (sample.id, secret, visible[:300])
            checked += 1
        assert sample.scores["osint_scorer"].metadata["end"] == "step_budget"
    assert checked >= 12 * 6


# ---------------------------------------------------------------------------- (d) bad inputs
@pytest.mark.parametrize("args, needle", [({"split": "v0:nope"}, "unknown split"),
                                          ({"difficulty": "extreme"}, "difficulty must be"),
                                          ({"family": "nope"}, "unknown task family"),
                                          ({"observation_format": "xml"}, "observation_format must be"),
                                          ({"max_turns": 0}, "max_turns must be"),
                                          ({"hops": 9}, "hops must be an integer in [1, 5]"),
                                          ({"decoy_density": 2.0}, "'decoy_density' must be a number in"),
                                          ({"split": "v1:test", "decoy_density": 0.3}, "fixes its world")])
def test_bad_task_options_give_one_line_errors(args, needle):
    from osint_gym.errors import ConfigError
    from osint_gym.integrations.inspect_task import osint_v0

    with pytest.raises(ConfigError) as exc:
        osint_v0(**args)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_the_knobs_sample_tasks_on_a_knobbed_world_and_the_oracle_replays_them(tmp_path):
    from osint_eval.policies import OraclePolicy
    from osint_eval.runner import run_multi_turn
    from osint_gym.knobs import knob_tasks

    knobs = {"hops": 2, "decoy_density": 0.5, "name_collision_rate": 0.2}
    world, tasks, source = knob_tasks(None, seed=4, limit=6, **knobs)
    oracle = run_multi_turn(OraclePolicy(), world, tasks)
    script = {e.question: [_calls(t["action"]) for t in e.transcript] for e in oracle}
    log = run_inspect(script, tmp_path, limit=6, seed=4, **knobs)
    scores = scores_by_id(log)
    assert {s.metadata["split"] for s in log.samples} == {source} and len(scores) == len(oracle)
    for e in oracle:
        assert scores[e.task_id].metadata["reward"] == e.reward and scores[e.task_id].value == 1.0
    from osint_gym.integrations.inspect_task import osint_v0

    _, split_tasks, _ = knob_tasks("v2:test", hops=1, limit=3)
    samples = list(osint_v0(split="v2:test", hops=1, limit=3).dataset)
    assert [s.id for s in samples] == [t.task_id for t in split_tasks] and all(t.query.n_hops == 1 for t in split_tasks)
    assert {s.metadata["split"] for s in samples} == {"v2:test"}


def test_inspect_eval_cli_refuses_an_unknown_split_in_one_line(tmp_path):
    exe = Path(sys.executable).with_name("inspect")
    cmd = [str(exe), "eval", "osint_gym/osint_v0", "--model", "mockllm/model", "-T", "split=v0:nope",
           "--log-dir", str(tmp_path / "logs"), "--display", "plain"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    shown = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 1 and shown == ["unknown split 'nope' of benchmark 'v0'; known: train, dev, test"], shown


def test_missing_tool_malformed_args_and_garbage_get_the_envs_errors(tmp_path):
    task = benchmark_tasks("v0:test", limit=1)[0]
    turns = [[("no_such_tool", {"q": "x"})], [("get_profile", {"handle_or_id": 5})], [("get_profile", {})],
             "lorem ipsum dolor", [("answer", {"entity_id": WRONG})]]
    log = run_inspect({task.question: turns}, tmp_path, limit=1)
    (sample,) = log.samples
    expected = in_process(task, turns)
    meta = sample.scores["osint_scorer"].metadata
    assert (meta["invalid_actions"], meta["parse_failures"], meta["reward"]) == (4, 1, expected.reward)
    assert [t["observation"] for t in meta["episode"]["turns"]] == [t.observation for t in expected.turns]
    seen = "\n".join(m.text for m in sample.messages if m.role in ("tool", "user"))
    for turn in expected.turns[:4]:  # every env error observation reached the model, once
        assert seen.count(turn.observation) == 1, turn.observation
    needles = ["unknown tool 'no_such_tool'", "'handle_or_id' must be a string, got int",
               "missing required argument 'handle_or_id'", "no action found"]
    for turn, needle in zip(expected.turns, needles):  # each error is one line and names the problem
        assert "\n" not in turn.observation and needle in turn.observation, turn.observation


def test_garbage_from_an_openai_compatible_model_gets_the_envs_one_line_errors(tmp_path, monkeypatch):
    """Through Inspect's own openai-api provider (a scripted server on loopback): a call of a missing tool,
    arguments that are not JSON (Inspect cannot parse them) and text that is no action each get the env's
    one-line error, the same observation the env gives those raw calls in process."""
    from inspect_ai.model import get_model

    task = benchmark_tasks("v0:test", limit=1)[0]
    turns = [MISSING_TOOL, MALFORMED, GARBAGE, json.dumps({"answer": WRONG})]
    with scripted_server(lambda messages: turns[min(sum(m["role"] == "assistant" for m in messages), 3)]) as (url, _):
        monkeypatch.setenv("SCRIPTED_BASE_URL", url)
        monkeypatch.setenv("SCRIPTED_API_KEY", "none")
        log = run_inspect({}, tmp_path, model=get_model("openai-api/scripted/scripted"), limit=1)
    (sample,) = log.samples
    env = OSINTEnv(world=benchmark_world("v0:test"), tasks=[task], describe_tools=False)
    env.reset(seed=0, options={"task_index": 0})
    expected = [env.step(json.dumps({"tool_calls": [t["tool_calls"][0]["function"]]}))[0] for t in turns[:2]]
    expected.append(env.step(GARBAGE)[0])
    episode = sample.scores["osint_scorer"].metadata["episode"]
    assert [t["observation"] for t in episode["turns"][:3]] == expected
    seen = "\n".join(m.text for m in sample.messages if m.role in ("tool", "user"))
    for observation, needle in zip(expected, ONE_LINE_ERRORS, strict=True):
        assert "\n" not in observation and needle in json.loads(observation)["error"], observation
        assert seen.count(observation) == 1, observation  # the model saw it, once
    assert episode["answer"] == WRONG and episode["end"] == "answered"


# ---------------------------------------------------------------------------- (e) the log in osint-eval
def test_log_reads_back_as_osint_evals_own_oracle_run(oracle_run, tmp_path, capsys):
    from osint_eval.cli import main
    from osint_eval.inspect_log import read_inspect_log
    from osint_eval.schema import load_report

    _, oracle, log = oracle_run
    run = read_inspect_log(log.location)
    assert run.model == "mockllm/model" and run.task_args["limit"] == N_ORACLE
    got = {e.task_id: e.to_dict() for e in run.episodes}
    for e in oracle:  # equal up to how the actions were written (text in osint-eval, tool calls in Inspect)
        mine, theirs = got[e.task_id], e.to_dict()
        assert [t["observation"] for t in mine.pop("transcript")] == [
            t["observation"] for t in theirs.pop("transcript")
        ]
        assert mine == theirs
    out, board = tmp_path / "cmp", tmp_path / "board.jsonl"
    rc = main(
        [
            "compare",
            "--mode",
            "multi_turn",
            "--tasks",
            "v0:test",
            "--limit",
            str(N_ORACLE),
            "--base",
            "oracle",
            "--candidate",
            f"inspect:{log.location}",
            "--out",
            str(out),
            "--leaderboard",
            str(board),
            "--no-progress",
        ]
    )
    assert rc == 0, capsys.readouterr().err
    report = load_report(out)
    delta = report.comparisons["candidate vs base"].overall
    assert (
        delta.n == N_ORACLE
        and delta.success_delta.mean == 0.0
        and delta.reward_delta.mean == pytest.approx(0.0, abs=1e-12)
    )
    assert report.models["candidate"].label == "inspect:mockllm/model"
    assert json.loads(board.read_text().splitlines()[-1])["model"] == "inspect:mockllm/model"


def _doctored(log, path, edit):
    """The samples of ``log`` of the first 4 v0:test tasks, ``edit`` applied to the score metadata of one,
    written to ``path``."""
    from inspect_ai.log import read_eval_log, write_eval_log

    copy = read_eval_log(log.location)
    ids = [t.task_id for t in benchmark_tasks("v0:test", limit=4)]
    copy.samples = [s for s in copy.samples if s.id in ids]
    assert len(copy.samples) == 4
    edit(copy.samples[0].scores["osint_scorer"].metadata)
    write_eval_log(copy, str(path))
    return path


def test_malformed_logs_get_one_line_errors(oracle_run, crashed_logs, tmp_path, capsys):
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes

    from osint_eval.cli import main
    from osint_gym.integrations.inspect_task import osint_v0

    oracle_log, (_, crashed, _) = oracle_run[2], crashed_logs
    junk = tmp_path / "junk.eval"
    junk.write_bytes(b"not a zip \x00\x01")
    (other,) = inspect_eval(Task(dataset=[Sample(input="hi", target="hi")], solver=[], scorer=includes(), name="other"),
                            model="mockllm/model", log_dir=str(tmp_path / "other"), display="none")
    text_only = scripted_model({t.question: [GARBAGE] for t in benchmark_tasks("v0:test", limit=4)})
    (epochs,) = inspect_eval(osint_v0(limit=4, max_turns=1), model=text_only, epochs=2,
                             log_dir=str(tmp_path / "epochs"), display="none")
    assert epochs.status == "success", epochs.error
    no_record = _doctored(oracle_log, tmp_path / "no-record.eval", lambda meta: meta.pop("episode"))
    asks_other = _doctored(oracle_log, tmp_path / "other-question.eval",
                           lambda meta: meta["episode"]["task"].update(question="Who is it?"))
    cases = [(junk, "not a readable Inspect eval log"), (tmp_path / "missing.eval", "no Inspect log at"),
             (Path(other.location), "a log of Inspect task 'other'"),
             (Path(oracle_log.location), "the log holds 50 episodes, the task set 4 tasks"),
             (Path(crashed[True].location), "the Inspect eval did not finish (status 'error')"),
             (Path(crashed[False].location), "has no osint_scorer score"),
             (Path(epochs.location), "the log holds 2 epochs"),
             (no_record, "its score holds no OSINT-v0 episode record"),
             (asks_other, "of the log asks another question")]
    base = ["compare", "--tasks", "v0:test", "--limit", "4", "--base", "oracle", "--leaderboard", "", "--no-progress"]
    for i, (path, needle) in enumerate(cases):
        rc = main([*base, "--mode", "multi_turn", "--candidate", f"inspect:{path}", "--out", str(tmp_path / f"out{i}")])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and needle in err and "\n" not in err, (path.name, err)
    rc = main([*base, "--mode", "single_turn", "--candidate", f"inspect:{asks_other}", "--out", str(tmp_path / "st")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "Inspect episodes are multi-turn" in err and "\n" not in err, err


def test_the_entry_point_and_the_old_paths_load_the_new_modules():
    """``inspect eval osint_gym/osint_v0`` finds the task through the ``inspect_ai`` entry point, which names
    `osint_gym.integrations.inspect_task`; the paths before the move import as the same modules."""
    from importlib.metadata import entry_points

    import osint_gym.integrations.inspect_task as task

    assert entry_points(group="inspect_ai")["osint_gym"].load() is task and callable(task.osint_v0)
    code = ("import warnings\nimport osint_gym.integrations.inspect_task as a, osint_gym.integrations.inspect_tools"
            " as b\nwith warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
            "    import osint_gym.inspect_task as old_a, osint_gym.inspect_tools as old_b\n"
            "print(old_a is a and old_b is b, sum(w.category is FutureWarning for w in caught))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "2"], out
