"""The old import paths of modules that moved, still importable (each with one ``FutureWarning``).

The integrations moved from the top of the package into `osint_gym.integrations` (issue 44). Users' code and
configs name the old paths (TRL's ``environment_factory`` as ``osint_gym.trl_env.OSINTToolEnv``,
``from osint_gym.serve.client import OSINTClient``), so an import finder on ``sys.meta_path`` answers each old
dotted name, and every submodule under an old package name, with the module at its new path: the very same
module object (one module, one set of globals and classes, under two names), with no shim file left at the
top level.

Hand-written because nothing in the standard library or on PyPI aliases a module name to another module
(shim files that re-export ``*`` give a second module object, and ``sys.modules`` entries set by hand are
only found once the new module has been imported); the import system's own hooks (PEP 451: a finder
returning a spec whose loader hands back the existing module) are the supported way to do it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

# old dotted name -> new dotted name; a package's submodules follow it (osint_gym.serve.client -> ...serve.client)
MOVED = {
    "osint_gym.inspect_task": "osint_gym.integrations.inspect_task",
    "osint_gym.inspect_tools": "osint_gym.integrations.inspect_tools",
    "osint_gym.trl_env": "osint_gym.integrations.trl_env",
    "osint_gym.verifiers_env": "osint_gym.integrations.verifiers_env",
    "osint_gym.serve": "osint_gym.integrations.serve",
}


def new_name(old: str) -> str | None:
    """The module's path now, for an old path (a moved module or a submodule of a moved package); else None."""
    for before, after in MOVED.items():
        if old == before or old.startswith(before + "."):
            return after + old[len(before):]
    return None


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name as the module at its new path (imported first, under its own name)."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self._spec = module.__spec__  # the import system sets __spec__ to the alias's spec: put it back below
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec  # the module is already executed, under its new name
        # stacklevel 2: an import statement's line (the warnings module skips the import system's frozen frames;
        # an importlib.import_module caller, such as an entry-point loader, is shown as importlib's line)
        warnings.warn(f"{self.old} moved to {self.new}; import it from there ({self.old} will be removed)",
                      FutureWarning, stacklevel=2)


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """On ``sys.meta_path``: finds the old names of moved modules (`MOVED`), nothing else."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None or importlib.util.find_spec(new) is None:  # a name never there stays not found
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(fullname, new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import osint_gym`` calls this; a reload does not add another)."""
    if not any(type(f).__name__ == MovedModuleFinder.__name__ for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
