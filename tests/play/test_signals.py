"""``kill -TERM`` on ``uno-arena play`` or ``watch`` in a terminal: the screen closes as with q,
the terminal is restored (alternate screen off, mouse reporting off) and the command exits 0.
The signal's default action killed the process and left the terminal in the alternate screen
with mouse reporting on."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest

from .live import ADMIN, live_server

SCREEN_S = 60.0
"""How long the screen may take to come up on a loaded machine."""


def spawn_in_pty(argv: list[str]) -> tuple[int, subprocess.Popen[bytes]]:
    """Start ``argv`` in a new 120x40 terminal: its master side and the process."""
    fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    # not pty.fork(): the test's process runs gRPC's threads, and only exec is safe after fork
    child = subprocess.Popen(
        argv,
        stdin=child_fd,
        stdout=child_fd,
        stderr=child_fd,
        start_new_session=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    os.close(child_fd)
    return fd, child


def read_pty(fd: int) -> bytes:
    """What the terminal has to read now (b"" if nothing; raises OSError once it is closed)."""
    r, _, _ = select.select([fd], [], [], 0.1)
    return os.read(fd, 65536) if r else b""


def close_pty(fd: int, child: subprocess.Popen[bytes]) -> bytes:
    """End the process if it still runs, close the terminal, and return what was left to read."""
    if child.poll() is None:
        child.kill()
        child.wait()
    out = b""
    with contextlib.suppress(OSError):
        while select.select([fd], [], [], 0.1)[0]:
            data = os.read(fd, 65536)
            if not data:
                break
            out += data
    os.close(fd)
    return out


def run_in_pty(argv: list[str], ready: bytes) -> tuple[int, bytes]:
    """Run ``argv`` in a terminal; once it has written ``ready``, send SIGTERM. Returns the
    exit status and everything it wrote."""
    fd, child = spawn_in_pty(argv)
    out = b""
    sent = False
    end = time.monotonic() + SCREEN_S
    try:
        while time.monotonic() < end and child.poll() is None:
            if not sent and ready in out:
                time.sleep(0.5)  # the screen is up and running
                child.send_signal(signal.SIGTERM)
                sent, end = True, time.monotonic() + SCREEN_S
            try:
                out += read_pty(fd)
            except OSError:  # the child closed the terminal
                break
        code = child.wait(timeout=SCREEN_S if sent else 0.1)
    finally:
        out += close_pty(fd, child)
    assert sent, f"the screen never came up:\n{out[-2000:]!r}"
    return code, out


def check_restored(code: int, out: bytes) -> None:
    assert code == 0, f"exit status {code} (a negative one: killed by that signal)"
    tail = out[out.rfind(b"\x1b[?1049h") :]  # from the last switch to the alternate screen
    assert b"\x1b[?1049l" in tail, "the terminal was left in the alternate screen"
    assert tail.rfind(b"\x1b[?1000l") > tail.rfind(b"\x1b[?1000h"), "mouse reporting left on"


UNO_ARENA = os.path.join(os.path.dirname(sys.executable), "uno-arena")


def test_sigterm_on_play_restores_the_terminal() -> None:
    argv = [UNO_ARENA, "play", "--seats", "me", "ai", "--listen", "127.0.0.1:0"]
    check_restored(*run_in_pty(argv, b"Seats"))


@pytest.mark.asyncio
async def test_sigterm_on_watch_restores_the_terminal() -> None:
    async with live_server() as live:
        argv = [UNO_ARENA, "watch", "--server", live.addr, "--admin-token", ADMIN]
        check_restored(*await asyncio.to_thread(run_in_pty, argv, b"watching"))
