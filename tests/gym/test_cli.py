from __future__ import annotations

import json
import subprocess
import sys

import pytest

from osint_gym.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "osint_gym", *args], capture_output=True, text=True)


def test_demo_episode_runs_and_reports_a_verdict():
    out = run("demo", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert "== OSINT-v0 demo episode" in out.stdout
    assert "verdict: correct=True" in out.stdout and "ACTION: " in out.stdout


def test_export_then_verify_names_the_world_it_verified_against(tmp_path, capsys):
    path = tmp_path / "dev.jsonl"
    assert main(["export", "--split", "v0:dev", "--out", str(path), "--difficulty", "easy", "--limit", "12"]) == 0
    assert f"wrote 12 tasks of v0:dev to {path}" in capsys.readouterr().out
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 12 and {r["difficulty"] for r in rows} == {"easy"}
    assert main(["verify", str(path), "--split", "v0:dev"]) == 0
    out = capsys.readouterr().out
    assert "verified against benchmark v0:dev (world 'osint-2002', fingerprint " in out and "12 tasks: ok=12" in out
    # the same tasks do not belong to the test world
    assert main(["verify", str(path), "--split", "v0:test"]) == 1
    assert "verified against benchmark v0:test (world 'osint-3003'" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_verify_requires_the_world_to_verify_against(tmp_path):
    out = run("verify", str(tmp_path / "tasks.jsonl"))
    assert out.returncode == 2 and "one of the arguments --split --metaqa-kb --tsv is required" in out.stderr


def test_verify_kg_tasks_against_an_imported_graph(tmp_path, capsys):
    from osint_gym.tasks import save_jsonl
    from osint_gym.tasks.kg import load_metaqa_qa
    from osint_gym.world.loaders import load_metaqa_kb

    from .test_loaders import EXCERPT

    qa = tmp_path / "qa.txt"
    qa.write_text("who wrote [Chopper]\tAndrew Dominik\nwho acted in [Hanna]\tCate Blanchett|Eric Bana|Saoirse Ronan\n",
                  encoding="utf-8")
    tasks, _ = load_metaqa_qa(load_metaqa_kb(EXCERPT), qa, hops=1)
    save_jsonl(tasks, str(tmp_path / "kg.jsonl"))
    assert main(["verify", str(tmp_path / "kg.jsonl"), "--metaqa-kb", str(EXCERPT)]) == 0
    out = capsys.readouterr().out
    assert f"verified against graph {EXCERPT} (world 'metaqa'" in out and "2 tasks: ok=2" in out


def test_export_refuses_to_overwrite_unless_asked(tmp_path, capsys):
    path = tmp_path / "out.jsonl"
    path.write_text("keep me\n", encoding="utf-8")
    argv = ["export", "--split", "v0:dev", "--out", str(path), "--limit", "3"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"osint-gym: error: --out {str(path)!r} already exists; pass --overwrite to replace it"
    assert path.read_text(encoding="utf-8") == "keep me\n"
    assert main([*argv, "--overwrite"]) == 0
    assert len(path.read_text(encoding="utf-8").splitlines()) == 3


def test_export_to_a_folder_is_a_one_line_error(tmp_path, capsys):
    assert main(["export", "--split", "v0:dev", "--out", str(tmp_path), "--limit", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {str(tmp_path)!r} is a directory" in err
    assert main(["export", "--out", str(tmp_path / "no" / "x.jsonl"), "--limit", "3", "--overwrite"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "--split", "v0:nope", "--out", "x.jsonl"], "unknown split 'nope'"),
        (["export", "--split", "v0:dev", "--family", "nope", "--out", "x.jsonl"], "unknown task family 'nope'"),
        (["verify", "/no/such/file.jsonl", "--split", "v0:dev"], "No such file"),
        (["verify", "/no/such/kb.txt", "--metaqa-kb", "/no/such/kb.txt"], "no such file"),
    ],
)
def test_errors_are_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("osint-gym: error:") and message in err and "\n" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_task_file_that_is_not_utf8_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"question": "caf\xe9"}\n')
    assert main(["verify", str(bad), "--split", "v0:dev"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"osint-gym: error: {bad}: not UTF-8 text (invalid continuation byte at byte 17)"
    )


def test_version_flag():
    from osint_gym import __version__

    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"osint-gym {__version__}"


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys, tmp_path):
    import osint_gym.benchmark

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(osint_gym.benchmark, "benchmark_tasks", interrupted)
    assert main(["export", "--out", str(tmp_path / "x.jsonl")]) == 130
    err = capsys.readouterr().err
    assert err == "osint-gym: interrupted; nothing was left half-written, run the same command again\n"
    assert list(tmp_path.iterdir()) == []


def test_bad_flags_are_argparse_errors():
    out = run("demo", "--difficulty", "extreme")
    assert out.returncode == 2 and "invalid choice: 'extreme'" in out.stderr and "Traceback" not in out.stderr


FLAGS = [([], True), (["--no-describe-tools"], False), (["--bare-prompt"], False)]


@pytest.mark.parametrize(("flags", "describe"), FLAGS)
def test_serve_names_the_tool_description_as_the_env_does(flags, describe):
    from osint_gym.cli import _parser

    assert _parser().parse_args(["serve", *flags]).describe_tools is describe
