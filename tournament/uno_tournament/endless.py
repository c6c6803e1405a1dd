"""A hand that never ends: bots that never play a card hold it open once the draw pile and the
discard pile run dry (every turn draws nothing and passes). The server ends such a match after
20,000 actions; the runner (:mod:`.player`) tries the hand again, and after the second such end
gives up on the bots that played no card in it (their seats go to stand-ins, which play), or,
if every seat played a card, stops the run naming the hand."""

from __future__ import annotations

import json
from typing import Any

from .schedule import HandSpec
from .wirejson import WireEvents

__all__ = ["ENDLESS_MARK", "ENDLESS_TRIES", "endless_stop", "idle_seats"]

ENDLESS_MARK = "did not end after"
"""In a cancelled match's end message: the server's cap on a hand's actions ended it (20,000)."""


def idle_seats(events: Any, n_seats: int) -> list[int]:
    """The seats that played no card in ``events`` (a list of Event messages, or a hand's
    WireEvents, whose JSON omits a seat of 0)."""
    played: set[int] = set()
    if isinstance(events, WireEvents):
        for e in json.loads(events.json()):
            if isinstance(e, dict) and isinstance(e.get("played"), dict):
                played.add(int(e["played"].get("seat", 0)))
    else:
        played = {e.played.seat for e in events if e.WhichOneof("kind") == "played"}
    return [s for s in range(n_seats) if s not in played]


ENDLESS_TRIES = 2
"""Tries of a hand that the server ends for never ending before the bots that played no card
in it are given up on (their seats then go to stand-ins, which play, so it ends): an
examination's bots that only ever drew held every try open (the draw pile runs dry and each
turn passes), and the run played the same hand again for ever, saying nothing; four such bots
in a league stopped it for good. If every seat played a card, the run stops naming the hand."""


def endless_stop(spec: HandSpec, why: str) -> str:
    """Why the run stops at a hand that never ends though every seat played a card."""
    return (
        f"hand {spec.hand_id} ({', '.join(spec.bots)}): {why} in {ENDLESS_TRIES} tries "
        "of the same deal, though every seat played a card (so no further bot is given up "
        "on for it). Read the bots' logs under logs/, fix or remove the bot that stalls it, "
        "and run the tournament again"
    )[:600]
