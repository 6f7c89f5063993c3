"""The layout rules the README states: small modules, small functions, layers that point one way."""

from __future__ import annotations

import ast
from pathlib import Path

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
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


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


def test_no_module_imports_a_private_name_of_another():
    """A helper two modules share is public in one place (osint_eval.reading, not policies._ID)."""
    bad = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("osint_"):
                bad += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert bad == []


def _module_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, at the top or inside a function."""
    src = ROOT / "packages" / package / "src"
    modules = {".".join(p.relative_to(src).with_suffix("").parts).removesuffix(".__init__"): p
               for p in src.rglob("*.py")}
    return {m: {i for i in _imports(p) if i in modules and i != m} for m, p in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (a list of modules, the first repeated at the end), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            found = visit(n) if n not in state else []
            if found:
                return found
        state[m] = 2
        path.pop()
        return []

    for m in sorted(graph):
        found = visit(m) if m not in state else []
        if found:
            return found
    return []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_osint_eval_modules_import_without_cycles():
    """Not even through a function-local import (policies used to import baselines back lazily)."""
    assert _cycle(_module_graph("osint-eval")) == []
