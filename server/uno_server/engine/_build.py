"""Which build of the engine this process runs: the mypyc-compiled modules or the pure sources.

``uno_server.engine`` imports this module before any other, so the choice holds for every engine
module. The compiled modules are used only when they are all there and were built from exactly
the .py files beside them (``_native_build.json``, written by setup.py, holds their SHA-256): a
compiled module never shadows a source edited after the build. Otherwise, or when the
environment variable ``UNO_ARENA_ENGINE`` is ``pure``, a finder makes Python load the .py
sources instead. ``UNO_ARENA_ENGINE=compiled`` turns a missing or stale build into an error.

The same selection serves the service's compiled per-move modules (``uno_server.service._build``):
the functions take the package, its directory and its module list, the engine's by default.

Never compiled itself (setup.py leaves it out), and pure: it reads files, no clock or random.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

COMPILED_MODULES: Final = (
    "cards", "actions", "events", "errors", "rules", "hand", "bots", "simulate", "views",
)  # fmt: skip
"""The modules setup.py compiles (keep the two lists equal)."""
SHARED_LIB: Final = "_native__mypyc"
RECORD: Final = "_native_build.json"
ENV: Final = "UNO_ARENA_ENGINE"
PACKAGE: Final = __name__.rpartition(".")[0]
HERE: Final = Path(__file__).resolve().parent


def compiled_problem(
    here: Path = HERE, modules: Sequence[str] = COMPILED_MODULES, shared_lib: str = SHARED_LIB
) -> str | None:
    """Why the compiled build of ``modules`` in ``here`` cannot be used, or ``None`` if it can."""

    def has_extension(name: str) -> bool:
        return any((here / f"{name}{s}").exists() for s in importlib.machinery.EXTENSION_SUFFIXES)

    if not has_extension(shared_lib) and not any(has_extension(m) for m in modules):
        return "no compiled build is installed"
    missing = [m for m in (shared_lib, *modules) if not has_extension(m)]
    if missing:
        return f"the compiled build lacks {', '.join(missing)}"
    try:
        record = json.loads((here / RECORD).read_text())
        sources = record["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"the compiled build has no valid {RECORD}; rebuild it (make venv)"
    for m in modules:
        try:
            digest = hashlib.sha256((here / f"{m}.py").read_bytes()).hexdigest()
        except OSError:
            continue  # no source to prefer: the compiled module is all there is
        if sources.get(m) != digest:
            return f"{m}.py changed after the compiled build; rebuild it (make venv)"
    return None


class _PureSources(importlib.abc.MetaPathFinder):
    """Loads a package's compiled modules from their .py files even where compiled ones lie
    beside."""

    def __init__(self, package: str, here: Path, modules: Sequence[str]) -> None:
        self.package, self.here, self.modules = package, here, frozenset(modules)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != self.package or name not in self.modules:
            return None
        return importlib.util.spec_from_file_location(fullname, self.here / f"{name}.py")


def choose(
    package: str = PACKAGE,
    here: Path = HERE,
    modules: Sequence[str] = COMPILED_MODULES,
    shared_lib: str = SHARED_LIB,
) -> tuple[bool, str]:
    """(compiled, description), after installing the pure-source finder when needed."""
    want = os.environ.get(ENV, "auto")
    if want not in ("auto", "pure", "compiled"):
        raise ImportError(f"{ENV} must be auto, pure or compiled, not {want!r}")
    problem = compiled_problem(here, modules, shared_lib) if want != "pure" else f"{ENV}=pure"
    if problem is None:
        return True, "compiled (mypyc)"
    if want == "compiled":
        raise ImportError(f"{ENV}=compiled, but {problem}")
    if problem != "no compiled build is installed" and not any(
        isinstance(f, _PureSources) and f.package == package for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _PureSources(package, here, modules))
    return False, f"pure Python ({problem})"
