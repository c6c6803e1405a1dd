"""SIGINT for the command line, whatever the process inherited (imported by both of its
entry points, the console script and ``python -m uno_server.cli``; it imports nothing of
ours)."""

from __future__ import annotations

import signal

__all__ = ["honour_ctrl_c"]


def honour_ctrl_c() -> None:
    """Make SIGINT raise KeyboardInterrupt even in a process started with it ignored.

    A `&` job of a script starts with SIGINT ignored (the shell sets SIG_IGN, and Python keeps
    an ignored signal ignored), so a SIGINT sent before a command installed its own handler was
    lost, and the whole run played: an examination's `kill -INT` 0.1-0.5 s after the start
    ended in exit status 0 (up to 4 s with a large plan). The commands honour SIGINT once
    started anyway, so they do from the first moment too."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
