"""``uno-arena replay FILE`` checks the events a reader follows, not only the actions.

An examination changed a played card in a stand-alone replay (``yellow_4`` to ``yellow_5``)
and the file was "confirmed": only the actions and the result were re-derived. The fixture is a
hand a tournament really played (18 kinds of event: a challenge, a catch, a reshuffle...)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from uno_tournament.replay import check
from uno_tournament.replay_events import SERVICE, events_problem

FIXTURE = Path(__file__).parent / "data" / "replay_with_events.json"


def _replay() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def _index(data: dict[str, Any], kind: str) -> int:
    return next(i for i, e in enumerate(data["events"]) if kind in e)


def test_the_real_hand_is_confirmed() -> None:
    v = check(_replay())
    assert v.ok, v.message


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda e: e["played"]["card"].update(code=e["played"]["card"]["code"] + 1), "card"),
        (lambda e: e["played"].update(seat=(e["played"].get("seat", 0) + 1) % 4), "seat"),
    ],
)
def test_an_edited_played_card_or_seat_is_found(edit: Any, needle: str) -> None:
    data = _replay()
    i = _index(data, "played")
    edit(data["events"][i])
    v = check(data)
    assert not v.ok and f"events[{i}]" in v.message and needle in v.message, v.message


def test_other_edits_are_found() -> None:
    base = _replay()
    data = copy.deepcopy(base)
    i = _index(data, "drew")
    data["events"][i]["drew"]["amount"] = data["events"][i]["drew"].get("amount", 0) + 2
    assert not check(data).ok
    data = copy.deepcopy(base)
    i = _index(data, "challenged")
    del data["events"][i]  # a challenge taken out of the story
    v = check(data)
    assert not v.ok and "events" in v.message, v.message
    data = copy.deepcopy(base)
    j = _index(data, "played")
    data["events"].insert(j, copy.deepcopy(data["events"][j]))  # a card played twice
    assert not check(data).ok
    data = copy.deepcopy(base)
    data["events"][_index(data, "hand_ended")]["hand_ended"]["winner"] = 3
    assert not check(data).ok


def test_what_the_engine_cannot_know_is_not_compared() -> None:
    data = _replay()
    for e in data["events"]:
        e["time"] = "2030-01-01T00:00:00Z"  # the server's clock
    kinds = {k for e in data["events"] for k in e}
    assert kinds & SERVICE  # the match's score and end are the service's
    assert check(data).ok


def spectator_protos(hand: Any) -> list[Any]:
    """What the service sends a spectator of ``hand``: each engine event redacted and converted
    as the table does."""
    from uno_server.engine.views import SPECTATOR, redact
    from uno_server.service import convert

    out = []
    for seq, ev in enumerate(hand.log, 1):
        view = redact(ev, SPECTATOR)
        if view is not None:
            msg = convert.event_to_proto(view, seq, 1, convert.timestamp(1.8e9 + seq))
            if msg.WhichOneof("kind") == "dealt":  # the count is public (seat_log._convert)
                msg.dealt.amount = len(ev.cards)
            out.append(msg)
    return out


def _spectator_events(hand: Any) -> list[dict[str, Any]]:
    """:func:`spectator_protos` as a replay stores them."""
    from uno_tournament.eventjson import event_dicts

    return list(event_dicts(spectator_protos(hand)))


def test_every_rule_set_s_spectator_events_check_clean() -> None:
    """The check against the service's own conversion, under the house rules (stacking, jump-in,
    seven-o, partners, draw until playable) and 2-5 seats; and an edit is still found."""
    from .test_eventjson import RULES, random_hand

    kinds: set[str] = set()
    for rules in RULES:
        for seed in range(8):
            hand = random_hand(rules, seed)
            events = _spectator_events(hand)
            assert events_problem(events, hand.log) == "", (rules, seed)
            kinds.update(k for e in events for k in e if k not in ("hand_number", "sequence"))
            played = [e for e in events if "played" in e]
            if played:
                played[-1]["played"]["seat"] = (played[-1]["played"].get("seat", 0) + 1) % 2
                assert events_problem(events, hand.log) != ""
    assert {"played", "drew", "hand_ended", "dealt", "skipped", "reversed"} <= kinds, kinds
