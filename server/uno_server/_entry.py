"""The ``uno-arena`` console script: the command line's ``main``, imported inside a guard.

Importing the command line takes a second or more on a busy machine (grpc, the engine, the
tournament's parsers), and a Ctrl-C in that window was a KeyboardInterrupt traceback. Here it is
the one line every other Ctrl-C gives, with exit status 130."""

from __future__ import annotations

import signal
import sys


def honour_ctrl_c() -> None:
    """Make SIGINT raise KeyboardInterrupt even in a process started with it ignored.

    A `&` job of a script starts with SIGINT ignored (the shell sets SIG_IGN, and Python keeps
    an ignored signal ignored), so a SIGINT sent before a command installed its own handler was
    lost, and the whole run played: an examination's `kill -INT` 0.1-0.5 s after the start
    ended in exit status 0 (up to 4 s with a large plan). The commands honour SIGINT once
    started anyway, so they do from the first moment too."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> int:
    honour_ctrl_c()
    try:
        from .cli import main as command_line

        return command_line()
    except KeyboardInterrupt:
        print("uno-arena: interrupted", file=sys.stderr)
        return 130
