"""A configuration file that is not a file (an examination): a FIFO made `league init`,
`tournament run` and `serve --config` wait for a writer for ever, and a symlink to /dev/zero made
`league init` read without end. Each command now names the path in one line and exits 2, and
creates nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = {
    "tournament run": lambda cfg, tmp: ["tournament", "run", str(cfg), "--out", str(tmp / "out")],
    "league init": lambda cfg, tmp: ["league", "init", str(tmp / "out"), "--config", str(cfg)],
    "serve": lambda cfg, tmp: ["serve", "--config", str(cfg), "--port", "0"],
}


def _special(kind: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{kind}.toml"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_config_that_is_a_pipe_or_device_is_one_line_and_exit_2(
    command: str, kind: str, tmp_path: Path
) -> None:
    cfg = _special(kind, tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNO_")}
    # the timeout is the failure this guards: before, the command never returned
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", *COMMANDS[command](cfg, tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, (res.returncode, res.stderr[-2000:])
    assert str(cfg) in lines[0] and "not a regular file" in lines[0], lines[0]
    assert not (tmp_path / "out").exists()
