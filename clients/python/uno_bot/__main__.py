"""``python -m uno_bot --bot heuristic|random --addr HOST:PORT --token T [--name NAME]``."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from .examples.heuristic_bot import HeuristicBot
from .examples.random_bot import RandomBot
from .sdk import Bot, configure_logging, parse_args, run

BOTS: dict[str, type[Bot]] = {"heuristic": HeuristicBot, "random": RandomBot}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m uno_bot", description=__doc__)
    parser.add_argument(
        "--bot",
        choices=sorted(BOTS),
        default=os.environ.get("UNO_ARENA_BOT", "heuristic"),
        help="which example bot to run (env UNO_ARENA_BOT, default heuristic)",
    )
    pre, _ = parser.parse_known_args(argv)
    chosen = BOTS[pre.bot]()
    ns, cfg = parse_args(argv, default_name=chosen.name, parser=parser)
    configure_logging(ns.log_level, json=ns.log_json)
    from .sdk import FatalStreamError

    try:
        run(chosen, cfg)
    except FatalStreamError as err:
        print(f"uno_bot: {err}", flush=True)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
