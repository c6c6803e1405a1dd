"""The engine's rule-of-thumb player (``uno_server.engine.HeuristicBot``) over the wire.

It names the colour held most when playing a Wild, always calls UNO with the play, never bluffs a
Wild Draw Four, catches every missed UNO, challenges a Wild Draw Four only when a bluff is likely,
and prefers playing to drawing. The protocol view is converted to the engine's SeatView by
:mod:`uno_bot.convert`, so the very same code that plays built-in seats decides here.

Run::

    python -m uno_bot.examples.heuristic_bot --addr 127.0.0.1:50051 --token T --name py-heuristic
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from uno_bot import Bot, DecisionRequest, MatchState, to_engine_view
from uno_server.engine import HeuristicBot as EngineHeuristicBot


class HeuristicBot(Bot):
    name = "py-heuristic"
    version = "0.1.0"
    threaded = False  # a decision takes microseconds: no need for a worker thread

    def __init__(self, randomness: float = 0.0) -> None:
        self.randomness = randomness

    def decide(self, request: DecisionRequest, state: MatchState) -> int:
        engine_bot = state.data.get("engine_bot")
        if engine_bot is None:  # one engine bot per (match, seat), seeded from the ids
            seed = zlib.crc32(f"{state.match_id}/{state.seat}".encode())
            engine_bot = EngineHeuristicBot(seed=seed, randomness=self.randomness)
            state.data["engine_bot"] = engine_bot
        assert isinstance(engine_bot, EngineHeuristicBot)
        return engine_bot.choose(to_engine_view(request))


def main(argv: Sequence[str] | None = None) -> int:
    return HeuristicBot().main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
