"""A run's progress and its event loop's health: :class:`Progress` (hands done and to go, the
pace, the ETA) feeds the runner's console lines and the live display (:mod:`uno_tournament.live`);
:class:`LagMonitor` measures how late the event loop wakes a sleeping task."""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .metrics import TournamentMetrics


def say_to(stream: Any, msg: str) -> Any:
    """Print ``msg`` to ``stream``; the stream to print to next. A reader that went away (a
    run piped to ``head``, a log reader that died) is no reason to stop a run, which stores
    every hand either way: what it would have read goes to the null device from then on (an
    examination's ``league run ... | head -2`` stopped with a BrokenPipeError traceback)."""
    try:
        print(msg, file=stream, flush=True)
        return stream
    except BrokenPipeError:
        null = os.open(os.devnull, os.O_WRONLY)
        try:  # the same file object, now writing nowhere (its buffer flushes there too)
            os.dup2(null, stream.fileno())
            return stream
        except (OSError, ValueError, AttributeError):
            return open(os.devnull, "w")  # kept for the run's life
        finally:
            os.close(null)


@dataclass
class Progress:
    planned: int
    done: int
    started: float = field(default_factory=time.monotonic)
    recent: deque[float] = field(default_factory=deque)
    moves: int = 0
    retries: int = 0
    new_hands: int = 0

    def add(self, moves: int) -> None:
        now = time.monotonic()
        self.done += 1
        self.new_hands += 1
        self.moves += moves
        self.recent.append(now)
        while self.recent and now - self.recent[0] > 30.0:
            self.recent.popleft()

    def rate(self) -> float:
        now = time.monotonic()
        recent = sum(1 for t in list(self.recent) if now - t <= 30.0)  # read-only: display thread
        span = min(30.0, now - self.started)
        return recent / span if span > 0.5 else 0.0

    def eta_s(self) -> float | None:
        r = self.rate()
        return (self.planned - self.done) / r if r > 0 else None


class LagMonitor:
    """Measures how late the event loop wakes a task that sleeps ``interval_s`` again and again:
    the longest stall any coroutine (a bot's stream, a hand being followed) has suffered."""

    def __init__(self, metrics: TournamentMetrics, interval_s: float = 0.01) -> None:
        self.metrics = metrics
        self.interval_s = interval_s
        self.max_lag_s = 0.0
        self.samples = 0
        self.stalls: list[tuple[float, float]] = []
        """``(when, lag)`` of every stall over 20 ms (monotonic clock)."""

    def reset(self) -> None:
        self.max_lag_s = 0.0
        self.samples = 0
        self.stalls = []

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t0 = loop.time()
            await asyncio.sleep(self.interval_s)
            lag = max(0.0, loop.time() - t0 - self.interval_s)
            self.samples += 1
            if lag > 0.02:
                self.stalls.append((t0, lag))
            if lag > self.max_lag_s:
                self.max_lag_s = lag
                self.metrics.loop_lag_max.set(lag)
            self.metrics.loop_lag.observe(lag)


ProgressCallback = Callable[[Progress], None]
