"""Defect (a): the default run needs no browser (the Chromium test is deselected, not skipped), and
``-m browser`` on the command line (``hatch test -m browser``, which .ci/run runs) selects exactly it.
The default run is the fast tier (no slow tests); the full suite's ``-m`` brings them back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROWSER_TEST = "tests/eval/test_report.py::test_html_renders_in_headless_chromium_without_console_errors"


FULL_SUITE = ("-m", "not browser and not adapters")  # what .ci/run and the README pass for the full suite


def _collected(*args: str, path: str = "tests/eval/test_report.py") -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", *args, path],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_default_run_deselects_the_browser_test_and_keeps_the_html_checks():
    ids = _collected()
    assert BROWSER_TEST not in ids
    assert "tests/eval/test_report.py::test_html_parses_as_a_self_contained_page_with_hostile_text_as_text" in ids


def test_browser_marker_on_the_command_line_selects_exactly_the_browser_test():
    assert _collected("-m", "browser") == [BROWSER_TEST]


def test_the_default_run_leaves_out_slow_tests_and_the_full_suite_runs_them():
    path = "tests/selfplay/test_tiny.py"
    slow = f"{path}::test_tiny_build_is_deterministic"
    fast = f"{path}::test_tiny_model_reloads_offline_with_its_chat_template"
    default, full = _collected(path=path), _collected(*FULL_SUITE, path=path)
    assert fast in default and slow not in default
    assert slow in full and set(default) < set(full)


def _run_suite(exit_code: int) -> subprocess.CompletedProcess:
    """.ci/run's run_suite function, run on a command that exits with ``exit_code``."""
    ci = (ROOT / ".ci" / "run").read_text()
    func = ci[ci.index("run_suite() {"):ci.index("\n}\n", ci.index("run_suite() {")) + 2]
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{func}\nrun_suite demo bash -c 'exit {exit_code}'"],
        capture_output=True,
        text=True,
    )


def test_ci_fails_when_a_suite_fails_or_collects_nothing():
    ci = (ROOT / ".ci" / "run").read_text()
    assert (
        f'hatch test -p -m "{FULL_SUITE[1]}"' in ci and 'run_suite "hatch test -m browser" hatch test -m browser' in ci
    )
    assert _run_suite(0).returncode == 0
    empty = _run_suite(5)
    assert empty.returncode == 1 and empty.stderr.strip() == "demo: collected no tests"
    failed = _run_suite(1)
    assert failed.returncode == 1 and failed.stderr.strip() == "demo: failed (exit 1)"
