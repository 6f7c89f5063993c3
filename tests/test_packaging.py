"""Each package builds a wheel and an sdist that install alone into a fresh venv, with clean metadata:
osint-gym runs an episode without torch; osint-eval runs a scripted evaluation without torch (both in one
venv without torch: osint-gym from its sdist, then osint-eval's wheel on top); osint-selfplay installs with
its declared dependencies, in the venv that `scripts/train_standalone.sh` made and trained in (one install of
torch and its stack for both: each took ~150 s here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

# the slow tier; one xdist worker builds the dists once and runs every test that installs them
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("packaging")]

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("osint-gym", "osint-eval", "osint-selfplay")


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    for pkg in PACKAGES:
        _run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT / "packages" / pkg)])
    return out


def _venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin" / "python"


def _one(dists: Path, pattern: str) -> str:
    (found,) = sorted(dists.glob(pattern))
    return str(found)


def test_every_package_builds_wheel_and_sdist_with_clean_metadata(dists):
    for stem in ("osint_gym", "osint_eval", "osint_selfplay"):
        assert list(dists.glob(f"{stem}-0.1.0-py3-none-any.whl")) and list(dists.glob(f"{stem}-0.1.0.tar.gz"))
    out = _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dists.iterdir()))])
    assert out.count("PASSED") == 6


@pytest.fixture(scope="module")
def light_venv(dists, tmp_path_factory):
    """A venv with osint-gym installed from its sdist, and neither torch nor transformers."""
    py = _venv(tmp_path_factory.mktemp("light") / "venv")
    _run([str(py), "-m", "pip", "install", "-q", _one(dists, "osint_gym-*.tar.gz")])
    return py


def test_osint_gym_alone_runs_an_episode_without_torch(light_venv):
    script = (
        "import importlib.util, json, sys\n"
        "import gymnasium as gym\n"
        "env = gym.make('osint_gym:OSINT-Easy-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "obs, r, te, tr, info = env.step(json.dumps({'tool': 'get_profile', 'args': {'handle_or_id': 'person_0'}}))\n"
        "obs, r, te, tr, info = env.step(json.dumps({'answer': 'person_0'}))\n"
        "assert te and 'reward_breakdown' in info\n"
        "print('torch' in sys.modules, importlib.util.find_spec('torch') is None,"
        " importlib.util.find_spec('transformers') is None)\n"
    )
    assert _run([str(light_venv), "-c", script]).split() == ["False", "True", "True"]


def test_osint_eval_runs_a_scripted_evaluation_without_torch(dists, light_venv, tmp_path):
    py = light_venv
    _run([str(py), "-m", "pip", "install", "-q", _one(dists, "osint_eval-*.whl")])
    out = _run([str(py), "-m", "osint_eval", "run", "--policy", "oracle", "--tasks", "v0:dev", "--limit", "5",
                "--out", str(tmp_path / "r"), "--leaderboard", "", "--no-progress", "--mode", "multi_turn"])
    assert "oracle: success 100.0%" in out
    assert (
        _run([str(py), "-c", "import importlib.util; print(importlib.util.find_spec('torch') is None)"]).strip()
        == "True"
    )


def test_the_standalone_script_trains_then_osint_selfplay_installs_with_its_dependencies(dists, tmp_path):
    script = ROOT / "scripts" / "train_standalone.sh"
    bad = subprocess.run([str(script), "--bogus"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown option --bogus" in bad.stderr
    assert subprocess.run([str(script)], capture_output=True, text=True).returncode == 2
    venv_dir, run = tmp_path / "venv", tmp_path / "run"
    env = {**os.environ, "PYTHON": getattr(sys, "_base_executable", sys.executable)}  # the interpreter behind this venv
    env.pop("PYTHONPATH", None)
    # torch pinned: on these machines pip takes the CPU build from disk instead of a multi-GB CUDA one
    done = subprocess.run([str(script), "--venv", str(venv_dir), "--torch", "torch==2.13.0", "--",
                           "--config", "configs/selfplay/tiny-cpu.toml", "--dry-run", "--set", f"output_dir='{run}'",
                           "warm_start.answerer_examples=200", "warm_start.generator_examples=50"],
                          capture_output=True, text=True, env=env, timeout=1500)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (
        "creating" in done.stdout
        and (venv_dir / "bin" / "osint-selfplay").is_file()
        and (run / "summary.json").is_file()
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["evaluation"]["dry_run"] is True and summary["rounds"]
    # the wheels in place of the checkout's install: pip resolves their declared dependencies against the venv
    py = venv_dir / "bin" / "python"
    _run([str(py), "-m", "pip", "uninstall", "-q", "-y", "osint-gym", "osint-eval", "osint-selfplay"])
    _run([str(py), "-m", "pip", "install", "-q", _one(dists, "osint_gym-*.whl"), _one(dists, "osint_eval-*.whl"),
          _one(dists, "osint_selfplay-*.whl")])
    assert "No broken requirements" in _run([str(py), "-m", "pip", "check"])
    shown = _run([str(py), "-m", "pip", "show", "-f", "osint-selfplay"])
    assert "osint_selfplay-0.1.0.dist-info" in shown and "site-packages" in shown
    out = _run([str(py), "-m", "osint_selfplay", "train", "--help"])
    assert "--resume" in out and "--dry-run" in out
    _run([str(py), "-c", "import osint_selfplay.loop, osint_selfplay.rollout, trl, peft, datasets, accelerate"])
