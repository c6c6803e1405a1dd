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
import time
from collections.abc import Callable
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


SETTLE_LIMIT_S = 60.0
"""How long :func:`settle` waits for the screen to come to rest before it fails. Not a margin
the test needs: on a quiet machine the screen rests within a few frames; the limit only turns a
screen that never rests (a redraw loop) into a failure that shows the screen."""


def log_at_end(log: Any) -> bool:
    """True when the RichLog has rendered every line written to it and shows its last one: no
    write waits for the log's size, and the scroll to the end (done after a refresh) is done."""
    return not log._deferred_renders and log.scroll_y >= log.max_scroll_y


async def settle(pilot: Any, ready: Callable[[str], bool] | None = None) -> None:
    """Let the screen finish what it is drawing (refreshes, the log's scroll to its end).

    A RichLog writes, and scrolls to its end, after a refresh of its own, so one pause may
    catch it a few lines short. This waits for conditions, not for time: every log shows its
    last line, ``ready(text)`` holds for the screen's text (what the caller knows must be on the
    screen, e.g. the last line of the model's log), and two looks at
    the screen in a row are the same but for its clocks (masked as in the snapshots). On a busy
    machine that takes longer, never less: it fails only if the screen never rests within
    :data:`SETTLE_LIMIT_S`."""
    from textual.widgets import RichLog

    app = pilot.app
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    before = None
    end = time.monotonic() + SETTLE_LIMIT_S
    while True:
        await pilot.pause()
        logs = list(app.screen.query(RichLog))
        text = screen_text(app) if all(log_at_end(log) for log in logs) else None
        if text is not None and (ready is None or ready(text)):
            now = mask(text)
            if now == before:
                return
            before = now
        else:
            before = None
        if time.monotonic() > end:
            text = screen_text(app)
            scrolls = [(log.scroll_y, log.max_scroll_y, len(log._deferred_renders)) for log in logs]
            raise AssertionError(
                f"the screen did not come to rest within {SETTLE_LIMIT_S:.0f} s (logs' scroll, "
                f"end, deferred: {scrolls}; ready: {ready is None or ready(text)}):\n{text}"
            )
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
