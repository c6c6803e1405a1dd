"""A CPU-time limit for a call that may loop forever, so that a regression fails its test
instead of hanging the run. POSIX only (SIGVTALRM); the interrupted code must run Python bytecode
or call back into it now and then, as the engine's deal does through its generator.

The limit counts the CPU time this process spends, not the wall clock: a call that loops forever
burns CPU without end and is stopped, while a machine busy with other work (issue 21, item 3)
only makes the call wait longer for a CPU, which is not charged."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise TimeoutError(f"{what} did not finish within {seconds} s of CPU time")

    previous = signal.signal(signal.SIGVTALRM, expired)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)
