"""Run artifacts: phase markers (for --resume), the run manifest, model cards.

Every artifact is written atomically by `osint_gym.files` (re-exported here for the run's modules):
a crash leaves either the old state or the new one, never a truncated artifact. A phase is done
when its marker exists; the marker is written last, after everything the phase produces.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# the one implementation of atomic writes, re-exported under the names the run's modules use
from osint_gym.files import atomic_dir as atomic_dir
from osint_gym.files import atomic_write_json as atomic_write_json
from osint_gym.files import atomic_write_jsonl as atomic_write_jsonl
from osint_gym.files import clean_partials as clean_partials
from osint_gym.files import read_jsonl as read_jsonl
from osint_gym.provenance import git_sha as _git_sha
from osint_gym.provenance import package_versions as _versions


class PhaseMarkers:
    """Phase markers under ``<output_dir>/round_NNN/<phase>.done.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def marker(self, round_index: int | None, phase: str) -> Path:
        folder = self.root if round_index is None else self.root / f"round_{round_index:03d}"
        return folder / f"{phase}.done.json"

    def done(self, round_index: int | None, phase: str) -> dict[str, Any] | None:
        m = self.marker(round_index, phase)
        return json.loads(m.read_text()) if m.is_file() else None

    def mark(self, round_index: int | None, phase: str, summary: dict[str, Any]) -> None:
        atomic_write_json(self.marker(round_index, phase), summary)


def git_sha() -> str | None:
    return _git_sha()


def package_versions() -> dict[str, str | None]:
    return _versions(
        ("osint-gym", "osint-selfplay", "osint-eval", "torch", "transformers", "trl", "peft", "datasets", "accelerate")
    )


def write_model_card(folder: Path, *, base_model: str, role: str, config: dict[str, Any], data: dict[str, Any],
                     metrics: dict[str, Any]) -> None:
    """A README.md model card: base model, config, data, the round's metrics."""
    lines = [
        "---",
        "library_name: transformers",
        "tags: [osint-gym, osint-selfplay, grpo, trl]",
        f"base_model: {base_model}",
        "---",
        "",
        f"# osint-selfplay {role}",
        "",
        f"Trained by osint-selfplay on OSINT-v0 (osint-gym) from `{base_model}`.",
        "",
        "## Data",
        "",
        "```json",
        json.dumps(data, indent=2, sort_keys=True, default=str),
        "```",
        "",
        "## Metrics of this phase",
        "",
        "```json",
        json.dumps(metrics, indent=2, sort_keys=True, default=str),
        "```",
        "",
        "## Configuration",
        "",
        "```json",
        json.dumps(config, indent=2, sort_keys=True, default=str),
        "```",
        "",
    ]
    (folder / "README.md").write_text("\n".join(lines), encoding="utf-8")


def pin_determinism(threads: int, deterministic: bool) -> dict[str, Any]:
    """Pin what makes two runs of one config on one kind of machine byte-identical, and return what
    a reader needs to judge a rerun elsewhere (recorded in run.json): the thread count, torch's CPU
    kernel set (AVX2 / AVX512 kernels sum floats in different orders), the devices."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    # On CUDA, deterministic kernels and cuBLAS workspaces; on the CPU the flag buys nothing (runs at one
    # kernel set and thread count were byte-identical without it) and slows the SFT warm start
    # (benchmarks/RESULTS.md), so it is left off there.
    if deterministic and torch.cuda.is_available():
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS (read at CUDA init)
        torch.use_deterministic_algorithms(True, warn_only=True)
    return {"torch_threads": torch.get_num_threads(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "cpu": _cpu_model(), "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled()}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def folder_digest(folder: str, max_bytes: int = 256 << 20) -> str | None:
    """sha256 over a model folder's files (names and bytes), or None for a hub id or a folder too
    large to hash quickly: the untrained model is a run's first input, so it is the first thing to
    compare when two runs differ."""
    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    if not files or sum(p.stat().st_size for p in files) > max_bytes:
        return None
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@contextlib.contextmanager
def log_file(path: Path, main: bool = True) -> Iterator[None]:
    """Everything osint-selfplay logs (its phases, every trainer's per-step log dict) appended to ``path`` while
    the run runs; the terminal keeps the progress bars, warnings and the summary."""
    if not main:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s", "%H:%M:%S"))
    logger = logging.getLogger("osint_selfplay")
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()
