"""The layout rules the README states: small modules, small functions, layers that point one way."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "packages").glob("*/src/**/*.py"))
# Sizes count statements (every simple or compound statement, nested ones included; docstrings do not
# count), so that explaining code, or unpacking a long statement onto several lines, costs nothing.
MAX_MODULE_STATEMENTS = 320
MAX_FUNCTION_STATEMENTS = 50
MAX_LINE = 120  # ruff.toml's line-length, enforced by E501; checked here too for files ruff does not see


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def test_sources_are_found():
    assert len(SOURCES) > 60 and any(p.name == "env.py" for p in SOURCES)


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _statements(node: ast.AST) -> int:
    """Statements inside ``node`` (a module, class or function), nested ones included, docstrings left out."""
    return sum(1 for n in ast.walk(node) if isinstance(n, ast.stmt) and n is not node and not _is_docstring(n))


def test_statements_count_code_however_it_is_laid_out():
    squeezed = 'def f(a):\n    """Doc."""\n    x = a; y = 2\n    return [x, y]\n'
    unpacked = ('def f(a):\n    """Doc,\n    on two lines."""\n    # a comment\n    x = a\n    y = 2\n'
                '    return [\n        x,\n        y,\n    ]\n')
    assert _statements(ast.parse(squeezed)) == _statements(ast.parse(unpacked)) == 4  # def + two assignments + return
    assert [_statements(f) for f in _functions(ast.parse(unpacked))] == [3]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT / "packages")))
def test_module_and_function_sizes(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _statements(tree) <= MAX_MODULE_STATEMENTS, f"{path.name}: {_statements(tree)} statements"
    big = [(f.name, _statements(f)) for f in _functions(tree) if _statements(f) > MAX_FUNCTION_STATEMENTS]
    assert big == [], f"{path.name}: functions over {MAX_FUNCTION_STATEMENTS} statements: {big}"


def test_no_line_is_over_the_line_length():
    files = [*SOURCES, *sorted((ROOT / "tests").rglob("*.py")), *sorted((ROOT / "benchmarks").rglob("*.py"))]
    long = [f"{p.relative_to(ROOT)}:{i}" for p in files
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if len(line) > MAX_LINE and "# noqa: E501" not in line]
    assert long == []
    assert f"line-length = {MAX_LINE}" in (ROOT / "ruff.toml").read_text()


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at its top or inside a function (``from m import x`` gives ``m``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


FIRST_PARTY = ("osint_gym", "osint_eval", "osint_selfplay")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(path.parents[len(path.parts) - path.parts.index("src") - 2]).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in SOURCES}


def _first_party_imports(path: Path) -> set[str]:
    """The first-party modules ``path`` imports: at its top, inside a function, and under ``if TYPE_CHECKING:``
    (a type-only import of a module's caller is a cycle in all but name: the callee depends on its caller)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import module` imports that module (its package's __init__ runs first, as for any submodule)
            found.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                         for a in node.names)
    own = _module_name(path) if "src" in path.parts else None
    out = set()
    for name in found:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != own:
            out.add(name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, sorted."""
    g = nx.DiGraph([(v, w) for v, ws in graph.items() for w in ws])
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def test_the_cycle_finder_finds_a_cycle_through_three_modules():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_finder_sees_top_function_local_and_type_checking_imports(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from typing import TYPE_CHECKING\nfrom osint_gym import chat\n\nif TYPE_CHECKING:\n"
                    "    from osint_selfplay.loop import SelfPlayRun\n\n\ndef f():\n"
                    "    import osint_eval.runner\n")
    assert _first_party_imports(path) == {"osint_gym.chat", "osint_selfplay.loop", "osint_eval.runner"}


def test_no_import_cycles_between_first_party_modules():
    """No circle in packages/*/src, type-only imports included: a callee never imports its caller (the loop hands
    the controls and the closing evaluation a narrow Protocol of itself)."""
    graph = {name: _first_party_imports(path) for name, path in MODULES.items()}
    assert "osint_selfplay.controls" in graph["osint_selfplay.loop"]  # function-local and top imports are both seen
    assert "osint_selfplay.loop" not in graph["osint_selfplay.controls"] | graph["osint_selfplay.evaluate"]
    assert _cycles(graph) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# the run, and the Protocols through which the loop hands it to its callees
RUN_TYPES = ("SelfPlayRun", "ControlHost", "EvaluatedRun")


def _private_uses(path: Path) -> list[str]:
    """Private names of other first-party modules that ``path`` uses: ``from m import _x``, ``m._x`` on an
    imported first-party module, and ``run._x`` on a run passed in (`RUN_TYPES`: its public API is for that)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules, bad = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in FIRST_PARTY:
            bad += [f"from {node.module} import {a.name}" for a in node.names if _private(a.name)]
            modules.update(a.asname or a.name for a in node.names if f"{node.module}.{a.name}" in MODULES)
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in FIRST_PARTY)
    runs = {arg.arg for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for arg in node.args.args + node.args.kwonlyargs
            if arg.annotation is not None and any(host in ast.unparse(arg.annotation) for host in RUN_TYPES)}
    for node in ast.walk(tree):
        owner = node.value.id if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) else None
        if owner is not None and _private(node.attr) and (owner in modules or owner in runs):
            bad.append(f"{owner}.{node.attr}")
    return sorted(bad)


def test_the_private_name_check_sees_each_kind_of_use(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from osint_gym.text import _x\nfrom osint_gym import text\n\n\n"
                    "def f(run: SelfPlayRun) -> None:\n    run._phase()\n    text._y()\n    self._ok()\n")
    assert _private_uses(path) == ["from osint_gym.text import _x", "run._phase", "text._y"]


def test_no_module_uses_another_modules_private_names():
    uses = {str(p.relative_to(p.parents[len(p.parts) - p.parts.index("src") - 2])): _private_uses(p) for p in SOURCES}
    assert {k: v for k, v in uses.items() if v} == {}


@pytest.mark.parametrize(("package", "forbidden"), [
    ("osint-gym", ("osint_eval", "osint_selfplay", "torch", "trl", "transformers")),
    ("osint-eval", ("osint_selfplay",)),
])
def test_packages_import_one_way(package, forbidden):
    bad = {str(p.name): sorted(m for m in _imports(p) if m.split(".")[0] in forbidden)
           for p in (ROOT / "packages" / package / "src").rglob("*.py")}
    assert {k: v for k, v in bad.items() if v} == {}


def test_world_layer_does_not_import_tasks_or_the_env():
    world = ROOT / "packages" / "osint-gym" / "src" / "osint_gym" / "world"
    bad = {
        p.name: sorted(m for m in _imports(p) if m.startswith(("osint_gym.tasks", "osint_gym.env", "osint_gym.agents")))
        for p in world.glob("*.py")
    }
    assert {k: v for k, v in bad.items() if v} == {}
