"""An examination of the league (session 52).

A run's reader that goes away is no reason to stop the run: an examination's
``uno-arena league run L | head -2`` stopped the league with a BrokenPipeError traceback once
``head`` had its two lines. :func:`uno_tournament.progress.say_to` sends what the reader would
have read to the null device from then on, and the run goes on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from uno_tournament.progress import say_to


def test_printing_to_a_closed_pipe_goes_on_without_output() -> None:
    read, write = os.pipe()
    stream = os.fdopen(write, "w")
    try:
        assert say_to(stream, "first") is stream
        assert os.read(read, 100) == b"first\n"
        os.close(read)  # the reader goes away (head has its lines)
        out = say_to(stream, "second")  # BrokenPipeError inside: caught
        for i in range(100):  # and every later line, without an error
            out = say_to(out, f"line {i}")
        assert not out.closed
        assert os.readlink(f"/proc/self/fd/{out.fileno()}") == os.devnull
    finally:
        stream.close()


def test_a_submits_gate_port_that_is_taken_is_one_line_before_anything(tmp_path: Path) -> None:
    """An examination: the gate's server always took a free port of its own, which an
    organiser bound to a range could not choose. ``league submit --port P`` chooses it; a taken
    one is refused before the build, since it says nothing of the bot."""
    env = {**os.environ, "GRPC_VERBOSITY": "ERROR"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "uno_server.cli", "league", *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env=env,
        )

    league = tmp_path / "league"
    assert run("init", str(league)).returncode == 0
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "porty"\nversion = "1"\nauthor = "ann"\nrun = ["{python}", "bot.py"]\n'
    )
    (bot / "bot.py").write_text("print('never run')\n")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        res = run("submit", str(league), str(bot), "--port", str(port))
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--port {port}: " in lines[0], res.stderr
    assert "choose another port" in lines[0]
    assert not (league / "bots" / "porty").exists() and not (league / "gates").exists()
    assert "porty" not in run("status", str(league)).stdout
    bad = run("submit", str(league), str(bot), "--port", "0")
    assert bad.returncode == 2 and "--port" in bad.stderr, bad.stderr
    # a free one: the gate's server listens there (its log says where)
    (bot / "bot.toml").write_text(
        'name = "porty"\nversion = "1"\nauthor = "ann"\nrun = ["{python}", "-m", '
        '"uno_bot.examples.heuristic_bot", "--log-level", "warning", "--addr", "{addr}"]\n'
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    ok = run("submit", str(league), str(bot), "--port", str(free))
    assert ok.returncode == 0 and "porty@1: accepted" in ok.stdout, (ok.stdout, ok.stderr)
    assert f"--port {free} " in (league / "gates" / "porty@1" / "logs" / "server.log").read_text()
