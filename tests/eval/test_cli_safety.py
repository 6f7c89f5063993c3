"""The CLI fails fast and safely: misspelt policies, existing outputs, Ctrl-C, --version, duplicate leaderboard rows."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from osint_eval import leaderboard
from osint_eval.__about__ import __version__
from osint_eval.cli import main


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        ("orcale", "did you mean 'oracle'?"),
        ("Random-Gues", "did you mean 'random-guess'?"),
        ("opnai:http://127.0.0.1:8000/v1#m", "did you mean 'openai:'?"),
    ],
)
def test_misspelt_policy_fails_at_once_with_a_suggestion(spec, hint, tmp_path, capsys):
    t0 = time.perf_counter()
    assert main(["run", "--policy", spec, "--tasks", "v0:test", "--out", str(tmp_path / "r"), "--leaderboard", ""]) == 2
    assert time.perf_counter() - t0 < 2.0  # checked before any task is loaded or any network is tried
    err = _err(capsys)
    assert err.startswith("osint-eval: error: unknown policy") and hint in err
    assert not (tmp_path / "r").exists()


def test_compare_names_the_compared_models(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["compare", "--base", "random-guess", "--candidate", "oracle", "--tasks", "v0:dev", "--limit", "8",
                 "--out", str(out), "--leaderboard", "", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "candidate (oracle): success 100.0% [67.6, 100.0] (n=8)" in printed
    assert "candidate (oracle) vs base (random-guess): success delta +" in printed
    md = (out / "report.md").read_text()
    assert "# OSINT-v0 evaluation: base (random-guess) vs candidate (oracle)" in md
    assert "Models: base = random-guess, candidate = oracle." in md
    assert "| candidate (oracle) vs base (random-guess) | overall | 8 |" in md
    assert "candidate (oracle) vs base (random-guess)" in (out / "report.html").read_text()


def test_second_run_into_the_same_out_is_refused_and_leaves_the_first_report(tmp_path, capsys):
    out = tmp_path / "c"

    def compare(limit: int, *extra: str) -> int:
        return main(
            [
                "compare",
                "--base",
                "random-guess",
                "--candidate",
                "oracle",
                "--tasks",
                "v0:dev",
                "--limit",
                str(limit),
                "--out",
                str(out),
                "--leaderboard",
                "",
                "--no-progress",
                *extra,
            ]
        )

    assert compare(4) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    t0 = time.perf_counter()
    assert compare(6) == 2
    assert time.perf_counter() - t0 < 2.0  # refused before evaluating anything
    err = _err(capsys)
    assert err == (
        f"osint-eval: error: {out} already holds a report (report.json, report.md, report.html); "
        "pass --overwrite to replace it, or choose another --out"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert compare(6, "--overwrite") == 0
    assert json.loads((out / "report.json").read_text())["tasks"]["n"] == 6


def test_out_naming_an_existing_file_is_a_one_line_error(tmp_path, capsys):
    f = tmp_path / "report.txt"
    f.write_text("keep me")
    assert (
        main(["run", "--policy", "oracle", "--tasks", "v0:dev", "--limit", "2", "--out", str(f), "--leaderboard", ""])
        == 2
    )
    assert _err(capsys) == (
        f"osint-eval: error: --out {f} is a file, not a folder; "
        "name a folder for report.json, report.md and report.html"
    )
    assert f.read_text() == "keep me"


def test_version_flag_prints_the_package_version():
    out = subprocess.run([sys.executable, "-m", "osint_eval", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"osint-eval {__version__}"


def test_ctrl_c_is_one_line_that_says_how_to_rerun(tmp_path, capsys, monkeypatch):
    import osint_eval.evaluate

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(osint_eval.evaluate, "evaluate", interrupted)
    out = tmp_path / "r"
    assert (
        main(
            [
                "run",
                "--policy",
                "oracle",
                "--tasks",
                "v0:dev",
                "--limit",
                "2",
                "--out",
                str(out),
                "--leaderboard",
                "",
                "--no-progress",
            ]
        )
        == 130
    )
    assert _err(capsys) == (
        f"osint-eval: interrupted during run before its report was complete; rerun the same command "
        f"(add --overwrite if {out} holds a partial report)"
    )


def test_leaderboard_keeps_one_row_per_model_and_task_set(tmp_path, capsys):
    lb = tmp_path / "lb.jsonl"
    argv = ["run", "--policy", "oracle", "--tasks", "v0:dev", "--limit", "5", "--leaderboard", str(lb), "--no-progress"]
    assert main(argv + ["--out", str(tmp_path / "a")]) == 0
    assert main(argv + ["--out", str(tmp_path / "b")]) == 0
    assert (
        "leaderboard: " + str(lb) + " (replaced 1 earlier row for the same model and task set)"
        in capsys.readouterr().out
    )
    rows = leaderboard.load(lb)
    assert len(rows) == 1 and rows[0].report == str(tmp_path / "b") and rows[0].n == 5
    assert (
        main(argv[:-5] + ["--limit", "6", "--leaderboard", str(lb), "--no-progress", "--out", str(tmp_path / "c")]) == 0
    )
    assert [r.n for r in leaderboard.load(lb)] == [5, 6]  # another task set is another row


def test_malformed_leaderboard_row_is_a_one_line_error(tmp_path, capsys):
    lb = tmp_path / "lb.jsonl"
    lb.write_text(json.dumps({"model": "m", "tasks": "v0:dev", "mode": "single_turn", "n": 3}) + "\n")
    assert main(["leaderboard", "--file", str(lb)]) == 2
    assert _err(capsys) == (
        f"osint-eval: error: {lb}:1: "
        "missing success, success_lo, success_hi, reward, evidence_f1, steps, tool_calls, seed"
    )


FLAGS = [([], True), (["--no-describe-tools"], False), (["--bare-prompt"], False)]


@pytest.mark.parametrize(("flags", "describe"), FLAGS)
def test_the_tool_description_flag_has_the_configs_name_and_keeps_its_former_one(flags, describe):
    from osint_eval.cli import _parser

    args = _parser().parse_args(["run", "--policy", "oracle", "--tasks", "v0:dev", "--out", "r", *flags])
    assert args.describe_tools is describe
