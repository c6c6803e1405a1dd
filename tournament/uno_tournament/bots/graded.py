"""The engine's heuristic bot over the wire, playing a uniformly random legal action with
probability ``--randomness`` instead: bots of graded strength for checking the rankings.

Run::

    python -m uno_tournament.bots.graded --randomness 0.25 --addr 127.0.0.1:50051 --token T \\
        --name graded-25
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
    return engine_main(args, default_name=f"graded-{ns.randomness:g}")


if __name__ == "__main__":
    raise SystemExit(main())
