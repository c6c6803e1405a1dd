"""The play screen's lines read as English for every subject and object: "you" takes "your",
"draw", "are", "name" and "have"; everyone else takes "ai-1's", "draws", "is", "names" and "has".
Every combination of the viewer as subject, object, both or neither is checked."""

from __future__ import annotations

import re

import pytest

from uno_server.engine import cards as C
from uno_server.gen.uno.v1 import cards_pb2, game_pb2
from uno_server.play.model import SPECTATOR, TableModel

NAMES = ["ai-0", "ai-1", "ai-2", "ai-3"]
# no line ever says these (the viewer is "you", and "you" conjugates as second person)
WRONG = re.compile(
    r"\byou's\b|\bYou's\b|\b[Yy]ou (draws|is|names|has|deals|was)\b"
    r"|\bai-\d (draw|are|name|have|deal|were) "
)


def _line(viewer: int, **event: object) -> str:
    model = TableModel(NAMES, viewer=viewer)
    line = model.apply(game_pb2.Event(sequence=1, hand_number=1, **event))  # type: ignore[arg-type]
    assert line is not None
    assert not WRONG.search(line.text), line.text
    return line.text


@pytest.mark.parametrize(
    ("viewer", "bluff", "expected"),
    [
        # the viewer challenged
        (0, True, "You challenged the Wild Draw Four from ai-1: a bluff! ai-1 draws 4."),
        (0, False, "You challenged the Wild Draw Four from ai-1: it was honest. You draw 6."),
        # the viewer was challenged
        (1, True, "ai-0 challenged your Wild Draw Four: a bluff! You draw 4."),
        (1, False, "ai-0 challenged your Wild Draw Four: it was honest. ai-0 draws 6."),
        # neither (a player beside them, or a spectator)
        (2, True, "ai-0 challenged the Wild Draw Four from ai-1: a bluff! ai-1 draws 4."),
        (2, False, "ai-0 challenged the Wild Draw Four from ai-1: it was honest. ai-0 draws 6."),
        (SPECTATOR, True, "ai-0 challenged the Wild Draw Four from ai-1: a bluff! ai-1 draws 4."),
        (
            SPECTATOR,
            False,
            "ai-0 challenged the Wild Draw Four from ai-1: it was honest. ai-0 draws 6.",
        ),
    ],
)
def test_a_challenge_line_for_every_subject_and_object(
    viewer: int, bluff: bool, expected: str
) -> None:
    text = _line(viewer, challenged=game_pb2.ChallengedEvent(challenger=0, offender=1, bluff=bluff))
    assert text == expected


@pytest.mark.parametrize("viewer", [0, 1, SPECTATOR])
def test_other_lines_agree_with_their_subject(viewer: int) -> None:
    you = viewer == 0
    assert _line(viewer, seat_eliminated=game_pb2.SeatEliminatedEvent(seat=0, total=500)) == (
        "You reached 500 points and are out." if you else "ai-0 reached 500 points and is out."
    )
    assert _line(viewer, dealer_chosen=game_pb2.DealerChosenEvent(seat=0)) == (
        "You deal first." if you else "ai-0 deals first."
    )
    assert _line(viewer, skipped=game_pb2.SkippedEvent(seat=0)) == (
        "You were skipped." if you else "ai-0 was skipped."
    )
    opened = _line(viewer, uno_window_opened=game_pb2.UnoWindowOpenedEvent(seat=0))
    assert opened.startswith("You have one card" if you else "ai-0 has one card"), opened
    # a Wild turned first: the seat after the dealer (seat 0 here: dealer 3) names the colour
    model = TableModel(NAMES, viewer=viewer)
    model.dealer = 3
    line = model.apply(
        game_pb2.Event(
            sequence=1,
            hand_number=1,
            first_card=game_pb2.FirstCardEvent(card=cards_pb2.Card(code=C.WILD)),
        )
    )
    assert line is not None
    assert line.text.endswith(": you name the colour." if you else ": ai-0 names the colour.")


def test_whose_and_verb() -> None:
    model = TableModel(NAMES, viewer=2)
    assert [model.whose(s) for s in range(4)] == ["ai-0's", "ai-1's", "your", "ai-3's"]
    assert model.whose(2, start=True) == "Your"
    assert [model.verb(s, "draws", "draw") for s in (1, 2)] == ["draws", "draw"]
