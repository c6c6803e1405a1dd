"""Run one of the example bots: uno-bot --bot heuristic|random --addr HOST:PORT --token T
(also python -m uno_bot)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from ._log import configure_logging
from .api import Bot
from .cli import parse_args, run_main
from .examples.heuristic_bot import add_chaos_arguments, bot_from_args
from .examples.random_bot import RandomBot

_BOTS = ("heuristic", "random")


def _bot_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bot",
        choices=_BOTS,
        default=os.environ.get("UNO_ARENA_BOT", "heuristic"),
        help="which example bot to run (env UNO_ARENA_BOT, default heuristic)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    _bot_argument(pre)
    chosen_name = pre.parse_known_args(argv)[0].bot
    parser = argparse.ArgumentParser(prog="uno-bot", description=__doc__)
    _bot_argument(parser)
    add_chaos_arguments(parser)
    default_name = "py-random" if chosen_name == "random" else "py-heuristic"
    ns, cfg = parse_args(argv, default_name=default_name, parser=parser)
    chosen: Bot = RandomBot() if ns.bot == "random" else bot_from_args(ns)
    configure_logging(ns.log_level, json=ns.log_json)
    return run_main(chosen, cfg)


if __name__ == "__main__":
    raise SystemExit(main())
