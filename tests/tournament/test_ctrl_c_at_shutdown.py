"""Ctrl-C while the runner stops its bots (an examination): the runner gave its signal handlers
back before stopping the bots, so a Ctrl-C there was a KeyboardInterrupt traceback and the run's
reports were never written. Now the first Ctrl-C there says what is happening and the run ends
as it would have; a second leaves at once. Timed by cause: the bot writes a marker when it is
asked to stop, and ignores the request, so the stop lasts the runner's grace."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from .helpers import bot_entry, write_config

STUBBORN = Path(__file__).with_name("stubborn_bot.py")


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    marker = tmp_path / "stopping"
    stubborn = (
        '[[bots]]\nname = "stubborn"\n'
        f'command = ["{{python}}", "{STUBBORN}", "--marker", "{marker}",'
        ' "--log-level", "warning"]\n'
    )
    cfg = write_config(
        tmp_path,
        [bot_entry("h0"), bot_entry("h1"), bot_entry("h2"), stubborn],
        name="stop",
        extra="[sandbox]\nenabled = false\n",  # the sandbox would hide this test's folder
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "tournament", "run", str(cfg), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, marker


def _wait_for(marker: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 240
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the runner never stopped its bots"
        time.sleep(0.05)


def test_ctrl_c_while_the_bots_stop_still_finishes_the_run(tmp_path: Path) -> None:
    proc, marker = _start(tmp_path)
    _wait_for(marker, proc)  # every hand is played; the runner is stopping its bots
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode == 0, (out[-2000:], err[-2000:])
    assert "stopping the bots (Ctrl-C again to quit at once)" in out + err
    assert (tmp_path / "out" / "results.json").is_file()  # the run ended as it would have


def test_a_second_ctrl_c_while_the_bots_stop_leaves_at_once(tmp_path: Path) -> None:
    proc, marker = _start(tmp_path)
    _wait_for(marker, proc)
    proc.send_signal(signal.SIGINT)
    assert proc.stdout is not None
    seen = False
    for line in proc.stdout:  # the first was taken once its line is out
        if "stopping the bots" in line:
            seen = True
            break
    assert seen, proc.communicate(timeout=120)
    proc.send_signal(signal.SIGINT)  # within the 3 s the stubborn bot holds the stop
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])


def test_ctrl_c_while_the_bots_start_does_not_wait_for_them(tmp_path: Path) -> None:
    """An examination: Ctrl-C while the bots started waited for every bot to connect (up to
    faults.startup_timeout_s, here 600 s) before it stopped. A bot that never connects is
    started; once it runs, Ctrl-C stops the run long before its startup timeout."""
    marker = tmp_path / "started"
    silent = (
        f'[[bots]]\nname = "silent"\ncommand = ["sh", "-c", "touch {marker}; exec sleep 1000"]\n'
    )
    cfg = write_config(
        tmp_path,
        [bot_entry("h0"), bot_entry("h1"), bot_entry("h2"), silent],
        name="start",
        startup_timeout_s=600,
        extra="[sandbox]\nenabled = false\n",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "tournament", "run", str(cfg), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(marker, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)  # 120 s: a fifth of the startup timeout
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
    assert "bots connected" not in out and "Resume with" in out, out[-2000:]
