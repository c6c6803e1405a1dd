"""A random bot: any legal card play, drawing only when it has nothing to play, and it keeps the
UNO call: a random *card*, never a random blunder (named ``py-random-card`` in the example
tournament).

Run: ``python -m uno_bot.examples.random_bot --addr 127.0.0.1:50051 --token T --name py-random``
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from uno_bot import Bot, DecisionRequest, MatchState
from uno_bot.proto import game_pb2


class RandomBot(Bot):
    """Picks uniformly among the card plays (preferring the one calling UNO), else any legal
    action; answers optional requests at random too. It takes microseconds, so it runs on the
    event loop (``threaded = False``)."""

    name = "py-random"
    version = "0.1.0"
    threaded = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, request: DecisionRequest, state: MatchState) -> int:
        actions = list(request.legal_actions)
        plays = [a for a in actions if a.kind == game_pb2.ACTION_KIND_PLAY]
        if plays:
            # a play that leaves one card comes with and without the UNO call: keep the call
            calls = {(a.card.code, a.color, a.target_seat) for a in plays if a.uno}
            plays = [
                a for a in plays if a.uno or (a.card.code, a.color, a.target_seat) not in calls
            ]
            return self.rng.choice(plays).id
        return self.rng.choice(actions).id


def main(argv: Sequence[str] | None = None) -> int:
    return RandomBot().main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
