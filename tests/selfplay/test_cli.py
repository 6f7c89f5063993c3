"""The CLI as a user meets it: --version, refusing to overwrite, a failed start that leaves nothing
behind, Ctrl-C as one line that says how to resume, output within seconds."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from osint_selfplay import __version__, data
from osint_selfplay.cli import main
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError
from osint_selfplay.loop import SelfPlayRun

from .conftest import micro_overrides


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"osint-selfplay {__version__}"


def test_a_bad_model_path_fails_before_anything_is_written(tmp_path, tiny_path, capsys):
    out = tmp_path / "run"
    code = main(["train", "--set", *micro_overrides(out, **{"model.answerer": "'/no/such/model'"})])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1] == "osint-selfplay: error: model path '/no/such/model' does not exist"
    assert not out.exists()


@pytest.mark.slow
def test_an_error_in_the_first_phase_does_not_block_the_next_run(tmp_path, tiny_path, monkeypatch):
    overrides = micro_overrides(tmp_path / "run", dry_run="true", rounds=1)

    def broken(*args, **kwargs):
        raise ConfigError("no world can make these tasks")

    with monkeypatch.context() as m:
        m.setattr(data, "sft_generator_rows", broken)
        with pytest.raises(ConfigError, match="no world can make these tasks"):
            SelfPlayRun(load_config(None, overrides)).run()
    assert not (tmp_path / "run" / "run.json").exists()
    summary = SelfPlayRun(load_config(None, overrides)).run()  # not refused: "already holds a run"
    assert summary.evaluation is not None and summary.evaluation.n_tasks == 12


def test_overwrite_replaces_an_earlier_run_only_when_asked(tmp_path, tiny_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--dry-run", "--set", *micro_overrides(out, **{"eval.enabled": "false"})]
    assert main(args) == 0
    (out / "marker.txt").write_text("from the earlier run")
    assert main(args) == 2
    assert "already holds a run; pass --resume to continue it, --overwrite to replace it" in capsys.readouterr().err
    assert (out / "marker.txt").exists()
    assert main(args + ["--overwrite"]) == 0
    assert not (out / "marker.txt").exists() and json.loads((out / "summary.json").read_text())["rounds"]
    assert main(args + ["--overwrite", "--resume"]) == 2
    assert "--overwrite and --resume contradict each other" in capsys.readouterr().err


def test_an_equal_compute_control_without_a_warm_start_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["train", "--set", *micro_overrides(out, **{"warm_start.enabled": "'off'", "warm_start.packing": "true",
                                                           "warm_start.control": "true"})])
    assert code == 2 and capsys.readouterr().err.strip().splitlines()[-1] == (
        "osint-selfplay: error: warm_start.control continues the warm start, which is off for these models: "
        "set warm_start.enabled = 'on' or warm_start.control = false")
    assert not out.exists()


def test_controls_refuse_what_is_not_a_finished_trained_run_in_one_line(tmp_path, tiny_path, capsys):
    out = tmp_path / "run"
    assert main(["controls", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"osint-selfplay: error: {str(tmp_path)!r} holds no osint-selfplay run (no run.json)")
    assert main(["train", "--dry-run", "--set", *micro_overrides(out, **{"eval.enabled": "false"})]) == 0
    capsys.readouterr()
    assert main(["controls", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("is a dry run: it trained nothing to control")
    summary = (out / "summary.json").read_text()
    (out / "summary.json").write_text(summary[:20])
    assert main(["controls", str(out)]) == 2
    assert "run.json or summary.json is malformed" in capsys.readouterr().err.strip().splitlines()[-1]
    (out / "summary.json").unlink()
    assert main(["controls", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"osint-selfplay: error: the run in {str(out)!r} has not finished (no summary.json); finish it with "
        "`osint-selfplay train --config ... --resume` first")


def test_generate_refuses_an_existing_out_file(tmp_path, capsys):
    out = tmp_path / "tasks.jsonl"
    out.write_text("keep me\n")
    assert main(["generate", "--model", "tiny:64x2", "--out", str(out), "--n", "2"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"osint-selfplay: error: --out {str(out)!r} exists; pass --overwrite to replace it"
    )
    assert main(["generate", "--model", "tiny:64x2", "--out", str(tmp_path), "--n", "2"]) == 2
    assert "is a folder; name a .jsonl file" in capsys.readouterr().err
    assert out.read_text() == "keep me\n"


def test_generate_offers_filtered_paths_in_choose_mode_only(tmp_path, capsys, monkeypatch):
    import json

    from osint_selfplay import phases

    out = tmp_path / "tasks.jsonl"
    assert main(["generate", "--model", "tiny:64x2", "--out", str(out), "--n", "2", "--offer-filters"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "osint-selfplay: error: filtered offers need choose mode (a proposal in 'fixed' mode cannot state filters)")
    assert not out.exists()
    seen = []
    monkeypatch.setattr(
        phases, "sample_completions", lambda model, prompts, **kw: seen.extend(prompts) or ["P: 1"] * len(prompts)
    )
    assert (
        main(["generate", "--model", "tiny:64x2", "--out", str(out), "--n", "6", "--mode", "choose", "--offer-filters"])
        == 0
    )
    assert "valid: 6/6" in capsys.readouterr().out
    assert any("[" in p[1]["content"] for p in seen)  # a filtered path shows its filters to the generator
    from osint_gym.tasks import Task

    tasks = [Task.from_dict(json.loads(line)) for line in out.read_text().splitlines()]
    assert len(tasks) == 6 and any(hop.filters for t in tasks for hop in t.query.hops)
    seen.clear()
    argv = ["generate", "--model", "tiny:64x2", "--out", str(out), "--n", "2", "--mode", "choose", "--overwrite",
            "--offer-filters", "--max-hops", "3"]
    assert main([*argv, "--offer-choices", "5"]) == 0
    assert all(p[1]["content"].splitlines()[-1].startswith("5: ") for p in seen)  # five numbered paths shown
    capsys.readouterr()
    assert main([*argv, "--offer-choices", "12"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "osint-selfplay: error: choices must be an integer in 2..9, got 12")


@pytest.mark.slow
def test_ctrl_c_prints_one_line_with_the_resume_command(tmp_path, tiny_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "osint_selfplay", "train", "--dry-run", "--set", *micro_overrides(out)]
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "OSINT_WRITE_PAUSE": "0.2"})
    first = proc.stderr.readline()
    assert time.time() - t0 < 10 and first.startswith("osint-selfplay train: 1 round(s) into")  # output within seconds
    while not (out / "warm_start_generator.done.json").exists() and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"osint-selfplay: interrupted. Finished phases are kept in {out}; continue with: osint-selfplay train"
    )
    assert last.endswith(" --resume") and "--dry-run" in last
    # the printed command resumes the run
    resume = shlex.split(last.split("continue with: osint-selfplay ", 1)[1])
    assert main(resume) == 0
    assert (out / "summary.json").is_file() and (out / "warm_start_generator.done.json").is_file()
