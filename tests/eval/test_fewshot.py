"""Few-shot prompts (`osint_eval.fewshot`, ``--few-shot K``): whole demonstrated episodes of dev tasks before the
task, in the run's own formats, and a model named by its shots so that its rows are not the zero-shot ones."""

from __future__ import annotations

import json

import pytest

from osint_eval.cli import main
from osint_eval.errors import EvalError
from osint_eval.fewshot import demonstrations
from osint_eval.policies import HFPolicy
from osint_eval.tasks import load_tasks
from osint_gym.spec import EpisodeSpec
from osint_gym.tasks import Budgets

SPEC = EpisodeSpec(Budgets(observation_format="compact"), action_format="short")


def test_a_demonstration_is_a_solved_dev_episode_in_the_runs_formats_ending_on_its_answer():
    turns = demonstrations(SPEC, "v2:test", 2)
    starts = [i for i, m in enumerate(turns) if m.get("shot_start")]
    assert len(starts) == 2 and starts[0] == 0
    dev_questions = {t.question for t in load_tasks("v2:dev", limit=2).tasks}
    test_questions = {t.question for t in load_tasks("v2:test").tasks}
    for a, b in zip(starts, starts[1:] + [len(turns)]):
        episode = turns[a:b]
        assert [m["role"] for m in episode] == ["user", "assistant"] * (len(episode) // 2)  # alternating
        assert episode[0]["content"].split("\n")[0] in dev_questions - test_questions
        assert episode[-1]["content"].splitlines()[-1].startswith("answer ")  # short actions, ending on the answer
        assert not any(m["content"].lstrip().startswith("{") for m in episode if m["role"] == "assistant")


def test_the_shots_go_after_the_system_message_and_name_the_model(tiny_dir):
    shots = demonstrations(SPEC, "v2:test", 1)
    policy = HFPolicy(tiny_dir, max_new_tokens=1, shots=shots)
    assert policy.name == f"{tiny_dir} (1-shot)" and policy.describe()["shot_turns"] == len(shots)
    task = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]
    merged = policy._with_shots(task)
    assert merged[0] == task[0] and merged[-1] == task[1] and len(merged) == 2 + len(shots)
    assert all("shot_start" not in m for m in merged)  # the marker never reaches the template
    assert policy._with_shots(task[1:])[: len(shots)] == [{k: m[k] for k in ("role", "content")} for m in shots]


@pytest.fixture(scope="module")
def tiny_dir():
    from osint_eval.modeling import tiny_path

    return str(tiny_path("tiny:64x2"))


def test_a_few_shot_run_is_its_own_leaderboard_row(tiny_dir, tmp_path):
    lb = tmp_path / "lb.jsonl"
    for k in ("0", "1"):
        assert main(["run", "--policy", tiny_dir, "--tasks", "v2:test", "--limit", "2", "--mode", "multi_turn",
                     "--few-shot", k, "--max-steps", "8", "--max-new-tokens", "4", "--out", str(tmp_path / k),
                     "--leaderboard", str(lb), "--no-progress"]) == 0
    rows = [json.loads(line) for line in lb.read_text().splitlines()]
    assert sorted(r["model"] for r in rows) == [tiny_dir, f"{tiny_dir} (1-shot)"]


@pytest.mark.parametrize(("args", "message"), [
    (["--few-shot", "1"], "--few-shot takes a count >= 0 and --mode multi_turn"),
    (["--few-shot", "-1", "--mode", "multi_turn"], "--few-shot takes a count >= 0"),
])
def test_bad_few_shot_arguments_are_one_line_errors(tmp_path, capsys, args, message):
    assert main(["run", "--policy", "oracle", "--tasks", "v2:test", "--out", str(tmp_path / "r"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_demonstrations_need_a_benchmark_split_and_budgets_the_demonstrator_solves_them_in():
    with pytest.raises(EvalError, match="did not solve .* under these budgets; raise --max-steps"):
        demonstrations(EpisodeSpec(Budgets(max_steps=1)), "v2:test", 1)
    with pytest.raises(EvalError, match="not a benchmark split"):
        demonstrations(SPEC, "tasks.jsonl", 1)
    with pytest.raises(EvalError, match="must be >= 1"):
        demonstrations(SPEC, "v2:test", 0)
