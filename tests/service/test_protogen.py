"""``make proto`` is idempotent and ``make proto-check`` sees any drift of the generated Python
code (server and bot SDK copies): a changed file, an ``__init__.py`` included, a missing one,
or a stray one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from uno_server import protogen


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the repository's generated folders, as they are checked in."""
    for target in protogen.TARGETS:
        shutil.copytree(
            protogen.ROOT / target.folder,
            tmp_path / target.folder,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return tmp_path


def check(root: Path) -> int:
    return protogen.main(["--check", "--root", str(root)])


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_checked_in_code_is_current_and_generation_is_idempotent(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check(tree) == 0
    before = snapshot(tree)
    assert protogen.main(["--root", str(tree)]) == 0
    assert protogen.main(["--root", str(tree)]) == 0
    assert snapshot(tree) == before
    out = capsys.readouterr().out
    assert out.count(": current") == 2 * len(protogen.TARGETS)


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ("edit-init", "changed uno/v1/__init__.py"),
        ("edit-module", "changed uno/v1/bot_pb2.py"),
        ("remove", "missing uno/v1/game_pb2.pyi"),
        ("stray", "stray uno/v1/old_pb2.py"),
        ("stray-dir", "stray uno/v2/__init__.py"),
    ],
)
def test_check_catches_every_drift_and_generation_repairs_it(
    tree: Path, change: str, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in protogen.TARGETS:
        v1 = tree / target.folder / "uno" / "v1"
        if change == "edit-init":
            (v1 / "__init__.py").write_text((v1 / "__init__.py").read_text() + "# one more\n")
        elif change == "edit-module":
            (v1 / "bot_pb2.py").write_text((v1 / "bot_pb2.py").read_text().replace("\n", "\n\n", 1))
        elif change == "remove":
            (v1 / "game_pb2.pyi").unlink()
        elif change == "stray":
            (v1 / "old_pb2.py").write_text("")
        else:
            (v1.parent / "v2").mkdir()
            (v1.parent / "v2" / "__init__.py").write_text("")
    capsys.readouterr()
    assert check(tree) == 1
    err = capsys.readouterr().err
    for target in protogen.TARGETS:
        assert f"{target.folder}: {line}" in err
    assert protogen.main(["--root", str(tree)]) == 0
    assert check(tree) == 0
    assert not any((tree / t.folder / "uno" / "v2").exists() for t in protogen.TARGETS)
