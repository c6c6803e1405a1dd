"""`.ci/buf-breaking` (run by make buf-lint, so by make test): from the first release tag on, a
change to proto/ that breaks the released contract fails the build; before it, the check says
there is nothing released yet."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / ".tools" / "node_modules" / ".bin" / "buf"
SCRIPT = ROOT / ".ci" / "buf-breaking"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if not BUF.exists():
        assert os.environ.get("CI") != "true", "make buf-lint installs buf before the tests"
        pytest.skip("buf is not installed (make buf-lint installs it)")
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    shutil.copytree(ROOT / ".ci", tmp_path / ".ci")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "v1"]):
        _git(tmp_path, *cmd)
    return tmp_path


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=repo, check=True, env=env)


def _check(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), str(BUF)], cwd=repo, capture_output=True, text=True, timeout=120, check=False
    )


def test_before_the_first_tag_there_is_no_released_contract(repo: Path) -> None:
    done = _check(repo)
    assert done.returncode == 0, done.stderr
    assert "no release tag" in done.stdout


def test_a_compatible_change_passes_and_a_removed_field_fails(repo: Path) -> None:
    _git(repo, "tag", "v1.0.0")
    done = _check(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "keeps the contract of v1.0.0" in done.stdout

    game = repo / "proto" / "uno" / "v1" / "game.proto"
    text = game.read_text()
    # remove one field of ColorChosenEvent: a breaking change for every generated client
    broken, n = re.subn(r"\n  // The colour named\.\n  Color color = 2;", "", text)
    assert n == 1
    game.write_text(broken)
    _git(repo, "commit", "-qam", "drop a field")
    done = _check(repo)
    assert done.returncode != 0
    assert "ColorChosenEvent" in done.stdout + done.stderr
