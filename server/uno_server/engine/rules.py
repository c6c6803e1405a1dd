"""The rule set: every option of DECISIONS.md as a named, validated field.

A rule set is recorded with every hand and travels in the protocol; ``RuleSet.from_dict`` rejects
unknown fields and out-of-range values with a message that names the field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final

from .errors import InvalidRulesError

FIRST_FLIP: Final = ("apply", "redraw")
SCORING: Final = ("standard", "lowest", "single_hand")
NUMBER_CARDS: Final = 76
"""Number cards (0-9) in one deck: per colour one 0 and two each of 1-9."""
NON_NUMBER_CARDS: Final = 32
"""Action and Wild cards in one deck: per colour two each of Skip, Reverse, Draw Two; 8 Wilds."""
MIN_UNDEALT: Final = 9
"""Cards that always stay undealt: more than the Wild Draw Fours of two decks (8), so the first
flip under ``first_flip = apply``, which returns a Wild Draw Four, always finds another card."""


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Options of a table. Defaults are the classic rules as DECISIONS.md settles them."""

    seats: int = 4
    """Seats at the table, 2-10."""
    decks: int = 1
    """1, or 2 decks shuffled together (for 7+ seats)."""
    hand_size: int = 7
    """Cards dealt to each seat."""
    first_flip: str = "apply"
    """``apply`` the first card's action (W2085), or ``redraw`` until a number card shows."""
    scoring: str = "standard"
    """``standard`` race to ``target_score``, ``lowest`` total wins, or ``single_hand``."""
    target_score: int = 500
    """Points that end a match (standard, lowest, challenge_uno)."""
    uno_penalty: int = 2
    """Cards drawn by a seat caught without calling UNO: 2, or 4 (the older 42885 sheet)."""
    uno_window_ms: int = 2000
    """How long the service keeps the UNO catch window open, in milliseconds."""
    two_seat_rules: bool = True
    """With two seats Reverse acts as Skip (the older sheet). Always true; kept to be recorded."""
    stacking: bool = False
    """House rule: a Draw Two may be answered with a Draw Two to pass the growing penalty on."""
    stacking_wd4: bool = False
    """House rule, with ``stacking``: a Wild Draw Four may also go on top of a Draw Two stack."""
    jump_in: bool = False
    """House rule: a card identical to the top discard may be played out of turn."""
    seven_o: bool = False
    """House rule: a 7 swaps hands with a chosen seat; a 0 passes every hand along the direction."""
    draw_until_playable: bool = False
    """House rule: a draw keeps drawing until a playable card turns up."""
    partners: bool = False
    """House rule (4 seats): seats across are a team and score together."""
    challenge_uno: bool = False
    """House rule: running totals of points held; a seat reaching ``target_score`` is out."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        def bad(field: str, msg: str) -> InvalidRulesError:
            return InvalidRulesError(f"rules.{field}: {msg}", reason="INVALID_RULES")

        for f in dataclasses.fields(self):
            _check_type(f, getattr(self, f.name))
        if not 2 <= self.seats <= 10:
            raise bad("seats", f"must be 2-10, got {self.seats}")
        if self.decks not in (1, 2):
            raise bad("decks", f"must be 1 or 2, got {self.decks}")
        if not 1 <= self.hand_size <= 15:
            raise bad("hand_size", f"must be 1-15, got {self.hand_size}")
        deck = 108 * self.decks
        dealt = self.seats * self.hand_size
        if deck - dealt < MIN_UNDEALT:
            raise bad(
                "hand_size",
                f"{self.seats} seats x {self.hand_size} cards = {dealt} of the {deck}-card deck "
                f"leave {deck - dealt} undealt; at least {MIN_UNDEALT} must stay undealt "
                f"(deal at most {(deck - MIN_UNDEALT) // self.seats} cards each)",
            )
        if self.first_flip not in FIRST_FLIP:
            raise bad(
                "first_flip", f"must be one of {', '.join(FIRST_FLIP)}, got {self.first_flip!r}"
            )
        if self.first_flip == "redraw" and deck - dealt <= NON_NUMBER_CARDS * self.decks:
            # RULINGS.md, "The redraw flip needs a number card": whatever the shuffle, the undealt
            # cards must hold a number card, or the flip could never end.
            most = (NUMBER_CARDS * self.decks - 1) // self.seats
            raise bad(
                "hand_size",
                f"first_flip = redraw flips until a number card shows, so the undealt cards must "
                f"outnumber the {NON_NUMBER_CARDS * self.decks} action and Wild cards of "
                f"{self.decks} deck(s): {self.seats} seats x {self.hand_size} cards = {dealt} "
                f"leave {deck - dealt} undealt; deal at most {most} cards each, add a deck or "
                f"use first_flip = apply",
            )
        if self.scoring not in SCORING:
            raise bad("scoring", f"must be one of {', '.join(SCORING)}, got {self.scoring!r}")
        if not 1 <= self.target_score <= 100_000:
            raise bad("target_score", f"must be 1-100000, got {self.target_score}")
        if self.uno_penalty not in (2, 4):
            raise bad("uno_penalty", f"must be 2 or 4, got {self.uno_penalty}")
        if not 0 <= self.uno_window_ms <= 60_000:
            raise bad("uno_window_ms", f"must be 0-60000 ms, got {self.uno_window_ms}")
        if not self.two_seat_rules:
            raise bad("two_seat_rules", "only the older sheet's two-seat rules are implemented")
        if self.stacking_wd4 and not self.stacking:
            raise bad("stacking_wd4", "needs stacking = true")
        if self.partners and self.seats != 4:
            raise bad("partners", f"needs exactly 4 seats, got {self.seats}")
        if self.partners and self.scoring != "standard":
            raise bad("partners", "needs scoring = standard")
        if self.challenge_uno and self.scoring != "lowest":
            raise bad("challenge_uno", "needs scoring = lowest (running totals of points held)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        if not isinstance(data, dict):
            raise InvalidRulesError(f"rules: must be a table of options, got {type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for key, value in data.items():
            if key not in fields:
                name = key if isinstance(key, str) and key.isidentifier() else repr(key)
                raise InvalidRulesError(  # a quoted name: never a raw newline in the message
                    f"rules.{name}: unknown option (known: {', '.join(sorted(fields))})"
                )
            # before construction: the compiled class would refuse a wrong type with TypeError
            _check_type(fields[key], value)
        return cls(**data)

    @classmethod
    def wango(cls) -> RuleSet:
        """WANGO online rules: four seats, single hand, no stacking, 2 s UNO window."""
        return cls(seats=4, scoring="single_hand")


def _check_type(f: dataclasses.Field[Any], v: object) -> None:
    """Raise InvalidRulesError naming the field unless ``v`` has the field's type."""
    want = int if f.type in ("int", int) else bool if f.type in ("bool", bool) else str
    if want is int and (not isinstance(v, int) or isinstance(v, bool)):
        raise InvalidRulesError(f"rules.{f.name}: must be an integer, got {v!r}")
    if want is bool and not isinstance(v, bool):
        raise InvalidRulesError(f"rules.{f.name}: must be true or false, got {v!r}")
    if want is str and not isinstance(v, str):
        raise InvalidRulesError(f"rules.{f.name}: must be a string, got {v!r}")


CLASSIC: Final = RuleSet()
