"""Run artifacts: atomic writes, phase markers (for --resume), the run manifest, model cards.

A file is written to a temporary name in the same folder and renamed into place; a folder is
built under a temporary name and renamed. A crash therefore leaves either the old state or the
new one, never a truncated artifact. A phase is done when its marker exists; the marker is
written last, after everything the phase produces.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _fault_pause() -> None:
    """Fault injection for the crash tests: ``OSINT_SELFPLAY_WRITE_PAUSE=<seconds>`` holds every
    atomic write between "fully written under a temporary name" and "renamed into place", so a
    test can kill the run exactly while it is writing an artifact."""
    pause = os.environ.get("OSINT_SELFPLAY_WRITE_PAUSE")
    if pause:
        time.sleep(float(pause))


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        _fault_pause()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def atomic_write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    atomic_write_text(path, "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def atomic_dir(path: Path, build: Callable[[Path], None]) -> None:
    """Build a folder with ``build(tmp)`` and move it to ``path`` (replacing an older one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        build(tmp)
        _fault_pause()
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def clean_partials(root: Path) -> None:
    """Remove temporary files and folders a killed run left behind (names starting with '.')."""
    if not root.exists():
        return
    for p in sorted(root.rglob(".*"), key=lambda q: len(q.parts), reverse=True):
        if p.name.startswith(".") and p.exists():
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


class Phases:
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
    from osint_gym.provenance import git_sha as _git_sha

    return _git_sha()


def package_versions() -> dict[str, str | None]:
    from osint_gym.provenance import package_versions as _versions

    return _versions(("osint-gym", "osint-selfplay", "osint-eval", "torch", "transformers", "trl", "peft", "datasets", "accelerate"))


def write_model_card(folder: Path, *, base_model: str, role: str, config: dict[str, Any], data: dict[str, Any],
                     metrics: dict[str, Any]) -> None:
    """A README.md model card: base model, config, data, the round's metrics."""
    lines = [
        "---", "library_name: transformers", "tags: [osint-gym, osint-selfplay, grpo, trl]", f"base_model: {base_model}", "---", "",
        f"# osint-selfplay {role}", "",
        f"Trained by osint-selfplay on OSINT-v0 (osint-gym) from `{base_model}`.", "",
        "## Data", "", "```json", json.dumps(data, indent=2, sort_keys=True, default=str), "```", "",
        "## Metrics of this phase", "", "```json", json.dumps(metrics, indent=2, sort_keys=True, default=str), "```", "",
        "## Configuration", "", "```json", json.dumps(config, indent=2, sort_keys=True, default=str), "```", "",
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
    import platform

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
    import hashlib

    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    if not files or sum(p.stat().st_size for p in files) > max_bytes:
        return None
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()
