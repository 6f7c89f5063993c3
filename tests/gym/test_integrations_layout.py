"""The integrations layer (`osint_gym.integrations`, issue 44): where the adapters live now, that the package
imports no framework, that the documented ways in (Inspect's entry point, the remote env id, the CLI) name the
new paths, and that every old import path still gives the very same module, with one FutureWarning."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
import tomllib

from osint_gym._moved import MOVED, new_name
from osint_gym.registration import REMOTE_ENV_ID

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "packages" / "osint-gym" / "src" / "osint_gym"
HEAVY = ("inspect_ai", "verifiers", "trl", "fastapi", "uvicorn", "websockets", "openai", "torch")

# every old path users may have in code or configs -> its new path: imported here (the test env has the serve
# extra), and those of the Inspect and verifiers adapters, imported where they are installed (tests/adapters)
HERE = {
    "osint_gym.trl_env": "osint_gym.integrations.trl_env",
    "osint_gym.serve": "osint_gym.integrations.serve",
    "osint_gym.serve.protocol": "osint_gym.integrations.serve.protocol",
    "osint_gym.serve.process": "osint_gym.integrations.serve.process",
    "osint_gym.serve.client": "osint_gym.integrations.serve.client",
    "osint_gym.serve.remote": "osint_gym.integrations.serve.remote",
    "osint_gym.serve.app": "osint_gym.integrations.serve.app",
}
IN_ADAPTER_ENVS = {
    "osint_gym.inspect_tools": "osint_gym.integrations.inspect_tools",
    "osint_gym.inspect_task": "osint_gym.integrations.inspect_task",
    "osint_gym.verifiers_env": "osint_gym.integrations.verifiers_env",
}
OLD_PATHS = {**HERE, **IN_ADAPTER_ENVS}

# imports each old path in a fresh interpreter (an old name warns once per process): whether it is the new
# module, and the FutureWarnings that its own import raised
_PROBE = """
import importlib, json, sys, warnings
warnings.simplefilter("always")
out = {}
for old, new in json.loads(sys.argv[1]):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"import {old}")  # an import statement: the warning names this line
    module = sys.modules[old]
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        exec(f"import {old}")
    out[old] = {"same": module is importlib.import_module(new) and sys.modules[old] is module,
                "name": module.__name__, "spec": module.__spec__.name,
                "warnings": [str(w.message) for w in caught if issubclass(w.category, FutureWarning)],
                "files": sorted({w.filename for w in caught}), "again": [str(w.message) for w in again]}
print(json.dumps(out))
"""


def _run(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def probed() -> dict[str, dict]:
    """Every old path of this env, each imported in order (osint_gym.serve before its submodules, so each
    submodule's own import warns only for itself)."""
    return json.loads(_run(_PROBE, json.dumps(list(HERE.items()))))


def test_the_old_paths_are_all_known_to_the_alias_finder():
    assert {old: new_name(old) for old in OLD_PATHS} == OLD_PATHS
    assert set(MOVED) == {"osint_gym.trl_env", "osint_gym.serve", "osint_gym.inspect_task",
                          "osint_gym.inspect_tools", "osint_gym.verifiers_env"}
    assert new_name("osint_gym.env") is None and new_name("osint_gym.server") is None


@pytest.mark.parametrize("old", list(HERE))
def test_an_old_path_is_the_new_module_and_warns_once(old, probed):
    new = HERE[old]
    got = probed[old]
    assert got["same"] and got["name"] == got["spec"] == new
    assert len(got["warnings"]) == 1 and new in got["warnings"][0] and old in got["warnings"][0]
    assert got["files"] == ["<string>"]  # the warning points at the importing line, not at the import system
    assert got["again"] == []  # once: a second import finds the module in sys.modules


def test_a_from_import_of_an_old_submodule_gives_the_same_objects():
    code = ("import warnings; warnings.simplefilter('error')\n"
            "from osint_gym.integrations.trl_env import OSINTToolEnv as new, task_rows as new_rows\n"
            "from osint_gym.integrations.serve.process import ServerProcess as new_process\n"
            "warnings.simplefilter('ignore', FutureWarning)\n"
            "from osint_gym.trl_env import OSINTToolEnv, task_rows\n"
            "from osint_gym.serve.process import ServerProcess\n"
            "import osint_gym.serve.process, osint_gym.integrations.serve.process as p\n"
            "print(OSINTToolEnv is new and task_rows is new_rows and ServerProcess is new_process"
            " and osint_gym.serve.process is p and osint_gym.serve is osint_gym.integrations.serve)\n")
    assert _run(code).strip() == "True"


def test_an_old_path_that_never_existed_is_still_not_found():
    with warnings.catch_warnings(), pytest.raises(ModuleNotFoundError):
        warnings.simplefilter("ignore", FutureWarning)  # osint_gym.serve itself, where not imported yet
        importlib.import_module("osint_gym.serve.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("osint_gym.no_such_module")


def test_the_integrations_package_imports_no_framework():
    code = ("import sys, osint_gym, osint_gym.integrations, osint_gym.integrations.serve\n"
            "import osint_gym.integrations.trl_env\n"
            f"import json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n")
    assert json.loads(_run(code)) == []


def test_the_top_level_keeps_no_shim_of_a_moved_module():
    assert not [p.name for p in PACKAGE.iterdir()
                if p.stem in {"inspect_task", "inspect_tools", "trl_env", "verifiers_env", "serve"}]
    moved = {p.name for p in (PACKAGE / "integrations").iterdir() if not p.name.startswith("__")}
    assert {"inspect_task.py", "inspect_tools.py", "trl_env.py", "verifiers_env.py", "serve"} <= moved
    doc = importlib.import_module("osint_gym.integrations").__doc__ or ""
    for name in ("trl_env", "inspect_task", "verifiers_env", "serve", "inspect eval osint_gym/osint_v0",
                 "vf-eval osint-gym", "environment_factory", "osint-gym serve", "OSINT-Remote-v0"):
        assert name in doc


def test_the_inspect_entry_point_names_the_new_module():
    pyproject = tomllib.loads((ROOT / "packages" / "osint-gym" / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["entry-points"]["inspect_ai"] == {"osint_gym": "osint_gym.integrations.inspect_task"}
    # found without importing inspect_ai; the installed metadata (an environment installed before the move keeps the
    # old one until it is reinstalled) is checked where Inspect is installed: tests/adapters/test_inspect.py
    assert importlib.util.find_spec(pyproject["project"]["entry-points"]["inspect_ai"]["osint_gym"]) is not None


def test_the_remote_env_id_resolves_to_the_new_module():
    entry_point = gym.spec(REMOTE_ENV_ID).entry_point
    assert entry_point == "osint_gym.integrations.serve.remote:RemoteOSINTEnv"
    creator = gym.envs.registration.load_env_creator(entry_point)
    remote = importlib.import_module("osint_gym.integrations.serve.remote")
    assert creator is remote.RemoteOSINTEnv and creator.__module__ == "osint_gym.integrations.serve.remote"


_OLD_IMPORT = re.compile(r"^\s*(from|import)\s+osint_gym\.(serve|trl_env|inspect_task|inspect_tools|verifiers_env)\b"
                         r"|^\s*from\s+osint_gym\s+import\s+.*\b(serve|trl_env|inspect_task|inspect_tools"
                         r"|verifiers_env)\b", re.MULTILINE)


def test_nothing_here_imports_an_old_path():
    """The CLI (``python -m osint_gym serve``), the packages, tests, benchmarks and scripts use the new paths."""
    files = [*(ROOT / "packages").glob("*/src/**/*.py"), *(ROOT / "tests").rglob("*.py"),
             *(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")]
    this = Path(__file__).resolve()
    old = {str(p.relative_to(ROOT)) for p in files if p.resolve() != this and _OLD_IMPORT.search(p.read_text())}
    assert old == set()
    assert "osint_gym.integrations.serve.app import serve" in (PACKAGE / "cli.py").read_text(encoding="utf-8")
