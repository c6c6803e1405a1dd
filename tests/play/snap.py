"""Text snapshots of Textual screens.

A snapshot is the screen as plain text (what a person reads), with the parts that change from
run to run masked: match ids, addresses, tokens and the digits of running clocks. They live in
``tests/play/snapshots/*.txt``; ``make snapshots`` (UPDATE_SNAPSHOTS=1) rewrites them.
"""

from __future__ import annotations

import difflib
import io
import os
import re
from pathlib import Path
from typing import Any

from rich.console import Console

SNAPSHOTS = Path(__file__).parent / "snapshots"
_MASKS = [
    (re.compile(r"m\d{6}-[0-9a-f]{6}"), "m000000-xxxxxx"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
    (re.compile(r"--token \S+"), "--token TOKEN"),
    (re.compile(r"\d+\.\d s\b"), "#.# s"),
    (re.compile(r"\b\d+:\d\d\b"), "#:##"),
    # a scroll bar's thumb moves with the log's length and scroll animation
    (re.compile(r"[▁▂▃▄▅▆▇█]{2} │$", re.MULTILINE), "   │"),
]


async def settle(pilot: Any) -> None:
    """Let the screen finish what it is drawing (refreshes, the log's scroll to its end).

    A RichLog writes, and scrolls to its end, after a refresh of its own, so one pause may
    catch it a few lines short: wait until every log shows its last line and a further pause
    changes nothing on the screen but its clocks (masked as in the snapshots). At most about
    0.5 s: a human's UNO window is running meanwhile."""
    from textual.widgets import RichLog

    app = pilot.app
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    before = None
    for _ in range(25):
        logs = list(app.screen.query(RichLog))
        at_end = all(log.scroll_y >= log.max_scroll_y for log in logs)
        now = mask(screen_text(app))
        if at_end and now == before:
            return
        before = now
        await pilot.pause(0.02)


def screen_text(app: Any) -> str:
    """The app's current screen (with any modal on top) as plain text."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


def mask(text: str) -> str:
    """Mask what changes from run to run, keeping every line's width."""
    text = text.replace("\u00a0", " ")
    for pattern, repl in _MASKS:

        def padded(m: re.Match[str], repl: str = repl) -> str:
            return repl.ljust(len(m.group(0)))

        text = pattern.sub(padded, text)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def check_snapshot(name: str, text: str) -> None:
    """Compare ``text`` (masked) with the stored snapshot ``name``; rewrite it when
    UPDATE_SNAPSHOTS=1."""
    text = mask(text)
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"no snapshot {path.name}: run `make snapshots` and review it"
    want = path.read_text()
    if text != want:
        diff = "".join(
            difflib.unified_diff(want.splitlines(True), text.splitlines(True), "stored", "now", n=2)
        )
        raise AssertionError(
            f"screen {name} differs from its snapshot (if intended: make snapshots)\n{diff}"
        )
