"""The ``uno-arena`` console script: the command line's ``main``, imported inside a guard.

Importing the command line takes a second or more on a busy machine (grpc, the engine, the
tournament's parsers), and a Ctrl-C in that window was a KeyboardInterrupt traceback. Here it is
the one line every other Ctrl-C gives, with exit status 130."""

from __future__ import annotations

import sys

from ._sigint import done, honour_ctrl_c


def main() -> int:
    honour_ctrl_c()
    try:
        from .cli import main as command_line

        code = command_line()
    except KeyboardInterrupt:
        print("uno-arena: interrupted", file=sys.stderr)
        code = 130
    return done(code)
