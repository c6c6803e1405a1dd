"""The engine's heuristic bot over the wire, playing a uniformly random legal action with
probability ``--randomness`` instead (a blunder: a needless draw, a missed UNO call): bots of
graded strength for checking the rankings, named for their share of blunders
(``--randomness 0.25`` is ``blunders-25``).

Run::

    python -m uno_tournament.bots.graded --randomness 0.25 --addr 127.0.0.1:50051 --token T \\
        --name py-blunders-25
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .engine_heuristic import main as engine_main


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--randomness", type=float, default=0.0)
    ns, _ = pre.parse_known_args(args)
    return engine_main(args, default_name=blunders_name(ns.randomness))


def blunders_name(randomness: float) -> str:
    """The bot's name for its share of random decisions: 0.25 -> ``py-blunders-25``."""
    return f"py-blunders-{100 * randomness:g}"


if __name__ == "__main__":
    raise SystemExit(main())
