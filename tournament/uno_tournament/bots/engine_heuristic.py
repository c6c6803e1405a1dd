"""The engine's rule-of-thumb player (``uno_server.engine.HeuristicBot``) over the wire, as an
SDK bot: the very code that plays built-in seats, so a tournament can rate it against bots in
every language. ``--randomness P`` plays a uniformly random legal action with probability P
instead (bots of graded strength: :mod:`uno_tournament.bots.graded`).

The protocol view is converted to the engine's SeatView by :mod:`uno_tournament.bots.convert`.

Run::

    python -m uno_tournament.bots.engine_heuristic --addr 127.0.0.1:50051 --token T \\
        --name py-heuristic
"""

from __future__ import annotations

import argparse
import zlib
from collections.abc import Sequence

from uno_bot import Bot, DecisionRequest, MatchState, configure_logging, parse_args
from uno_bot.sdk import fail, run_main
from uno_server.engine import HeuristicBot

from .convert import to_engine_view


class EngineHeuristicBot(Bot):
    """One engine HeuristicBot per (match, seat), seeded from the match id and seat."""

    name = "py-heuristic"
    version = "0.1.0"
    threaded = False  # a decision takes microseconds: no need for a worker thread

    def __init__(self, randomness: float = 0.0) -> None:
        self.randomness = randomness

    def decide(self, request: DecisionRequest, state: MatchState) -> int:
        engine_bot = state.data.get("engine_bot")
        if engine_bot is None:
            seed = zlib.crc32(f"{state.match_id}/{state.seat}".encode())
            engine_bot = HeuristicBot(seed=seed, randomness=self.randomness)
            state.data["engine_bot"] = engine_bot
        assert isinstance(engine_bot, HeuristicBot)
        return engine_bot.choose(to_engine_view(request))


def main(argv: Sequence[str] | None = None, *, default_name: str | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uno_tournament.bots.engine_heuristic",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    p.add_argument(
        "--randomness",
        type=float,
        default=0.0,
        help="probability of a uniformly random legal action instead (0..1, default 0)",
    )
    ns, cfg = parse_args(argv, default_name=default_name or EngineHeuristicBot.name, parser=p)
    if not 0.0 <= ns.randomness <= 1.0:
        raise fail(f"--randomness must be within 0..1, got {ns.randomness}")
    configure_logging(ns.log_level, json=ns.log_json)
    bot = EngineHeuristicBot(randomness=ns.randomness)
    bot.name = cfg.name or bot.name
    return run_main(bot, cfg)


if __name__ == "__main__":
    raise SystemExit(main())
