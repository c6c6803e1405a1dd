"""The compiled service modules (mypyc) behave exactly as their pure sources do.

``uno_server.service`` loads the modules every move runs through (``wire``, ``table``,
``seat_log``, ``request_desk``, ``seats``, ``convert``, ``session``, ``limits``) compiled when
setup.py built them from the sources as they are (``service/_build.py``), the sources otherwise.
The rest of the suite runs whichever build the environment has (compiled in CI). This runs the
wire tests (every encoding against the protobuf runtime), the input limits, the per-move
protocol and the service's whole-match tests once more in a subprocess under the other build,
checks that each subprocess really ran the build it was asked for, and that a stale build is
never loaded. With ``CI=true`` a missing compiled build fails: ``make venv`` must have compiled
it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from uno_server import service
from uno_server.service._build import COMPILED_MODULES, SHARED_LIB, compiled_problem

ROOT = Path(__file__).resolve().parents[2]


def _which(build: str) -> tuple[str, list[str]]:
    """(uno_server.service.BUILD, the file each compiled module was loaded from) in a fresh
    process under ``UNO_ARENA_ENGINE=build``."""
    code = (
        "import importlib, uno_server.service as s\n"
        "print(s.BUILD)\n"
        f"for m in {COMPILED_MODULES!r}:\n"
        "    print(importlib.import_module(f'{s.__name__}.{m}').__file__)"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, UNO_ARENA_ENGINE=build),
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    first, *files = res.stdout.splitlines()
    assert len(files) == len(COMPILED_MODULES), res.stdout
    return first, files


def test_this_suite_runs_the_compiled_service_modules_in_ci() -> None:
    problem = compiled_problem()
    if problem is not None:
        assert os.environ.get("CI") != "true", f"CI needs the compiled service build: {problem}"
        pytest.skip(f"no usable compiled service build here: {problem}")
    assert service.BUILD == "compiled (mypyc)"
    build, files = _which("compiled")
    assert build == "compiled (mypyc)"
    assert all(f.endswith(importlib.machinery.EXTENSION_SUFFIXES[0]) for f in files), files
    build, files = _which("pure")
    assert build.startswith("pure Python")
    assert [Path(f).name for f in files] == [f"{m}.py" for m in COMPILED_MODULES]


OTHER_BUILD_TESTS = ("test_wire.py", "test_limits.py", "test_per_move.py", "test_service.py")
"""Every encoding, every input limit, the per-move protocol and whole matches (errors, strikes,
takeovers, replays) through the service."""


def test_the_other_build_serves_what_this_one_does() -> None:
    """The service tests above under the build this process does not run."""
    other = "pure" if service.BUILD.startswith("compiled") else "compiled"
    if other == "compiled" and compiled_problem() is not None:
        assert os.environ.get("CI") != "true", "CI needs the compiled service build"
        pytest.skip("no compiled service build to compare")
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *(str(ROOT / "tests" / "service" / name) for name in OTHER_BUILD_TESTS)],
        env=dict(os.environ, UNO_ARENA_ENGINE=other), capture_output=True, text=True,
        check=False, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert re.search(r"^\d+ passed in ", res.stdout, re.M), res.stdout[-3000:]
    assert "failed" not in res.stdout and "skipped" not in res.stdout, res.stdout[-3000:]


def test_a_stale_compiled_service_build_is_never_used(tmp_path: Path) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    assert compiled_problem(tmp_path) == "no compiled build is installed"
    for name in (*COMPILED_MODULES, SHARED_LIB):
        (tmp_path / f"{name}{suffix}").write_bytes(b"")
    sources = {m: f"# {m}\n".encode() for m in COMPILED_MODULES}
    for m, text in sources.items():
        (tmp_path / f"{m}.py").write_bytes(text)
    digests = {m: hashlib.sha256(text).hexdigest() for m, text in sources.items()}
    (tmp_path / "_native_build.json").write_text(json.dumps({"sources": digests}))
    assert compiled_problem(tmp_path) is None
    for m in COMPILED_MODULES:  # an edit to any one of them, not only the wire encoder
        (tmp_path / f"{m}.py").write_text(f"# {m}, edited after the build\n")
        assert compiled_problem(tmp_path) == (
            f"{m}.py changed after the compiled build; rebuild it (make venv)"
        )
        (tmp_path / f"{m}.py").write_bytes(sources[m])
    assert compiled_problem(tmp_path) is None
    (tmp_path / f"session{suffix}").unlink()
    assert compiled_problem(tmp_path) == "the compiled build lacks session"


def test_setup_compiles_the_modules_the_service_checks() -> None:
    tree = ast.parse((ROOT / "setup.py").read_text())
    found = [
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "SERVICE_MODULES" for t in node.targets)
    ]
    assert found == [COMPILED_MODULES]
