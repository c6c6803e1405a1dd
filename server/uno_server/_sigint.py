"""SIGINT for the command line, whatever the process inherited (imported by both of its
entry points, the console script and ``python -m uno_server.cli``; it imports nothing of
ours)."""

from __future__ import annotations

import atexit
import os
import signal
import sys

__all__ = ["done", "honour_ctrl_c"]


def honour_ctrl_c() -> None:
    """Make SIGINT raise KeyboardInterrupt even in a process started with it ignored.

    A `&` job of a script starts with SIGINT ignored (the shell sets SIG_IGN, and Python keeps
    an ignored signal ignored), so a SIGINT sent before a command installed its own handler was
    lost, and the whole run played: an examination's `kill -INT` 0.1-0.5 s after the start
    ended in exit status 0 (up to 4 s with a large plan). The commands honour SIGINT once
    started anyway, so they do from the first moment too."""
    _state.armed = True
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


ENDED = "the command had already ended"


class _State:
    armed = False
    """Set by :func:`honour_ctrl_c`: this process is the command line's (not a test importing
    a command), so :func:`done` may take SIGINT over."""
    ended: int | None = None
    """The command's exit status, once :func:`done` has it."""


_state = _State()


def done(code: int) -> int:
    """The command's outcome is ``code`` (a run's reports are written): a Ctrl-C from now on
    has nothing left to interrupt.

    What follows is teardown: the event loop's executors, the fitting pool's processes, then
    the interpreter's exit, about 0.1 s after a run's reports. A Ctrl-C there was "interrupted"
    (exit status 130) after a run that had finished, or, once Python had given SIGINT back to
    the system while finalising its modules, a silent death by the signal (an examination,
    with ``--shards 2``). Now it is one line saying the command had ended, and the command's
    own status; in the last moments of the exit (after the ``atexit`` functions) SIGINT is
    ignored. Nothing happens in a process whose entry point did not call
    :func:`honour_ctrl_c`."""
    if not _state.armed or _state.ended is not None:
        return code
    _state.ended = code

    def leave(signum: int, frame: object) -> None:
        try:
            sys.stdout.flush()
        finally:
            os.write(2, f"uno-arena: Ctrl-C while exiting: {ENDED} (exit status {code})\n".encode())
            os._exit(code)

    signal.signal(signal.SIGINT, leave)
    return code


def _last() -> None:
    """The last ``atexit`` function (registered first): past it Python restores SIGINT's
    default action, which would kill the ended command silently."""
    if _state.ended is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


atexit.register(_last)
