from __future__ import annotations

import json
import subprocess
import sys

import pytest

from osint_gym.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "osint_gym", *args], capture_output=True, text=True)


def test_demo_episode_runs_and_reports_a_verdict():
    out = run("demo", "--no-bench", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert "== OSINT-v0 demo episode" in out.stdout
    assert "verdict: correct=True" in out.stdout and "ACTION: " in out.stdout


def test_export_then_verify(tmp_path, capsys):
    path = tmp_path / "dev.jsonl"
    assert main(["export", "--split", "v0:dev", "--out", str(path), "--difficulty", "easy", "--limit", "12"]) == 0
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 12 and {r["difficulty"] for r in rows} == {"easy"}
    assert main(["verify", str(path), "--split", "v0:dev"]) == 0
    assert "12 tasks: ok=12" in capsys.readouterr().out
    # the same tasks do not belong to the test world
    assert main(["verify", str(path), "--split", "v0:test"]) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "--split", "v0:nope", "--out", "x.jsonl"], "unknown split 'nope'"),
        (["verify", "/no/such/file.jsonl"], "No such file"),
    ],
)
def test_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("osint-gym: error:") and message in err and "\n" not in err


def test_bad_flags_are_argparse_errors():
    out = run("demo", "--difficulty", "extreme")
    assert out.returncode == 2 and "invalid choice: 'extreme'" in out.stderr and "Traceback" not in out.stderr
