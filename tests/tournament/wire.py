"""Engine positions as the wire shows them: DecisionRequests built by the server's own
converters, for tests of bots that read the protocol view."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import cast

from uno_bot.proto import bot_pb2, cards_pb2
from uno_server.engine import RuleSet
from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine.hand import OVER, Hand
from uno_server.gen.uno.v1 import bot_pb2 as server_bot_pb2
from uno_server.service import convert


def card_msg(code: int) -> cards_pb2.Card:
    return cards_pb2.Card(
        color=(code >> 4) + 1,  # type: ignore[arg-type]
        rank=(code & 15) + 1,  # type: ignore[arg-type]
        code=code,
        name=C.name(code),
    )


def request(hand: Hand, seat: int, *, match_id: str = "m1") -> bot_pb2.DecisionRequest:
    """The DecisionRequest the server would send ``seat`` now (prompt aside: PROMPT_TURN)."""
    req = server_bot_pb2.DecisionRequest(
        request_id=f"{match_id}-{hand.turn}-{seat}",
        match_id=match_id,
        seat=seat,
        hand_number=hand.hand_number,
        prompt=server_bot_pb2.PROMPT_TURN,
        required=True,
        time_left_ms=1000,
        decision_ms=1000,
        legal_actions=[convert.legal_action(a) for a in hand.legal_actions(seat)],
    )
    req.view.CopyFrom(
        convert.seat_view(hand, seat, [0] * hand.rules.seats, [False] * hand.rules.seats, None)
    )
    if hand.window >= 0:
        late = seat == hand.window
        req.prompt = server_bot_pb2.PROMPT_LATE_UNO if late else server_bot_pb2.PROMPT_UNO_WINDOW
        req.required = False
    default = hand.default_action(seat)
    if default is not None and req.required:
        req.default_action_id = default
    # built with the server's converters; the SDK's class is the same at run time (one
    # descriptor pool), only the type checker tells the two generated copies apart
    return cast(bot_pb2.DecisionRequest, req)


def positions(rules: RuleSet, seed: int, steps: int) -> Iterator[tuple[Hand, int]]:
    """(hand, seat) for every seat at every step of a random game; the hand moves on when the
    consumer asks for the next pair, so look at it before that."""
    rng = random.Random(seed)
    hand = Hand.deal(rules, seed=seed, dealer=seed % rules.seats)
    for _ in range(steps):
        for s in range(rules.seats):
            yield hand, s
        actors = [s for s in range(rules.seats) if hand.legal_actions(s)]
        if hand.phase == OVER or not actors:
            break
        seat = rng.choice(actors)
        legal = hand.legal_actions(seat)
        plays = [a for a in legal if a >= A.PLAY_BASE]
        hand.apply(seat, rng.choice(plays) if plays and rng.random() < 0.97 else legal[0])
