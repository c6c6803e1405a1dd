"""`.ci/buf-breaking` (run by make buf-lint, so by make test): a change to proto/ that breaks the
contract fails the build. The contract is the last release tag's, or before the first tag the
buf image pinned in `.ci/uno-v1-contract.json` (what the packaged SDKs speak)."""

from __future__ import annotations

import json
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


def _drop_a_field(repo: Path) -> None:
    game = repo / "proto" / "uno" / "v1" / "game.proto"
    # remove one field of ColorChosenEvent: a breaking change for every generated client
    broken, n = re.subn(r"\n  // The colour named\.\n  Color color = 2;", "", game.read_text())
    assert n == 1
    game.write_text(broken)
    _git(repo, "commit", "-qam", "drop a field")


def test_the_pinned_contract_is_a_buf_image_of_uno_v1() -> None:
    """Before the first tag the check is not a no-op: main's proto/ is held to the pinned image,
    which holds every service and message of uno.v1 (it needs no git history, so a shallow
    clone is checked too)."""
    image = json.loads((ROOT / ".ci" / "uno-v1-contract.json").read_text())
    names = {f["name"] for f in image["file"]}
    for proto in (ROOT / "proto" / "uno" / "v1").glob("*.proto"):
        assert f"uno/v1/{proto.name}" in names, proto.name


def test_before_the_first_tag_the_pinned_contract_is_kept(repo: Path) -> None:
    done = _check(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "keeps the pinned contract" in done.stdout
    _drop_a_field(repo)
    done = _check(repo)
    assert done.returncode != 0
    assert "ColorChosenEvent" in done.stdout + done.stderr


def test_without_a_tag_or_a_pin_there_is_no_contract(repo: Path) -> None:
    (repo / ".ci" / "uno-v1-contract.json").unlink()
    _git(repo, "commit", "-qam", "no pin")
    done = _check(repo)
    assert done.returncode == 0, done.stderr
    assert "no contract to keep" in done.stdout


def test_a_compatible_change_passes_and_a_removed_field_fails(repo: Path) -> None:
    _git(repo, "tag", "v1.0.0")
    done = _check(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "keeps the contract of v1.0.0" in done.stdout

    _drop_a_field(repo)
    done = _check(repo)
    assert done.returncode != 0
    assert "ColorChosenEvent" in done.stdout + done.stderr
