"""OSINT-v0 through Inspect AI (`osint_gym.inspect_task`) and its logs read back by osint-eval
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
    """mockllm whose outputs replay ``script[question]``: per turn a list of tool calls, or a text."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import ToolCall

    def outputs(messages, tools, tool_choice, config):
        question = next(m.text for m in messages if m.role == "user")
        turns = script[question]
        turn = turns[min(sum(m.role == "assistant" for m in messages), len(turns) - 1)]
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


def run_inspect(script, log_dir, **task_args):
    from inspect_ai import eval as inspect_eval

    from osint_gym.inspect_task import osint_v0

    (log,) = inspect_eval(osint_v0(**task_args), model=scripted_model(script), log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
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


# ---------------------------------------------------------------------------- (b) a real local server
def test_inspect_eval_cli_against_a_served_tiny_model(served_tiny, tmp_path):
    """``inspect eval osint_gym/osint_v0`` (found through the entry point) against transformers serve: the
    tiny model emits garbage or no tool call; every sample ends in the env's budget and is scored."""
    from inspect_ai.log import read_eval_log

    base_url, model_dir = served_tiny
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
                                          ({"max_turns": 0}, "max_turns must be")])
def test_bad_task_options_give_one_line_errors(args, needle):
    from osint_gym.errors import ConfigError
    from osint_gym.inspect_task import osint_v0

    with pytest.raises(ConfigError) as exc:
        osint_v0(**args)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


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


def test_malformed_logs_get_one_line_errors(oracle_run, tmp_path, capsys):
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes

    from osint_eval.cli import main

    junk = tmp_path / "junk.eval"
    junk.write_bytes(b"not a zip \x00\x01")
    (other,) = inspect_eval(Task(dataset=[Sample(input="hi", target="hi")], solver=[], scorer=includes(), name="other"),
                            model="mockllm/model", log_dir=str(tmp_path / "other"), display="none")
    base = ["compare", "--mode", "multi_turn", "--tasks", "v0:test", "--limit", "5", "--base", "oracle",
            "--leaderboard", "", "--no-progress"]
    cases = [(junk, "not a readable Inspect eval log"), (tmp_path / "missing.eval", "no Inspect log at"),
             (Path(other.location), "a log of Inspect task 'other'"),
             (Path(oracle_run[2].location), "the log holds 50 episodes, the task set 5 tasks")]
    for i, (path, needle) in enumerate(cases):
        rc = main([*base, "--candidate", f"inspect:{path}", "--out", str(tmp_path / f"out{i}")])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and needle in err and "\n" not in err, err
