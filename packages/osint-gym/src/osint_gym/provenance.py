"""Provenance of a run or a report: installed package versions and the git commit it came from.

One implementation, shared by osint-eval's reports and osint-selfplay's run manifests.
"""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

GIT_TIMEOUT_S = 2.0  # a hung git (network file system, credential prompt) must not stall a run


def package_versions(names: Iterable[str], *, python: bool = True) -> dict[str, str | None]:
    """``{"python": "3.11.9", "osint-gym": "0.1.0", "torch": None, ...}``: None for a package that is not installed."""
    out: dict[str, str | None] = {"python": platform.python_version()} if python else {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def git_sha(cwd: str | Path | None = None, *, timeout: float = GIT_TIMEOUT_S) -> str | None:
    """The commit checked out in ``cwd`` (default: the current directory), or None outside a repository,
    without git, or when git does not answer within ``timeout`` seconds."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=timeout, check=True,
                             cwd=cwd, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None
