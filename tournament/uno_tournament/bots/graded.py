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

from uno_bot.examples.heuristic_bot import HeuristicBot


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--randomness", type=float, default=0.0)
    ns, rest = pre.parse_known_args(args)
    if not 0.0 <= ns.randomness <= 1.0:
        print(f"graded: --randomness must be within 0..1, got {ns.randomness}", file=sys.stderr)
        return 2
    bot = HeuristicBot(randomness=ns.randomness)
    bot.name = f"graded-{ns.randomness:g}"
    return bot.main(rest)


if __name__ == "__main__":
    raise SystemExit(main())
