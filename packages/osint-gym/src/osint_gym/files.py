"""Files written whole or not at all: the one implementation of atomic writes for the three packages.

A file is written to a temporary name in its own folder (a name starting with '.'), flushed to disk
and renamed into place; a folder is built under a temporary name and renamed. A crash or an exception
therefore leaves either the old file or the new one, never a truncated one, and no temporary file
(`clean_partials` removes those a killed process could not).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

WRITE_PAUSE_ENV = "OSINT_WRITE_PAUSE"


def _fault_pause() -> None:
    """Fault injection for the crash tests: ``OSINT_WRITE_PAUSE=<seconds>`` holds every atomic write
    between "fully written under a temporary name" and "renamed into place", so a test can kill a
    process exactly while it is writing."""
    pause = os.environ.get(WRITE_PAUSE_ENV)
    if pause:
        time.sleep(float(pause))


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, replacing it only once the new content is on disk."""
    path = Path(path)
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


def atomic_write_json(path: str | Path, data: Any, *, indent: int = 2, sort_keys: bool = True) -> None:
    """``data`` as indented JSON (values JSON does not know written as their ``str``)."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, default=str, ensure_ascii=False)
    atomic_write_text(path, text + "\n")


def atomic_write_jsonl(path: str | Path, rows: Iterable[Any], *, sort_keys: bool = True) -> None:
    """One JSON value per line."""
    atomic_write_text(path, "".join(json.dumps(r, sort_keys=sort_keys, ensure_ascii=False) + "\n" for r in rows))


def read_jsonl(path: str | Path) -> list[Any]:
    """The values of a JSONL file (blank lines skipped)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def atomic_dir(path: str | Path, build: Callable[[Path], None]) -> None:
    """Build a folder with ``build(tmp)`` and move it to ``path`` (replacing an older one)."""
    path = Path(path)
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


def clean_partials(root: str | Path) -> None:
    """Remove the temporary files and folders a killed process left under ``root`` (names starting with '.')."""
    root = Path(root)
    if not root.exists():
        return
    for p in sorted(root.rglob(".*"), key=lambda q: len(q.parts), reverse=True):
        if p.name.startswith(".") and p.exists():
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
