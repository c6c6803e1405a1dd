"""Log lines that a client can provoke at will, rate-limited so that a flood cannot fill the disk.

Each kind of line (a key such as ``(status code, reason)``) may be written ``burst`` times per
``window_s``; the lines over that are counted, and the next line of the key after the window says
how many were left out (``suppressed``). Memory is bounded by the number of keys, which the
callers draw from enums (status codes, error reasons) and from the bots the server's
configuration registers, never from client input.

Two logs share these limits: the rejections (``rejections.REJECTIONS``, keyed by status code and
reason) and :data:`CONNECTIONS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any

BURST = 20
WINDOW_S = 60.0


class RateLimitedLog:
    def __init__(
        self,
        burst: int = BURST,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.window_s = window_s
        self.clock = clock
        self._windows: dict[Hashable, list[float]] = {}  # key -> [window start, written, left out]

    def allow(self, key: Hashable) -> int | None:
        """None if a line of ``key`` must be left out now; else the number of lines of ``key``
        left out since the last one written (0 mostly)."""
        now = self.clock()
        w = self._windows.get(key)
        if w is None or now - w[0] >= self.window_s:
            suppressed = 0 if w is None else int(w[2])
            self._windows[key] = [now, 1, 0]
            return suppressed
        if w[1] < self.burst:
            w[1] += 1
            return 0
        w[2] += 1
        return None

    def log(self, key: Hashable, emit: Callable[..., Any], event: str, **fields: Any) -> bool:
        """``emit(event, **fields)`` unless over the limit; True if written."""
        suppressed = self.allow(key)
        if suppressed is None:
            return False
        if suppressed:
            fields["suppressed"] = suppressed
        emit(event, **fields)
        return True


CONNECTIONS = RateLimitedLog()
"""The lines a bot provokes by connecting and disconnecting (connected, disconnected, a stream
that broke, a seat whose bot went away, a refused replay), keyed by (line, bot name): a bot that
reconnects in a loop writes at most BURST of each a minute, whatever the others do, and the
first line of a kind after a quiet window says how many were left out (``suppressed``). Bot
names come from the server's configuration, so the keys are bounded."""
