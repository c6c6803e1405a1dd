"""Command-line rough edges an examination found: each was a Python traceback, and is now one
plain line on stderr and exit status 2, with nothing created or lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _cli(*args: str) -> tuple[int, list[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNO_")}
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    return res.returncode, res.stderr.strip().splitlines(), res.stdout


def _one_line(args: tuple[str, ...], *fragments: str) -> str:
    code, lines, out = _cli(*args)
    assert code == 2 and len(lines) == 1, (code, lines[-20:], out[-500:])
    assert lines[0].startswith("uno-arena: "), lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def test_an_output_folder_that_cannot_be_made_or_locked(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me\n")
    _one_line(
        ("tournament", "run", "example", "--out", str(a_file / "sub")),
        f"{a_file / 'sub'}: cannot create the run folder",
        "--out DIR",
    )
    _one_line(("tournament", "run", "example", "--out", str(a_file)), "cannot create the run")
    assert a_file.read_text() == "keep me\n"
    odd = tmp_path / "odd"
    (odd / "tournament.lock").mkdir(parents=True)  # where the lock file goes: a folder
    _one_line(
        ("tournament", "run", "example", "--out", str(odd)),
        "tournament.lock: cannot open the run's lock file",
    )
    _one_line(
        ("league", "init", str(a_file / "sub")),
        f"{a_file / 'sub'}: cannot create the league here",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "odd"]
