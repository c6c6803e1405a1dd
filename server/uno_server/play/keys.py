"""The play screen's move keys and their bindings (:class:`~uno_server.play.app.PlayApp`).

A letter's upper case (Caps Lock or Shift on) does what its lower case does: Textual tells the
two apart, so each has its own binding, the upper case's kept out of the footer (one entry a
move). Its "does not apply now" message is the same too (see ``PlayApp.on_key``).
"""

from __future__ import annotations

from textual.binding import Binding

CARD_KEYS = "1234567890"

MOVES = (
    ("d", "draw", "draw"),
    ("p", "pass_turn", "keep & pass"),
    ("u", "uno", "UNO"),
    ("c", "catch", "catch"),
    ("n", "let_go", "let go"),
    ("a", "accept", "accept"),
    ("x", "challenge", "challenge"),
    ("m", "new_match", "new match"),
)
"""A move's key, its action and the footer's word for it."""

MOVE_BINDINGS = [
    *(Binding(key, action, words) for key, action, words in MOVES),
    Binding("q", "quit", "quit"),
    # Caps Lock (or Shift) on: the same moves, not shown twice in the footer
    *(Binding(key.upper(), action, words, show=False) for key, action, words in MOVES),
    Binding("Q", "quit", "quit", show=False),
]

OFF_KEYS = {key: action for key, action, _ in MOVES}
OFF_KEYS |= {key.upper(): action for key, action, _ in MOVES}
OFF_KEYS["enter"] = "play_selected"
"""A move's key and its action: pressed while the move does not apply, the screen says why."""


__all__ = ["CARD_KEYS", "MOVE_BINDINGS", "OFF_KEYS"]
