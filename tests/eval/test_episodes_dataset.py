"""A run's episodes as a Hugging Face dataset: it loads with datasets.load_from_disk and gives the run's
episodes back; the CLI writes it with --episodes-dataset and refuses to replace one without --overwrite."""

from __future__ import annotations

import json

import datasets
import pytest

from osint_eval.cli import main
from osint_eval.episodes import conversation, episodes_dataset, episodes_from_dataset, save_episodes
from osint_eval.errors import EvalError
from osint_eval.evaluate import evaluate
from osint_eval.policies import make_policy
from osint_eval.schema import load_report
from osint_eval.tasks import load_tasks


@pytest.mark.parametrize("mode", ["multi_turn", "single_turn"])
def test_the_dataset_round_trips_a_runs_episodes(tmp_path, mode):
    taskset = load_tasks("v1:test", limit=12)
    policies = {n: make_policy(n) for n in ("oracle", "random-guess")}
    report = evaluate(policies, taskset, mode=mode, progress=False)
    path = save_episodes(report, taskset.tasks, tmp_path / "episodes")
    loaded = datasets.load_from_disk(str(path))
    assert len(loaded) == 24 and set(loaded["model"]) == {"oracle", "random-guess"}
    assert episodes_from_dataset(loaded) == report.episodes and episodes_from_dataset(path) == report.episodes
    row = loaded[0]
    task = taskset.tasks[0]
    assert row["question"] == task.question and json.loads(row["provenance"]) == task.provenance
    assert row["messages"][0]["role"] == "user" and row["messages"][1]["role"] == "assistant"
    assert set(row["breakdown"]) >= {"correct", "total", "evidence_f1"} and row["reward"] == row["breakdown"]["total"]
    assert row["messages"] == conversation(report.episodes["oracle"][0], mode)
    if mode == "single_turn":
        assert row["messages"][0]["content"].startswith(f"Question: {task.question}\nContext:\n")
    with pytest.raises(EvalError, match="already exists; pass --overwrite"):
        save_episodes(report, taskset.tasks, path)
    with pytest.raises(EvalError, match="no episode"):
        episodes_dataset(report.__class__(report.title, mode, 0, report.tasks, {}), taskset.tasks)


@pytest.mark.slow
def test_the_cli_writes_it_next_to_the_report(tmp_path, capsys):
    out, episodes = tmp_path / "r", tmp_path / "eps"
    args = ["run", "--policy", "oracle", "--tasks", "v2:test", "--limit", "5", "--mode", "multi_turn",
            "--out", str(out), "--episodes-dataset", str(episodes), "--leaderboard", "", "--no-progress"]
    assert main(args) == 0 and f"episodes: {episodes}" in capsys.readouterr().out
    assert episodes_from_dataset(episodes) == load_report(out).episodes
    again = [a if a != str(out) else str(tmp_path / "r2") for a in args]  # a new report folder, the same dataset
    assert main(again) == 2 and "--episodes-dataset" in capsys.readouterr().err and not (tmp_path / "r2").exists()
    assert main([*args, "--overwrite"]) == 0
