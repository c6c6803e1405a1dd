"""Command-line rough edges an examination found: each was a Python traceback, and is now one
plain line on stderr and exit status 2, with nothing created or lost."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.refusal import refused


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


def _one_line(args: tuple[str, ...], *fragments: str, prefix: str = "uno-arena: ") -> str:
    line = refused(*args, prefix=prefix)
    for f in fragments:
        assert f in line, line
    return line


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


def test_what_would_stop_a_run_once_started_is_refused_before_it_creates_anything(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    run = ("tournament", "run", "example", "--out", str(out), "--quiet")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        _one_line(
            (*run, "--metrics-port", str(port)),
            f"--metrics-port {port}",
            "Address already in use",
            "choose another port",
        )
    _one_line((*run, "--metrics-port", "70000"), "--metrics-port", "1 to 65535, got 70000")
    _one_line(
        (*run, "--metrics-port", "9", "--metrics-host", "999.1.1.1"),
        "999.1.1.1",
        "not an address of this machine",
    )
    _one_line((*run, "--bind", "999.1.1.1"), "--bind 999.1.1.1", "not an address")
    _one_line((*run, "--server", "127.0.0.1:1"), "--server needs --admin-token")
    _one_line((*run, "--port", "70000"), "--port", "0 to 65535, got 70000")
    _one_line((*run, "--concurrency", "99999"), "--concurrency", "1 to 1024, got 99999")
    _one_line((*run, "--blocks", "0"), "--blocks", "1 to 10000, got 0")
    _one_line((*run, "--metrics-linger", "nan"), "--metrics-linger", "got nan")
    _one_line(("tournament", "watch", str(out), "--interval", "-1"), "--interval", "got -1")
    assert not out.exists()  # nothing was created, so the same command runs once fixed


def test_a_log_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no reader: opening it to write would wait for ever
    for path, why in ((tmp_path / "no" / "x.log", "No such file"), (fifo, "a pipe no one reads")):
        _one_line(
            (
                "watch",
                "--server",
                "127.0.0.1:1",
                "--admin-token",
                "t" * 16,
                "--log-file",
                str(path),
            ),
            f"--log-file {path}: cannot write it ({why}",
            prefix="uno-arena watch: ",
        )
        _one_line(
            ("play", "--server", "127.0.0.1:1", "--token", "t" * 16, "--log-file", str(path)),
            f"--log-file {path}: cannot write it ({why}",
            prefix="uno-arena play: ",
        )


def test_blocks_on_the_command_line_sizes_a_run_whose_file_gives_a_budget(tmp_path: Path) -> None:
    # an examination: --blocks 1 was ignored when the file said hands = 240
    bots = "".join(
        f'[[bots]]\nname = "r{i}"\ncommand = ["{{python}}", "-m", "uno_bot.examples.random_bot"]\n'
        for i in range(4)
    )
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'[tournament]\nhands = 240\noutput = "{tmp_path / "out"}"\n{bots}')
    code, lines, out = _cli("tournament", "run", str(cfg), "--blocks", "1", "--quiet")
    assert code == 0, (lines[-10:], out[-2000:])
    assert "4 bots, 1 table, 24 hands (0 done; 1 block;" in out, out[:2000]
