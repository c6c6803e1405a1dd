"""The compiled wire encoder (mypyc) produces exactly the bytes the pure source does.

``uno_server.service`` loads ``wire.py`` compiled when setup.py built it from the source as it is
(``service/_build.py``), the source otherwise. This runs the wire tests (every encoding against
the protobuf runtime) once more in a subprocess under the other build, checks that each
subprocess really ran the build it was asked for, and that a stale build is never loaded. With
``CI=true`` a missing compiled build fails: ``make venv`` must have compiled it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from uno_server import service
from uno_server.service._build import COMPILED_MODULES, SHARED_LIB, compiled_problem

ROOT = Path(__file__).resolve().parents[2]


def _which(build: str) -> str:
    res = subprocess.run(
        [sys.executable, "-c", "import uno_server.service as s, uno_server.service.wire as w; "
         "print(s.BUILD); print(w.__file__)"],
        env=dict(os.environ, UNO_ARENA_ENGINE=build), capture_output=True, text=True,
        check=False, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_this_suite_runs_the_compiled_wire_encoder_in_ci() -> None:
    problem = compiled_problem()
    if problem is not None:
        assert os.environ.get("CI") != "true", f"CI needs the compiled wire encoder: {problem}"
        pytest.skip(f"no usable compiled wire encoder here: {problem}")
    assert service.BUILD == "compiled (mypyc)"
    compiled = _which("compiled")
    assert compiled.startswith("compiled (mypyc)\n") and not compiled.strip().endswith(".py")
    pure = _which("pure")
    assert pure.startswith("pure Python") and pure.strip().endswith("wire.py")


def test_the_other_build_encodes_what_the_runtime_does() -> None:
    """tests/service/test_wire.py under the build this process does not run."""
    other = "pure" if service.BUILD.startswith("compiled") else "compiled"
    if other == "compiled" and compiled_problem() is not None:
        assert os.environ.get("CI") != "true", "CI needs the compiled wire encoder"
        pytest.skip("no compiled wire encoder to compare")
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(ROOT / "tests" / "service" / "test_wire.py")],
        env=dict(os.environ, UNO_ARENA_ENGINE=other), capture_output=True, text=True,
        check=False, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and "failed" not in res.stdout


def test_a_stale_compiled_wire_encoder_is_never_used(tmp_path: Path) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    assert compiled_problem(tmp_path) == "no compiled build is installed"
    for name in (*COMPILED_MODULES, SHARED_LIB):
        (tmp_path / f"{name}{suffix}").write_bytes(b"")
    (tmp_path / "wire.py").write_text("# wire\n")
    digest = hashlib.sha256(b"# wire\n").hexdigest()
    (tmp_path / "_native_build.json").write_text(json.dumps({"sources": {"wire": digest}}))
    assert compiled_problem(tmp_path) is None
    (tmp_path / "wire.py").write_text("# wire, edited after the build\n")
    assert compiled_problem(tmp_path) == (
        "wire.py changed after the compiled build; rebuild it (make venv)"
    )


def test_setup_compiles_the_modules_the_service_checks() -> None:
    tree = ast.parse((ROOT / "setup.py").read_text())
    found = [
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "SERVICE_MODULES" for t in node.targets)
    ]
    assert found == [COMPILED_MODULES]
