"""A wall-clock limit for a call that may loop forever, so that a regression fails its test
instead of hanging the run. POSIX only (SIGALRM); the interrupted code must run Python bytecode
or call back into it now and then, as the engine's deal does through its generator."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise TimeoutError(f"{what} did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
