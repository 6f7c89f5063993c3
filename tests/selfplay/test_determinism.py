"""The same seeds give byte-identical task sets and artifacts across processes: dry runs with different
PYTHONHASHSEED values, real runs repeated with the same pinned torch thread count."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import artifact_digests, first_difference, micro_overrides

pytestmark = pytest.mark.slow  # five runs of the self-play CLI in subprocesses, three of them trained


def test_dry_run_artifacts_are_identical_across_hash_seeds(tmp_path, tiny_path):
    digests = []
    for hash_seed in ("0", "4242"):
        out = tmp_path / f"run-{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run(
            [sys.executable, "-m", "osint_selfplay", "train", "--dry-run", "--set", *micro_overrides(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        digests.append(artifact_digests(out))
    assert digests[0].keys() == digests[1].keys()
    differing = [k for k in digests[0] if digests[0][k] != digests[1][k]]
    assert differing == []


def test_a_real_run_repeated_with_its_pinned_thread_count_gives_identical_artifacts(tmp_path, tiny_path):
    """Two real (trained, evaluated) runs of one config with 2 torch threads write the same bytes, and a
    third with 1 thread records its count; run.json records the thread count, the CPU kernel set and the
    base model's digest that the comparison of two machines starts from. (Another thread count may
    change the last bits of CPU float sums, and then every sample after them, as `torch_threads` says:
    on an Intel Xeon with torch 2.13 a 1- and a 2-thread warm start differed, on an AMD EPYC they had not.)"""
    digests, manifests = [], []
    for k, threads in enumerate(("2", "2", "1")):
        out = tmp_path / f"run-{k}"
        env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        overrides = micro_overrides(out, **{"eval.limit": 8})
        proc = subprocess.run([sys.executable, "-m", "osint_selfplay", "train", "--set", *overrides],
                              env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        manifests.append(json.loads((out / "run.json").read_text()))
        digests.append({k: v for k, v in artifact_digests(out).items() if k != "run.json"})
    assert [m["machine"]["torch_threads"] for m in manifests] == [2, 2, 1]
    assert manifests[0]["machine"]["cpu_capability"] == manifests[2]["machine"]["cpu_capability"]
    assert manifests[0]["base_models"] == manifests[1]["base_models"] == manifests[2]["base_models"]
    assert len(manifests[0]["base_models"]["answerer"]["sha256"]) == 64
    assert any(k.endswith("model.safetensors") for k in digests[0])  # trained weights are compared too
    assert digests[0].keys() == digests[2].keys()
    assert first_difference(digests[0], digests[1], tmp_path / "run-0") == []
