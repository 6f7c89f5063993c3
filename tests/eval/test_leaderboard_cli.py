from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from osint_eval import leaderboard
from osint_eval.cli import main


def test_run_writes_reports_and_leaderboard(tmp_path, capsys):
    out, lb = tmp_path / "r", tmp_path / "lb.jsonl"
    assert main(["run", "--policy", "oracle", "--tasks", "v0:dev", "--limit", "20", "--out", str(out),
                 "--leaderboard", str(lb), "--no-progress", "--mode", "multi_turn"]) == 0
    assert "oracle: success 100.0% [83.9, 100.0] (n=20)" in capsys.readouterr().out  # Wilson: 20/20 is not certainty
    assert {p.name for p in out.iterdir()} >= {"report.json", "report.md", "report.html"}
    assert main(["compare", "--base", "random-guess", "--candidate", "oracle", "--tasks", "v0:dev", "--limit", "20",
                 "--out", str(tmp_path / "c"), "--leaderboard", str(lb), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "candidate (oracle) vs base (random-guess): success delta" in printed
    rows = leaderboard.load(lb)
    assert [r.model for r in rows] == ["oracle", "random-guess", "oracle"]
    table = leaderboard.render(rows, sort_by="success")
    assert table.splitlines()[2].split()[1] == "oracle"
    assert leaderboard.render(rows, sort_by="steps").splitlines()[2].split()[1] in ("oracle", "random-guess")


def test_leaderboard_command_sorts(tmp_path, capsys):
    lb = tmp_path / "lb.jsonl"
    base = {
        "tasks": "v0:test",
        "mode": "single_turn",
        "n": 10,
        "success_lo": 0.0,
        "success_hi": 1.0,
        "evidence_f1": 0.0,
        "steps": 1.0,
        "tool_calls": 0.0,
        "seed": 0,
        "date": "2026-11-29",
        "report": None,
    }
    lb.write_text("\n".join(json.dumps({**base, "model": m, "success": s, "reward": r}) for m, s, r in
                            [("a", 0.2, 0.9), ("b", 0.5, 0.1), ("c", 0.3, 0.5)]) + "\n")
    assert main(["leaderboard", "--file", str(lb), "--sort-by", "reward"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[1] for ln in lines[2:]] == ["a", "c", "b"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--policy", "oracle", "--tasks", "v0:nope", "--out", "x"], "unknown split 'nope'"),
        (["run", "--policy", "./missing-model", "--tasks", "v0:dev", "--out", "x", "--limit", "2"], "does not exist"),
        (
            ["run", "--policy", "openai:http://127.0.0.1:9#m", "--tasks", "v0:dev", "--out", "x", "--limit", "2"],
            "unreachable",
        ),
        (["run", "--policy", "oracle", "--out", "x", "--limit", "0"], "--limit must be >= 1"),
        (["run", "--policy", "oracle", "--out", "x", "--workers", "0"], "--workers must be >= 1"),
        (["leaderboard", "--file", "/no/such/lb.jsonl"], "no leaderboard"),
        (["leaderboard", "--sort-by", "vibes", "--file", __file__.replace(".py", ".missing")], "no leaderboard"),
    ],
)
def test_bad_arguments_give_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("osint-eval: error:") and message in err and "\n" not in err


def test_help_is_fast_and_needs_no_torch():
    t0 = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from osint_eval.cli import main\ntry:\n main(['--help'])\nexcept SystemExit: pass\n"
            "print('torch' in sys.modules, 'transformers' in sys.modules)",
        ],
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip().endswith("False False")
    assert time.perf_counter() - t0 < 10
