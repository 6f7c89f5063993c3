"""The layout rules the README states: small modules, small functions, layers that point one way."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "packages").glob("*/src/**/*.py"))
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def test_sources_are_found():
    assert len(SOURCES) > 60 and any(p.name == "env.py" for p in SOURCES)


def _code_lines(text: str) -> int:
    """Lines of code: blank lines, comment-only lines and docstrings do not count, so that a module's size
    measures its code and explaining it, or unpacking a long statement, costs nothing against the cap."""
    tree = ast.parse(text)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                skipped.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines = text.splitlines()
    return sum(1 for i, line in enumerate(lines, 1)
               if i not in skipped and line.strip() and not line.strip().startswith("#"))


def test_code_lines_leave_out_docstrings_comments_and_blank_lines():
    text = '"""Module.\n\nMore."""\n\n# a comment\nimport os\n\n\ndef f():\n    """Doc."""\n    return os.sep  # kept\n'
    assert _code_lines(text) == 3


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT / "packages")))
def test_module_and_function_sizes(path):
    text = path.read_text(encoding="utf-8")
    assert _code_lines(text) <= MAX_MODULE_LINES, f"{path.name}: {_code_lines(text)} lines of code"
    long = [(f.name, f.end_lineno - f.lineno + 1) for f in _functions(ast.parse(text))
            if f.end_lineno - f.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == [], f"{path.name}: functions over {MAX_FUNCTION_LINES} lines: {long}"


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


def _runtime_imports(path: Path) -> set[str]:
    """The first-party modules ``path`` imports when it runs, function-local imports included; imports under
    ``if TYPE_CHECKING:`` are left out (they never run, so they cannot make a cycle)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for block in ast.walk(tree)
                   if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
                   for n in ast.walk(block)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import module` imports that module (its package's __init__ runs first, as for any submodule)
            found.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                         for a in node.names)
    out = set()
    for name in found:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != _module_name(path):
            out.add(name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, sorted."""
    g = nx.DiGraph([(v, w) for v, ws in graph.items() for w in ws])
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def test_the_cycle_finder_finds_a_cycle_through_three_modules():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_between_first_party_modules():
    graph = {name: _runtime_imports(path) for name, path in MODULES.items()}
    assert "osint_selfplay.controls" in graph["osint_selfplay.loop"]  # function-local and top imports are both seen
    assert _cycles(graph) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_uses(path: Path) -> list[str]:
    """Private names of other first-party modules that ``path`` uses: ``from m import _x``, ``m._x`` on an
    imported first-party module, and ``run._x`` on a `SelfPlayRun` passed in (its public API is for that)."""
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
            if arg.annotation is not None and "SelfPlayRun" in ast.unparse(arg.annotation)}
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
    bad = {p.name: sorted(m for m in _imports(p) if m.startswith(("osint_gym.tasks", "osint_gym.env", "osint_gym.agents")))
           for p in world.glob("*.py")}
    assert {k: v for k, v in bad.items() if v} == {}
