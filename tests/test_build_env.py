"""The isolated build environment has every package mypyc needs to type-check what it compiles.

pip builds the wheel (and ``make venv``'s editable install) in an environment holding only
``[build-system] requires``. mypyc type-checks the compiled modules there, following every import
into the project's other modules, so a third-party package one of them imports must be in that
list, or be one mypy is told to treat as untyped (``ignore_missing_imports`` in pyproject.toml).
Otherwise a fresh clone's install fails (or, in ``auto`` mode, falls back to pure Python) while
the in-place build, which runs in the full ``.venv``, compiles fine: CI found exactly that on
2026-12-04, when the table's ``structlog`` import was not there. This finds it without a build.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
import tomllib
from pathlib import Path

from uno_server.engine._build import COMPILED_MODULES as ENGINE_MODULES
from uno_server.service._build import COMPILED_MODULES as SERVICE_MODULES
from uno_tournament._build import COMPILED_MODULES as TOURNAMENT_MODULES

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"uno_server": ROOT / "server", "uno_tournament": ROOT / "tournament"}
SOURCES["uno_bot"] = ROOT / "clients" / "python"
IMPORT_NAMES = {"protobuf": "google.protobuf", "types-protobuf": None}
"""Distributions whose import name is not their name with - as _ (None: a stub or alias)."""


def _module_file(name: str) -> Path | None:
    root = SOURCES.get(name.partition(".")[0])
    if root is None:
        return None
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py", base.with_suffix(".pyi")):
        if path.exists():
            return path
    return None


def _imports(path: Path, module: str) -> set[str]:
    """Every module ``path`` (the module ``module``) imports, anywhere in the file, absolute."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            # `from pkg import sub` may import a submodule
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def external_imports(roots: list[str]) -> dict[str, str]:
    """{third-party module: the project module that imports it}, following the project's own
    imports from ``roots`` as mypy does."""
    seen: set[str] = set()
    todo = list(roots)
    external: dict[str, str] = {}
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # mypy reads the packages too
        path = _module_file(module)
        if path is None:
            continue
        for name in _imports(path, module):
            top = name.partition(".")[0]
            if top in SOURCES:
                if _module_file(name) is not None:
                    todo.append(name)
            elif top not in sys.stdlib_module_names and top != "__future__":
                external.setdefault(name, module)
    return external


def _build_env() -> tuple[list[str], list[str]]:
    """(modules the build requirements provide, module patterns mypy may leave untyped)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    provided = []
    for req in conf["build-system"]["requires"]:
        dist = re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].strip().lower()
        name = IMPORT_NAMES.get(dist, dist.replace("-", "_"))
        if name is not None:
            provided.append(name)
    untyped = [
        pattern
        for override in conf["tool"]["mypy"].get("overrides", [])
        if override.get("ignore_missing_imports")
        for pattern in override["module"]
    ]
    return provided, untyped


def unavailable(external: dict[str, str], without: str | None = None) -> list[str]:
    """The modules of ``external`` the build environment lacks (``without``: as if the build
    requirement providing that module were not listed)."""
    provided, untyped = _build_env()
    if without is not None:
        provided = [p for p in provided if p != without]

    def ok(name: str) -> bool:
        if any(name == p or name.startswith(p + ".") for p in provided):
            return True
        return any(
            fnmatch.fnmatch(name, pattern) or name == pattern.removesuffix(".*")
            for pattern in untyped
        )

    return sorted(f"{name} (imported by {by})" for name, by in external.items() if not ok(name))


def _compiled() -> list[str]:
    return [
        *(f"uno_server.engine.{m}" for m in ENGINE_MODULES),
        *(f"uno_server.service.{m}" for m in SERVICE_MODULES),
        *(f"uno_tournament.{m}" for m in TOURNAMENT_MODULES),
    ]


def test_every_package_the_compiled_modules_reach_is_in_the_build_environment() -> None:
    external = external_imports(_compiled())
    # the walk does reach the imports that once broke the build, through the service's metrics
    assert "structlog" in external and "prometheus_client" in external, sorted(external)
    missing = unavailable(external)
    assert not missing, (
        "mypyc type-checks the compiled modules in pip's isolated build environment, which "
        "lacks these; add their distributions to [build-system] requires in pyproject.toml: "
        + ", ".join(missing)
    )


def test_a_missing_build_requirement_is_found() -> None:
    """The check above fails when a requirement it relies on is taken away."""
    external = external_imports(_compiled())
    assert any(m.startswith("structlog ") for m in unavailable(external, without="structlog"))
    gone = unavailable(external, without="prometheus_client")
    assert any(m.startswith("prometheus_client") for m in gone), gone
    assert any(
        m.startswith("google.protobuf") for m in unavailable(external, without="google.protobuf")
    )
