"""Scale-out features, tested on CPU as far as they can be: a vLLM server config reaches TRL and a
missing server fails within seconds; the accelerate/DeepSpeed configs load in accelerate; hub
passthrough, `osint-selfplay push` and `launch --dry-run` (the standalone SSH script: tests/test_packaging.py)."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from osint_selfplay import phases, trl_compat
from osint_selfplay.config import load_config
from osint_selfplay.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "configs" / "selfplay" / "gpu-qwen-1.5b-vllm.toml"
SERVER = ["vllm_mode='server'", "vllm_server_base_url='http://10.0.0.3:8000'", "vllm_server_timeout=30"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "osint_selfplay", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=ROOT)


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
                                  f"vllm_server_base_url='http://127.0.0.1:{_free_port()}'"])
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
    cfg = load_config(str(GPU), [f"output_dir='{tmp_path}'", "grpo_answerer.push_to_hub=true",
                                 "grpo_answerer.hub_model_id='me/osint-answerer'", "grpo_answerer.hub_strategy='checkpoint'",
                                 "grpo_answerer.hub_private_repo=true"])
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
                env={"HF_ENDPOINT": f"http://127.0.0.1:{_free_port()}", "HF_TOKEN": "hf_test", "HF_HUB_OFFLINE": "0"})
    assert dead.returncode == 2 and dead.stderr.startswith(f"osint-selfplay: error: cannot push {run} to me/x: ")
    assert dead.stderr.count("\n") == 1 and time.monotonic() - t0 < 60


def test_launch_dry_run_prints_the_job_spec(tmp_path):
    config = ROOT / "configs" / "selfplay" / "tiny-cpu.toml"
    out = _cli("launch", "--config", str(config), "--set", "rounds=2", "--flavor", "t4-small", "--push-to", "me/run",
               "--dry-run")
    assert out.returncode == 0, out.stderr
    spec = json.loads(out.stdout)
    assert spec["flavor"] == "t4-small" and spec["timeout"] == "8h" and spec["secrets"] == ["HF_TOKEN", "WANDB_API_KEY"]
    assert base64.b64decode(spec["env"]["OSINT_SELFPLAY_CONFIG"]) == config.read_bytes()
    assert spec["command"][:2] == ["bash", "-c"]
    script = spec["command"][2]
    assert "pip install --no-cache-dir osint-gym osint-eval[hf] osint-selfplay[vllm,wandb]" in script
    assert "osint-selfplay train --config run.toml --set rounds=2" in script
    assert script.endswith("osint-selfplay push runs/tiny-cpu --repo-id me/run")
    bad = _cli("launch", "--config", str(config), "--set", "rounds=0", "--dry-run")
    assert bad.returncode == 2 and "rounds must be" in bad.stderr and not bad.stdout
    no_token = _cli("launch", "--config", str(config), env={"HF_TOKEN": "", "HF_HUB_OFFLINE": "0"})
    assert no_token.returncode == 2 and "HF_TOKEN is not set" in no_token.stderr
