"""The events of a replay, checked against the engine's re-run of its actions.

``uno-arena replay FILE`` re-ran a record's actions and compared the result, but not the
``events`` list a reader follows: an examination changed a played card in a stand-alone replay
(``yellow_4`` to ``yellow_5``) and the file was "confirmed". Inside a tournament folder the
database's content digest covers the whole file; a replay published on its own had nothing.

The engine's events are the table's; the file's are what a spectator was sent. So the engine's
private events (a challenge's evidence, shown to the challenger alone) are left out of the
comparison, and so are the events the service adds around a hand (a seat's connection, a
timeout, a take-over, the match's score and end). What is compared, in order: each event's kind
and the public fields a reader sees (the seat, the card, the amount, the challenger and offender,
the catcher, the winner). Event times are the server's clock and cannot be re-derived.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

PRIVATE = frozenset({"challenge_evidence"})
"""Engine events a spectator is not sent."""
SERVICE = frozenset(
    {
        "connection",
        "timed_out",
        "taken_over",
        "hand_scored",
        "match_started",
        "match_ended",
        "match_cancelled",
        "dealer_draw",
        "dealer_chosen",
        "seat_eliminated",
    }
)
"""Events the service adds around the engine's (or a whole match's, not a hand's)."""
_META = frozenset({"hand_number", "sequence", "time"})
_FIELDS = ("seat", "challenger", "offender", "catcher", "winner", "amount", "target")
"""Public integer fields compared where the engine's event has them (0 is omitted in the
file, as protobuf's JSON omits a default)."""


def _kind(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _card_code(body: dict[str, Any]) -> int | None:
    card = body.get("card")
    if isinstance(card, dict):
        code = card.get("code", 0)
        return code if isinstance(code, int) else None
    return None


def events_problem(recorded: Any, engine_events: Sequence[Any]) -> str:
    """What differs between a replay's ``events`` and the engine's events of its re-run
    ("" when they agree, or when the record has no events list)."""
    if not isinstance(recorded, list):
        return ""
    mine = [e for e in engine_events if _kind(type(e).__name__) not in PRIVATE]
    theirs: list[tuple[int, str, dict[str, Any]]] = []
    for i, e in enumerate(recorded):
        if not isinstance(e, dict):
            return f"events[{i}] is not an object"
        kinds = [k for k in e if k not in _META]
        if len(kinds) != 1 or not isinstance(e[kinds[0]], dict):
            return f"events[{i}] is not one event"
        if kinds[0] not in SERVICE:
            theirs.append((i, kinds[0], e[kinds[0]]))
    for n, (ev, (i, kind, body)) in enumerate(zip(mine, theirs, strict=False)):
        want = _kind(type(ev).__name__)
        if kind != want:
            return f"events[{i}] is {kind!r}, the engine's event {n + 1} of the hand is {want!r}"
        for field in _FIELDS:
            if field in ev._fields and not isinstance(getattr(ev, field), tuple):
                expect = getattr(ev, field)
                if field == "amount" and want == "dealt":
                    continue
                got = body.get(field, 0)
                if got != expect:
                    return f"events[{i}] ({kind}) has {field} {got!r}, the engine's {expect!r}"
        if want == "dealt":
            got = body.get("amount", 0)
            if got != len(ev.cards):
                return f"events[{i}] (dealt) has amount {got!r}, the engine's {len(ev.cards)}"
        if "card" in ev._fields:
            code = _card_code(body)
            if code != ev.card:
                return f"events[{i}] ({kind}) has card {code!r}, the engine's {ev.card}"
    if len(mine) != len(theirs):
        return (
            f"the events hold {len(theirs)} of the table's events, the engine's re-run {len(mine)}"
        )
    return ""
