"""Scale-out features, tested on CPU as far as they can be: a vLLM server config reaches TRL and a
missing server fails within seconds; the accelerate/DeepSpeed configs load in accelerate; hub
passthrough, `osint-selfplay push` and `launch --dry-run` (the standalone SSH script: tests/test_packaging.py)."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osint_selfplay import phases, trl_compat
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError
from tests.serving import free_port

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "configs" / "selfplay" / "gpu-qwen-1.5b-vllm.toml"
SERVER = ["vllm_mode='server'", "vllm_server_base_url='http://10.0.0.3:8000'", "grpo_generator.vllm_server_timeout=30",
          "grpo_answerer.vllm_server_timeout=30"]


def _cli(*args, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "osint_selfplay", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )


def test_vllm_server_mode_reaches_trl(tmp_path):
    cfg = load_config(str(GPU), [f"output_dir='{tmp_path / 'run'}'", *SERVER])
    for path in ("grpo_generator", "grpo_answerer"):
        args = trl_compat.grpo_config(getattr(cfg, path), cfg, str(tmp_path / "t"), 0, path)
        assert (args.use_vllm, args.vllm_mode, args.vllm_server_base_url, args.vllm_server_timeout) == \
            (True, "server", "http://10.0.0.3:8000", 30.0)
    with pytest.raises(ConfigError, match="needs vllm_server_base_url"):
        load_config(str(GPU), [f"output_dir='{tmp_path}'", "vllm_mode='server'"])
    with pytest.raises(ConfigError, match="is set by the run, not per phase"):
        load_config(str(GPU), [f"output_dir='{tmp_path}'", "grpo_answerer.vllm_server_base_url='http://x:1'"])


def test_missing_or_silent_vllm_server_fails_within_seconds(tmp_path):
    dead = load_config(str(GPU), [f"output_dir='{tmp_path}'", "vllm_mode='server'",
                                  f"vllm_server_base_url='http://127.0.0.1:{free_port()}'"])
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match=r"no vLLM server answers at http://127\.0\.0\.1:\d+/health.*trl vllm-serve"):
        phases.check_vllm(dead)
    assert time.monotonic() - t0 < 5
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        cfg = load_config(str(GPU), [f"output_dir='{tmp_path}'", "vllm_mode='server'",
                                     f"vllm_server_base_url='http://127.0.0.1:{silent.getsockname()[1]}'"])
        t0 = time.monotonic()
        with pytest.raises(ConfigError, match="no vLLM server answers"):
            phases.check_vllm(cfg, probe_seconds=1.0)
        assert time.monotonic() - t0 < 4


@pytest.mark.parametrize(("name", "stage", "machines", "processes"),
                         [("zero2", 2, 1, 8), ("zero3", 3, 1, 8), ("multi-node-zero3", 3, 2, 16)])
def test_accelerate_deepspeed_configs_load_in_accelerate(name, stage, machines, processes):
    from accelerate.commands.config.config_args import ClusterConfig
    from accelerate.utils import DistributedType

    cfg = ClusterConfig.from_yaml_file(str(ROOT / "configs" / "accelerate" / f"{name}.yaml"))
    assert cfg.distributed_type == DistributedType.DEEPSPEED and cfg.deepspeed_config["zero_stage"] == stage
    assert (cfg.num_machines, cfg.num_processes, cfg.mixed_precision) == (machines, processes, "bf16")


def test_hub_settings_pass_through_to_grpo_config(tmp_path):
    cfg = load_config(
        str(GPU),
        [
            f"output_dir='{tmp_path}'",
            "grpo_answerer.push_to_hub=true",
            "grpo_answerer.hub_model_id='me/osint-answerer'",
            "grpo_answerer.hub_strategy='checkpoint'",
            "grpo_answerer.hub_private_repo=true",
        ],
    )
    args = trl_compat.grpo_config(cfg.grpo_answerer, cfg, str(tmp_path / "t"), 0, "grpo_answerer")
    assert (args.push_to_hub, args.hub_model_id, args.hub_strategy, args.hub_private_repo) == \
        (True, "me/osint-answerer", "checkpoint", True)


def _run_folder(tmp_path):
    run = tmp_path / "run"
    (run / "eval").mkdir(parents=True)
    (run / "run.json").write_text("{}")
    (run / "summary.json").write_text("{}")
    return run


def test_push_fails_with_one_line_without_network(tmp_path):
    run = _run_folder(tmp_path)
    bad = _cli("push", str(tmp_path), "--repo-id", "me/x")
    assert bad.returncode == 2 and "not an osint-selfplay run folder" in bad.stderr and bad.stderr.count("\n") == 1
    assert "--repo-id must look like" in _cli("push", str(run), "--repo-id", "no-slash").stderr
    offline = _cli("push", str(run), "--repo-id", "me/x", env={"HF_HUB_OFFLINE": "1", "HF_TOKEN": "hf_test"})
    assert offline.returncode == 2 and offline.stderr.strip() == \
        "osint-selfplay: error: cannot push: HF_HUB_OFFLINE is set (unset it on a machine with network access)"
    t0 = time.monotonic()
    dead = _cli("push", str(run), "--repo-id", "me/x",
                env={"HF_ENDPOINT": f"http://127.0.0.1:{free_port()}", "HF_TOKEN": "hf_test", "HF_HUB_OFFLINE": "0"})
    assert dead.returncode == 2 and dead.stderr.startswith(f"osint-selfplay: error: cannot push {run} to me/x: ")
    assert dead.stderr.count("\n") == 1 and time.monotonic() - t0 < 60


def _head_or_any() -> str:
    """The checkout's HEAD (CI's checkout is a git clone); a full sha of nothing where it is not one."""
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "0" * 40


def test_launch_dry_run_prints_the_job_spec(tmp_path):
    config = ROOT / "configs" / "selfplay" / "tiny-cpu.toml"
    sha = _head_or_any()
    source = ["--repo-url", "git@github.com:me/osint-gym.git", "--commit", sha]
    out = _cli("launch", "--config", str(config), "--set", "rounds=2", "--flavor", "t4-small", "--push-to", "me/run",
               *source, "--dry-run")
    assert out.returncode == 0, out.stderr
    spec = json.loads(out.stdout)
    assert spec["flavor"] == "t4-small" and spec["timeout"] == "8h" and spec["secrets"] == ["HF_TOKEN", "WANDB_API_KEY"]
    assert base64.b64decode(spec["env"]["OSINT_SELFPLAY_CONFIG"]) == config.read_bytes()
    assert spec["command"][:2] == ["bash", "-c"] and spec["labels"]["commit"] == sha[:12]
    script = spec["command"][2]
    install = next(part for part in script.split(" && ") if part.startswith("pip install"))
    url = f"git+https://github.com/me/osint-gym.git@{sha}"
    assert shlex.split(install)[3:] == [f"osint-gym @ {url}#subdirectory=packages/osint-gym",
                                        f"osint-eval[hf] @ {url}#subdirectory=packages/osint-eval",
                                        f"osint-selfplay[vllm,wandb] @ {url}#subdirectory=packages/osint-selfplay"]
    assert "osint-selfplay train --config run.toml --set rounds=2" in script
    assert script.endswith("osint-selfplay push runs/tiny-cpu --repo-id me/run")
    bad = _cli("launch", "--config", str(config), "--set", "rounds=0", *source, "--dry-run")
    assert bad.returncode == 2 and "rounds must be" in bad.stderr and not bad.stdout
    no_token = _cli("launch", "--config", str(config), *source, env={"HF_TOKEN": "", "HF_HUB_OFFLINE": "0"})
    assert no_token.returncode == 2 and "HF_TOKEN is not set" in no_token.stderr


def test_the_job_installs_no_project_package_by_bare_name(tmp_path):
    """Every word of the job's pip line that names one of the three packages is a direct git reference
    pinned to a full commit: an index is never asked for them."""
    config = ROOT / "configs" / "selfplay" / "tiny-cpu.toml"
    out = _cli("launch", "--config", str(config), "--repo-url", "https://example.org/me/osint.git",
               "--commit", _head_or_any(), "--dry-run")
    assert out.returncode == 0, out.stderr
    script = json.loads(out.stdout)["command"][2]
    words = [w for part in script.split(" && ") if part.startswith("pip ") for w in shlex.split(part)]
    named = [w for w in words if re.match(r"^osint[-_](gym|eval|selfplay)", w)]
    assert len(named) == 3
    assert all(
        re.search(r" @ git\+https://example\.org/me/osint\.git@[0-9a-f]{40}#subdirectory=packages/osint-", w)
        for w in named
    )


def _repo(tmp_path: Path, remote: str | None) -> tuple[Path, str]:
    """A git checkout with packages/ committed; ``remote`` as its origin (a remote-tracking branch holds HEAD)."""
    root = tmp_path / "checkout"
    (root / "packages").mkdir(parents=True)
    (root / "packages" / "x.py").write_text("x = 1\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run([*git, *args], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    if remote is not None:
        subprocess.run([*git, "remote", "add", "origin", remote], check=True)
        subprocess.run([*git, "update-ref", "refs/remotes/origin/main", sha], check=True)
    return root, sha


def test_the_checkout_source_is_its_pushed_commit_and_refuses_what_a_job_could_not_install(tmp_path):
    from osint_selfplay.hub import Source, checkout_source

    root, sha = _repo(tmp_path / "a", "git@github.com:me/osint-gym.git")
    assert checkout_source(root=root) == Source("https://github.com/me/osint-gym.git", sha)
    (root / "packages" / "x.py").write_text("x = 2\n")
    with pytest.raises(ConfigError, match=f"packages/ has uncommitted changes .* installs {sha[:12]}"):
        checkout_source(root=root)
    assert checkout_source(commit=sha, root=root).commit == sha  # an explicit commit: what the job installs
    with pytest.raises(ConfigError, match="'nope' is not a commit"):
        checkout_source(commit="nope", root=root)
    unpushed, _ = _repo(tmp_path / "b", None)
    with pytest.raises(ConfigError, match="has no 'origin' remote"):
        checkout_source(root=unpushed)
    subprocess.run(["git", "-C", str(unpushed), "remote", "add", "origin", "https://example.org/r.git"], check=True)
    with pytest.raises(ConfigError, match="is on no remote branch"):
        checkout_source(root=unpushed)
    local, _ = _repo(tmp_path / "c", "/srv/git/osint.git")
    with pytest.raises(ConfigError, match="cannot clone the git remote '/srv/git/osint.git': pass --repo-url"):
        checkout_source(root=local)
    outside = tmp_path / "not-a-checkout"
    outside.mkdir()
    with pytest.raises(ConfigError, match="not installed from a git checkout"):
        checkout_source(root=outside)
    with pytest.raises(ConfigError, match="full 40-character commit"):
        checkout_source("https://example.org/r.git", "abc123", root=outside)
    assert checkout_source("https://example.org/r.git", "a" * 40, root=outside) == Source(
        "https://example.org/r.git", "a" * 40
    )
