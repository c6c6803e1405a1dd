"""Checking saved hands and matches before they are restored (RULINGS.md, "A saved hand must be
one the rules can reach").

A snapshot is input like any other: :func:`check_hand` and :func:`check_match` read every field
with its type and range, then check the invariants every real hand keeps, and raise
:class:`~uno_server.engine.errors.StateError` naming the first field that is wrong.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Final

from . import actions as A
from . import cards as C
from .errors import InvalidRulesError, MalformedActionError, StateError
from .rules import RuleSet

TURN: Final = 0
DRAWN: Final = 1
CHALLENGE: Final = 2
STACK: Final = 3
CHOOSE_COLOR: Final = 4
OVER: Final = 5
SYSTEM: Final = -1
CLOSE_WINDOW: Final = 6

HAND_FIELDS: Final = (
    "format",
    "rules",
    "seed",
    "dealer",
    "hand_number",
    "rng",
    "hands",
    "draw_pile",
    "discard",
    "color",
    "direction",
    "current",
    "phase",
    "drawn",
    "uno_called",
    "window",
    "answered",
    "wd4_offender",
    "wd4_bluff",
    "wd4_evidence",
    "stack",
    "turn",
    "winner",
    "actions",
)
MATCH_FIELDS: Final = (
    "format",
    "rules",
    "seed",
    "rng",
    "totals",
    "active",
    "eliminated",
    "winners",
    "hand_number",
    "dealer",
    "scored",
    "hand",
)
_MT_WORDS: Final = 624
"""Words of the Mersenne Twister state; ``random.Random.getstate`` adds the position (0-624)."""


class _Reader:
    """Typed access to the fields of one snapshot, raising StateError with the field's path."""

    def __init__(self, data: object, where: str, fields: tuple[str, ...]) -> None:
        if not isinstance(data, dict):
            raise StateError(
                f"{where}: must be a table of fields, got {type(data).__name__}", field=where
            )
        for key in data:
            if key not in fields:
                raise StateError(f"{where}.{key}: unknown field", field=f"{where}.{key}")
        for key in fields:
            if key not in data:
                raise StateError(f"{where}.{key}: missing", field=f"{where}.{key}")
        self.data: dict[str, Any] = data
        self.where = where

    def fail(self, key: str, what: str) -> StateError:
        return StateError(f"{self.where}.{key}: {what}", field=f"{self.where}.{key}")

    def get_int(self, key: str, lo: int | None = None, hi: int | None = None) -> int:
        return _int(self.data[key], f"{self.where}.{key}", lo, hi)

    def get_bool(self, key: str) -> bool:
        v = self.data[key]
        if not isinstance(v, bool):
            raise self.fail(key, f"must be true or false, got {v!r}")
        return v

    def get_list(self, key: str) -> list[Any]:
        v = self.data[key]
        if not isinstance(v, list):
            raise self.fail(key, f"must be a list, got {type(v).__name__}")
        return v

    def get_ints(self, key: str, lo: int | None = None, hi: int | None = None) -> list[int]:
        return [
            _int(x, f"{self.where}.{key}[{i}]", lo, hi) for i, x in enumerate(self.get_list(key))
        ]

    def get_cards(self, key: str) -> list[int]:
        return _cards(self.get_list(key), f"{self.where}.{key}")

    def get_rules(self) -> RuleSet:
        try:
            return RuleSet.from_dict(self.data["rules"])
        except InvalidRulesError as exc:
            raise StateError(f"{self.where}.{exc}", field=f"{self.where}.rules") from exc

    def get_rng(self) -> tuple[int, tuple[int, ...], float | None]:
        v = self.data["rng"]
        if not isinstance(v, list) or len(v) != 3:
            raise self.fail("rng", "must be [version, state, gauss] as random.getstate() gives")
        version, internal, gauss = v
        if version != 3 or isinstance(version, bool):
            raise self.fail("rng", f"generator state version must be 3, got {version!r}")
        if not isinstance(internal, list) or len(internal) != _MT_WORDS + 1:
            raise self.fail("rng", f"generator state must hold {_MT_WORDS + 1} integers")
        words = tuple(
            _int(x, f"{self.where}.rng[1][{i}]", 0, 2**32 - 1)
            for i, x in enumerate(internal[:_MT_WORDS])
        )
        pos = _int(internal[_MT_WORDS], f"{self.where}.rng[1][{_MT_WORDS}]", 0, _MT_WORDS)
        if gauss is not None and (not isinstance(gauss, float)):
            raise self.fail("rng", f"gauss must be null or a number, got {gauss!r}")
        return version, (*words, pos), gauss


def _int(v: object, path: str, lo: int | None = None, hi: int | None = None) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise StateError(f"{path}: must be an integer, got {v!r}", field=path)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        span = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise StateError(f"{path}: must be {span}, got {v}", field=path)
    return v


def _cards(v: list[Any], path: str) -> list[int]:
    out = []
    for i, x in enumerate(v):
        if not isinstance(x, int) or isinstance(x, bool) or not C.is_valid_code(x):
            raise StateError(f"{path}[{i}]: {x!r} is not a card code (see cards.py)", field=path)
        out.append(x)
    return out


def _deck_difference(found: Counter[int], decks: int) -> str:
    want = Counter(C.full_deck(decks))
    total = sum(found.values())
    parts = [f"{total} cards where {decks} deck(s) hold {sum(want.values())}"]
    for code in sorted(set(found) | set(want)):
        if found[code] != want[code]:
            parts.append(f"{found[code]} x {C.name(code)} where the deck has {want[code]}")
    shown = parts[:6] + (["..."] if len(parts) > 6 else [])
    return "; ".join(shown)


def check_hand(data: object, where: str = "hand") -> dict[str, Any]:
    """The fields of a saved hand, read and checked; raises StateError naming what is wrong."""
    r = _Reader(data, where, HAND_FIELDS)
    d = r.data
    if d["format"] != 1 or isinstance(d["format"], bool):
        raise r.fail("format", f"unknown saved-hand format {d['format']!r}")
    rules = r.get_rules()
    n = rules.seats
    out: dict[str, Any] = {"rules": rules, "rng": r.get_rng()}
    out["seed"] = r.get_int("seed")
    dealer = out["dealer"] = r.get_int("dealer", 0, n - 1)
    out["hand_number"] = r.get_int("hand_number", 1)
    raw_hands = r.get_list("hands")
    if len(raw_hands) != n:
        raise r.fail("hands", f"{len(raw_hands)} hands for {n} seats")
    hands: list[list[int]] = []
    for s, h in enumerate(raw_hands):
        if not isinstance(h, list):
            raise r.fail(f"hands[{s}]", f"must be a list, got {type(h).__name__}")
        hands.append(_cards(h, f"{where}.hands[{s}]"))
    out["hands"] = hands
    draw_pile = out["draw_pile"] = r.get_cards("draw_pile")
    discard = out["discard"] = r.get_cards("discard")
    color = out["color"] = r.get_int("color", -1, 3)
    direction = out["direction"] = r.get_int("direction", -1, 1)
    if direction == 0:
        raise r.fail("direction", "must be 1 or -1, got 0")
    current = out["current"] = r.get_int("current", 0, n - 1)
    phase = out["phase"] = r.get_int("phase", 0, OVER)
    drawn = out["drawn"] = r.get_int("drawn", -1)
    called = r.get_list("uno_called")
    if len(called) != n or not all(isinstance(x, bool) for x in called):
        raise r.fail("uno_called", f"must be {n} values true or false")
    out["uno_called"] = list(called)
    window = out["window"] = r.get_int("window", -1, n - 1)
    answered = out["answered"] = r.get_int("answered", 0, 2**n - 1)
    offender = out["wd4_offender"] = r.get_int("wd4_offender", -1, n - 1)
    out["wd4_bluff"] = r.get_bool("wd4_bluff")
    evidence = out["wd4_evidence"] = r.get_cards("wd4_evidence")
    stack = out["stack"] = r.get_int("stack", 0)
    turn = out["turn"] = r.get_int("turn", 0)
    winner = out["winner"] = r.get_int("winner", -1, n - 1)
    actions: list[tuple[int, int]] = []
    for i, a in enumerate(r.get_list("actions")):
        path = f"{where}.actions[{i}]"
        if not isinstance(a, list) or len(a) != 2:
            raise StateError(f"{path}: must be [seat, action id]", field=path)
        seat = _int(a[0], path, SYSTEM, n - 1)
        action = _int(a[1], path, 0)
        if seat == SYSTEM and action != CLOSE_WINDOW:
            raise StateError(f"{path}: the system only closes UNO windows (id 6)", field=path)
        if seat != SYSTEM:
            try:
                A.decode(action)
            except MalformedActionError as exc:
                raise StateError(f"{path}: {exc}", field=path) from exc
        actions.append((seat, action))
    out["actions"] = actions

    # ---------------------------------------------------------------- invariants of real hands
    found = Counter(draw_pile) + Counter(discard)
    for h in hands:
        found.update(h)
    if found != Counter(C.full_deck(rules.decks)):
        raise StateError(
            f"{where}.hands: with the draw and discard piles, the cards are not the deck: "
            f"{_deck_difference(found, rules.decks)}",
            field=f"{where}.hands",
        )
    if not discard:
        raise r.fail("discard", "is empty; it always holds at least the card flipped first")
    top = discard[-1]
    if turn != len(actions):
        raise r.fail("turn", f"is {turn} but {len(actions)} actions were taken")
    if n == 2 and direction != 1:
        raise r.fail("direction", "is always 1 with two seats (Reverse acts as Skip)")
    if (color < 0) != (phase == CHOOSE_COLOR):
        raise r.fail(
            "color",
            f"{color} does not fit the phase {phase}: no colour is active "
            "only while the colour of a Wild flipped first is being named",
        )
    if phase == CHOOSE_COLOR and (
        discard != [C.WILD]
        or turn != 0
        or current != (dealer + 1) % n
        or rules.first_flip != "apply"
    ):
        raise r.fail(
            "phase",
            "naming a colour only follows a Wild flipped first under "
            "first_flip = apply, before anyone acts, by the seat at the dealer's left",
        )
    if top < C.WILD and color != top >> 4:
        raise r.fail("color", f"{color} is not the colour of the top card {C.name(top)}")
    if (drawn >= 0) != (phase == DRAWN):
        raise r.fail(
            "drawn",
            f"{drawn} does not fit the phase {phase}: a drawn card is "
            "pending only in the phase after a draw",
        )
    if phase == DRAWN:
        if drawn not in hands[current]:
            raise r.fail("drawn", f"{C.name(drawn)} is not held by the seat to act ({current})")
        if not (drawn >= C.WILD or drawn >> 4 == color or drawn & 15 == top & 15):
            raise r.fail("drawn", f"{C.name(drawn)} cannot be played on {C.name(top)}")
    if stack % 2:
        raise r.fail("stack", f"must be even (Draw Twos add 2 each), got {stack}")
    if stack and phase not in (STACK, CHALLENGE):
        raise r.fail("stack", f"{stack} cards are owed only in a stack or a challenge")
    if phase == STACK and (
        not rules.stacking or stack < 2 or top & 15 != C.DRAW_TWO or top >= C.WILD
    ):
        raise r.fail(
            "phase", "a stack needs the stacking rule, a Draw Two on top and at least 2 cards owed"
        )
    if phase == CHALLENGE:
        if top != C.WILD_DRAW_FOUR:
            raise r.fail("phase", "a challenge needs a Wild Draw Four on top")
        if stack and not rules.stacking_wd4:
            raise r.fail("stack", "a Wild Draw Four goes on a stack only with stacking_wd4")
        under = discard[-2] if len(discard) > 1 else -1
        if stack and (under < 0 or under & 15 != C.DRAW_TWO or under >= C.WILD):
            raise r.fail(
                "stack",
                f"{stack} cards are owed, but the Wild Draw Four was not played on a Draw Two",
            )
        if offender < 0 or offender == current:
            raise r.fail(
                "wd4_offender",
                f"{offender} cannot have played the Wild Draw Four that seat {current} answers",
            )
        if Counter(evidence) - Counter(hands[offender]):
            raise r.fail("wd4_evidence", f"holds cards seat {offender} does not hold")
    if (winner >= 0) != (phase == OVER):
        raise r.fail(
            "winner",
            f"{winner} does not fit the phase {phase}: a hand has a winner exactly when it is over",
        )
    for s, h in enumerate(hands):
        if not h and s != winner:
            raise r.fail(f"hands[{s}]", "is empty, but the hand is not won by that seat")
    if winner >= 0 and hands[winner]:
        raise r.fail("winner", f"seat {winner} still holds {len(hands[winner])} cards")
    for s in range(n):
        if called[s] and len(hands[s]) != 1:
            raise r.fail(f"uno_called[{s}]", f"seat {s} holds {len(hands[s])} cards, not one")
    if window >= 0:
        if phase not in (TURN, CHALLENGE, STACK):
            raise r.fail("window", f"a UNO window cannot be open in phase {phase}")
        if len(hands[window]) != 1 or called[window]:
            raise r.fail(
                "window",
                f"seat {window} holds {len(hands[window])} cards"
                + (" and has called UNO" if called[window] else "")
                + "; a window opens on a seat down to one card without the call",
            )
        others = ((1 << n) - 1) & ~(1 << window)
        if answered & ~others or answered == others:
            raise r.fail(
                "answered",
                f"{answered:#b} is not a set of the seats still to answer seat {window}'s window",
            )
    elif answered:
        raise r.fail("answered", "must be 0 while no UNO window is open")
    return out


def check_match(data: object, where: str = "match") -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields of a saved match and of its hand, read and checked."""
    r = _Reader(data, where, MATCH_FIELDS)
    d = r.data
    if d["format"] != 1 or isinstance(d["format"], bool):
        raise r.fail("format", f"unknown saved-match format {d['format']!r}")
    rules = r.get_rules()
    n = rules.seats
    out: dict[str, Any] = {"rules": rules, "rng": r.get_rng(), "seed": r.get_int("seed")}
    out["totals"] = r.get_ints("totals", 0)
    if len(out["totals"]) != n:
        raise r.fail("totals", f"{len(out['totals'])} totals for {n} seats")
    active = out["active"] = r.get_ints("active", 0, n - 1)
    eliminated = out["eliminated"] = r.get_ints("eliminated", 0, n - 1)
    if active != sorted(set(active)) or sorted(active + eliminated) != list(range(n)):
        raise r.fail("active", "with eliminated must list every seat once, active ascending")
    if eliminated and not rules.challenge_uno:
        raise r.fail("eliminated", "seats drop out only under challenge_uno")
    winners = out["winners"] = tuple(r.get_ints("winners", 0, n - 1))
    out["hand_number"] = r.get_int("hand_number", 1)
    dealer = out["dealer"] = r.get_int("dealer", 0, n - 1)
    out["scored"] = r.get_bool("scored")
    if len(active) < 2 and not winners:
        raise r.fail("active", "a match in play has at least two seats")
    hand = check_hand(d["hand"], f"{where}.hand")
    if hand["rules"].to_dict() | {"seats": n} != rules.to_dict():
        raise r.fail("hand", "is dealt under other rules than the match's")
    if hand["hand_number"] != out["hand_number"]:
        raise r.fail("hand_number", f"is {out['hand_number']}, the hand's {hand['hand_number']}")
    if not out["scored"]:
        # once scored, seats may have dropped out (challenge UNO), the dealer among them
        if hand["rules"].seats != len(active):
            raise r.fail("hand", f"has {hand['rules'].seats} seats, the match {len(active)}")
        if dealer not in active or hand["dealer"] != active.index(dealer):
            raise r.fail("dealer", f"seat {dealer} is not the dealer of the hand in play")
    elif hand["rules"].seats < len(active):
        raise r.fail("hand", f"has {hand['rules'].seats} seats, fewer than the match's")
    over = hand["phase"] == OVER
    if out["scored"] and not over:
        raise r.fail("scored", "the hand in play cannot be scored before it ends")
    if winners and not out["scored"]:
        raise r.fail("winners", "a match is decided only when its last hand is scored")
    return out, hand
