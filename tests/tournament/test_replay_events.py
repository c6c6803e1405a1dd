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
from uno_tournament.replay_events import SERVICE

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
