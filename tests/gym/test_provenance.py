"""osint_gym.provenance: the one implementation of package versions and the git sha."""

from __future__ import annotations

import platform
import subprocess
import time
from importlib.metadata import version

from osint_gym import provenance


def test_package_versions_name_installed_and_missing_packages():
    v = provenance.package_versions(["osint-gym", "no-such-package-xyz"])
    assert v == {"python": platform.python_version(), "osint-gym": version("osint-gym"), "no-such-package-xyz": None}
    assert provenance.package_versions(["osint-gym"], python=False) == {"osint-gym": version("osint-gym")}


def test_git_sha_is_the_checked_out_commit_or_none_outside_a_repository(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    repo = tmp_path / "repo"
    (repo / "f").write_text("x")
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert provenance.git_sha(repo) == head and len(head) == 40
    (tmp_path / "plain").mkdir()
    assert provenance.git_sha(tmp_path / "plain") is None


def test_git_sha_gives_up_after_its_timeout(tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nsleep 5\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}")
    t0 = time.perf_counter()
    assert provenance.git_sha(tmp_path, timeout=0.3) is None
    assert time.perf_counter() - t0 < 2.0
