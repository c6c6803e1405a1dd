"""The floors of the codebase, held by walking every import with `ast`.

- No import cycle anywhere in `server/`, `tournament/` or the Python SDK, counting imports made
  inside functions (a deferred import only hides a cycle; it does not remove it). Imports under
  `if TYPE_CHECKING:` are left out: they never run.
- The rules engine is pure: it imports nothing of the service, the tournament, the SDK or gRPC,
  no clock, no event loop, no logging, and uses no module-level (global) random function.
- The service imports nothing of the tournament.
- The SDK imports nothing of the server or the tournament.

ARCHITECTURE.md draws the same floors.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "uno_server": ROOT / "server" / "uno_server",
    "uno_tournament": ROOT / "tournament" / "uno_tournament",
    "uno_bot": ROOT / "clients" / "python" / "uno_bot",
}
# generated protobuf stubs: not ours to cut, and they import only each other and protobuf
GENERATED = ("uno_server.gen", "uno_bot._proto")


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (or package)
    line: int
    deferred: bool  # inside a function body


def module_name(pkg: str, root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = [pkg, *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for pkg, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            name = module_name(pkg, root, path)
            if not name.startswith(GENERATED):
                found[name] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for other in child.orelse:  # the else branch does run
                yield other, in_function
                yield from _walk(other, in_function)
            continue
        inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        yield child, inner
        yield from _walk(child, inner)


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    found: list[Import] = []
    for node, deferred in _walk(tree, False):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(name, alias.name, node.lineno, deferred))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level > 1:
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts)
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                # `from pkg import mod` imports pkg.mod; `from mod import name` imports mod
                found.append(Import(name, sub if sub in modules else base, node.lineno, deferred))
    return found


def graph() -> tuple[dict[str, Path], list[Import]]:
    modules = all_modules()
    edges = [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]
    return modules, edges


def cycles(modules: dict[str, Path], edges: list[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module, or a module importing itself."""
    out: dict[str, set[str]] = {m: set() for m in modules}
    for e in edges:
        if e.target in modules:
            out[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:  # Tarjan, iterative over an explicit work stack
        nonlocal counter
        work = [(v, iter(sorted(out[v])))]
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(out[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in out[node]:
                    found.append(sorted(comp))

    for v in sorted(modules):
        if v not in index:
            strong(v)
    return found


def describe(comp: list[str], edges: list[Import], modules: dict[str, Path]) -> str:
    inside = set(comp)
    lines = [
        f"  {modules[e.source].relative_to(ROOT)}:{e.line} imports {e.target}"
        + (" (inside a function)" if e.deferred else "")
        for e in edges
        if e.source in inside and e.target in inside
    ]
    return "cycle among " + ", ".join(comp) + ":\n" + "\n".join(sorted(set(lines)))


def test_no_import_cycle_anywhere() -> None:
    modules, edges = graph()
    found = cycles(modules, edges)
    assert not found, "\n".join(describe(c, edges, modules) for c in found)


def test_the_cycle_finder_sees_a_deferred_cycle() -> None:
    """The finder itself: a cycle closed by an import inside a function is still a cycle."""
    modules = {"p.a": Path("a.py"), "p.b": Path("b.py"), "p.c": Path("c.py")}
    edges = [
        Import("p.a", "p.b", 1, False),
        Import("p.b", "p.c", 1, False),
        Import("p.c", "p.a", 9, True),
    ]
    assert cycles(modules, edges) == [["p.a", "p.b", "p.c"]]
    assert cycles(modules, edges[:2]) == []


FORBIDDEN = {
    "engine": (
        "uno_server.engine",
        (
            "uno_server.service",
            "uno_server.play",
            "uno_server.web",
            "uno_server.gen",
            "uno_server.benchmarks",
            "uno_server.cli",
            "uno_tournament",
            "uno_bot",
            "grpc",
            "google.protobuf",
            "asyncio",
            "time",
            "datetime",
            "logging",
            "structlog",
            "threading",
            "socket",
        ),
    ),
    "service": ("uno_server.service", ("uno_tournament",)),
    "sdk": ("uno_bot", ("uno_server", "uno_tournament")),
}


@pytest.mark.parametrize("floor", sorted(FORBIDDEN))
def test_layer_imports(floor: str) -> None:
    prefix, banned = FORBIDDEN[floor]
    modules, edges = graph()
    bad = [
        f"{modules[e.source].relative_to(ROOT)}:{e.line} imports {e.target}"
        for e in edges
        if (e.source == prefix or e.source.startswith(prefix + "."))
        and any(e.target == b or e.target.startswith(b + ".") for b in banned)
    ]
    assert not bad, f"the {floor} must not import these:\n" + "\n".join(bad)


def test_the_engine_uses_no_global_random() -> None:
    """`random.Random(seed)` is the hand's own generator; `random.choice(...)` is the global one."""
    modules = all_modules()
    bad = []
    for name, path in modules.items():
        if not name.startswith("uno_server.engine"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "random"
                and node.attr != "Random"
            ):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} random.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module == "random":
                names = [a.name for a in node.names if a.name != "Random"]
                if names:
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} from random import {names}")
    assert not bad, "the engine uses the global random generator:\n" + "\n".join(bad)


MAX_LINES = 800
"""Issue 22's size rule: a module over about 800 lines says in its docstring why it is one
piece (a module with several jobs is cut along its seams instead)."""


def test_a_module_over_800_lines_says_why_it_is_one_piece() -> None:
    unexplained = []
    for name, path in all_modules().items():
        text = path.read_text()
        lines = text.count("\n")
        if lines <= MAX_LINES:
            continue
        doc = (ast.get_docstring(ast.parse(text)) or "").lower()
        if "one piece" not in doc and "one module" not in doc:
            unexplained.append(f"{name}: {lines} lines, and its docstring does not say why")
    assert not unexplained, unexplained
