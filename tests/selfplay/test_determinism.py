"""The same seeds give byte-identical task sets and dry-run artifacts across processes with different
PYTHONHASHSEED values."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import micro_overrides


def _digest(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        if p.suffix == ".json":
            content = json.loads(p.read_text())

            def drop(o):
                if isinstance(o, dict):
                    for k in ("wall_seconds", "seconds", "started", "solver_seconds", "reward_seconds"):
                        o.pop(k, None)
                    for v in o.values():
                        drop(v)
                elif isinstance(o, list):
                    for v in o:
                        drop(v)

            drop(content)
            if p.name == "report.json":
                content.pop("git_sha", None)
                content["config"].pop("output_dir", None)
            if p.name == "run.json":
                content["config"].pop("output_dir", None)
            blob = json.dumps(content, sort_keys=True, default=str).replace(str(root), "<root>").encode()
        elif p.suffix == ".md" and p.parent.name == "final_model":
            blob = p.read_text().replace(str(root), "<root>").encode()
        else:
            blob = p.read_bytes().replace(str(root).encode(), b"<root>")
        out[str(p.relative_to(root))] = hashlib.sha256(blob).hexdigest()
    return out


def test_dry_run_artifacts_are_identical_across_hash_seeds(tmp_path, tiny_path):
    digests = []
    for hash_seed in ("0", "4242"):
        out = tmp_path / f"run-{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-m", "osint_selfplay", "train", "--dry-run", "--set", *micro_overrides(out)],
                              env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        digests.append(_digest(out))
    assert digests[0].keys() == digests[1].keys()
    differing = [k for k in digests[0] if digests[0][k] != digests[1][k]]
    assert differing == []
