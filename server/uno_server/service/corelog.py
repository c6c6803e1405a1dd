"""The server's file descriptor 2, captured: what native code writes there (gRPC core's own log
lines, such as ``E1206 16:03:46.807332 24589 hpack_encoder.cc:618] Ignoring key value pair due to
size limit...``) becomes JSON log events, rate-limited and counted.

gRPC core writes its lines straight to fd 2, past Python's logging. Some of them a client
provokes at will (a call with 500 small metadata headers writes the line above once per call,
with no token), and they were neither JSON nor rate-limited: a client could fill the log's disk
with them (an examination). While :func:`captured` is in force

- fd 2 is a pipe read by a thread; each line it reads is an event ``grpc core`` (a line in
  gRPC's ``E1206 ... file.cc:618] text`` form: its level, its ``source`` and its ``text``) or
  ``stderr output`` (any other line: its ``text``), at most :data:`MAX_TEXT` characters of it;
- the lines of each kind (event and source: gRPC's source locations, never client input) are
  rate-limited as the other client-provoked lines (:mod:`ratelog`: ``BURST`` a minute, the first
  line after a quiet window says how many were left out, ``suppressed``);
- every line is counted (:data:`LINES`, the metric ``uno_grpc_core_lines_total``, and
  ``uno_grpc_core_lines_suppressed_total`` those left out);
- ``sys.stderr`` (the server's own JSON log, Python's tracebacks and faulthandler's dump of a
  crash) writes to the original fd 2, as before, not through the pipe.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import structlog
from prometheus_client.metrics_core import CounterMetricFamily, Metric

from .ratelog import RateLimitedLog

MAX_TEXT = 500
"""Characters of a captured line a log event keeps (the rest is cut, with an ellipsis)."""
MAX_PENDING = 64 * 1024
"""Bytes of a line without its newline held before it is logged as it is."""

_CORE = re.compile(
    r"(?P<lvl>[DIWEF])\d{4} [0-9:.]+\s+\d+ "
    r"(?P<source>[A-Za-z0-9_./+-]{1,200}:\d{1,6})\] ?(?P<text>.*)",
    re.DOTALL,
)
_LEVELS = {"D": "debug", "I": "info", "W": "warning", "E": "error", "F": "critical"}

CORE_LOG = RateLimitedLog()
"""The rate limits of captured lines, keyed by (event, source)."""


class LineCounts:
    """Lines read from the captured fd 2: all, and those left out by the rate limit."""

    def __init__(self) -> None:
        self.lines = 0
        self.suppressed = 0


LINES = LineCounts()


def handle_line(
    raw: bytes,
    log: Any = None,
    limits: RateLimitedLog = CORE_LOG,
    counts: LineCounts = LINES,
) -> bool:
    """Log one captured line (without its newline) as a JSON event; True if it was written."""
    text = raw.decode("utf-8", "backslashreplace").rstrip("\r\n")
    if not text.strip():
        return False
    counts.lines += 1
    log = log if log is not None else structlog.get_logger("uno_server.grpc_core")
    m = _CORE.fullmatch(text)
    if m is not None:
        event, level, source, text = "grpc core", _LEVELS[m["lvl"]], m["source"], m["text"]
    else:
        event, level, source = "stderr output", "warning", ""
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 1] + "…"
    fields: dict[str, Any] = {"text": text}
    if source:
        fields["source"] = source
    written = limits.log((event, source), getattr(log, level), event, **fields)
    if not written:
        counts.suppressed += 1
    return written


def _read(fd: int, on_line: Callable[[bytes], object]) -> None:
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        if len(pending) > MAX_PENDING:
            lines.append(pending)
            pending = b""
        for line in lines:
            with contextlib.suppress(Exception):  # a line must never stop the reading
                on_line(line)
    if pending:
        with contextlib.suppress(Exception):
            on_line(pending)
    os.close(fd)


@contextlib.contextmanager
def captured(on_line: Callable[[bytes], object] = handle_line) -> Iterator[None]:
    """Capture fd 2 for the duration (see the module docstring); restored on the way out, after
    every line written so far was logged. Call it before the log is configured: the log writes
    to ``sys.stderr`` as it is then."""
    try:
        saved = os.dup(2)
    except OSError:  # no fd 2 at all: nothing to capture
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_inheritable(saved, False)
    old_stderr = sys.stderr
    own = open(saved, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.stderr = own
    was_enabled = faulthandler.is_enabled()
    faulthandler.enable(file=own)  # a crash's traceback reaches the log, not the pipe
    os.dup2(write_fd, 2)
    os.close(write_fd)
    reader = threading.Thread(target=_read, args=(read_fd, on_line), name="fd2", daemon=True)
    reader.start()
    try:
        yield
    finally:
        own.flush()
        os.dup2(saved, 2)  # the pipe's last writer gone: the reader drains it and ends
        reader.join(timeout=5)
        sys.stderr = old_stderr
        if was_enabled:
            faulthandler.enable(file=old_stderr)
        else:
            faulthandler.disable()
        # ``own`` stays open: the log was configured with it, and its fd is the original fd 2


class CoreLogCollector:
    """The captured lines' counts on a server's metrics page."""

    def __init__(self, counts: LineCounts = LINES) -> None:
        self.counts = counts

    def collect(self) -> Iterable[Metric]:
        yield CounterMetricFamily(
            "uno_grpc_core_lines",
            "Lines gRPC core (or other native code) wrote to the server's stderr; each is "
            "logged as a JSON event, rate-limited.",
            value=self.counts.lines,
        )
        yield CounterMetricFamily(
            "uno_grpc_core_lines_suppressed",
            "Of those, lines left out of the log by its rate limit.",
            value=self.counts.suppressed,
        )
