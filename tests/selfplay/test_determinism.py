"""The same seeds give byte-identical task sets and dry-run artifacts across processes with different
PYTHONHASHSEED values."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import artifact_digests, micro_overrides


def test_dry_run_artifacts_are_identical_across_hash_seeds(tmp_path, tiny_path):
    digests = []
    for hash_seed in ("0", "4242"):
        out = tmp_path / f"run-{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-m", "osint_selfplay", "train", "--dry-run", "--set", *micro_overrides(out)],
                              env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        digests.append(artifact_digests(out))
    assert digests[0].keys() == digests[1].keys()
    differing = [k for k in digests[0] if digests[0][k] != digests[1][k]]
    assert differing == []
