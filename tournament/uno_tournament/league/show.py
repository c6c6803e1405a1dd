"""What a running league waits for on its observers' behalf: the first scrape of its metrics page
(``league run --metrics-wait``) and a last look after it stops (``--metrics-linger``)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable

from .metrics import LeagueMetrics

__all__ = ["linger", "wait_first_scrape"]


async def wait_first_scrape(
    m: LeagueMetrics, wait_s: float, stopped: Callable[[], bool], say: Callable[[str], None]
) -> None:
    """Hold the first block until the metrics page has been read once (at most ``wait_s``
    seconds; a stop ends the wait), so that Prometheus holds every counter at 0 before its
    first increment and ``rate()`` counts the first block's hands."""
    if wait_s <= 0:
        return
    say(f"metrics: waiting up to {wait_s:g} s for the first scrape")
    deadline = time.monotonic() + wait_s
    while not m.scraped.is_set() and not stopped():
        if time.monotonic() >= deadline:
            say(
                f"metrics: no scrape within {wait_s:g} s; playing anyway "
                "(is Prometheus pointed at the metrics page?)"
            )
            return
        await asyncio.sleep(0.05)
    if m.scraped.is_set():
        say("metrics: first scrape seen; playing")


async def linger(seconds: float, say: Callable[[str], None]) -> None:
    """Keep what is served up ``seconds`` more for a last scrape; Ctrl-C or SIGTERM ends the
    wait."""
    if seconds <= 0:
        return
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, done.set)
            installed.append(sig)
    say(f"metrics: final values stay up {seconds:g} s for a last scrape (Ctrl-C ends the wait)")
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), seconds)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
