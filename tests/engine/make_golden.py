"""Regenerate the golden transcripts in tests/engine/golden (``make golden``).

Each case is a fixed (seed, rules, dealer, bots). The transcript records the rule set, the dealer,
the action list, and after the deal and after every action what each seat sees: its view (as
``seat_view`` gives it, cards by name) and the events redacted for it (and for a spectator).
``test_golden.py`` rebuilds every case in memory and compares it with the files, so any change
in the engine's behaviour, its views or its redaction shows up as a diff. Only run this when the
change is intended, and review the diff.

Run from the repository root: ``python tests/engine/make_golden.py``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_server.engine import SYSTEM, Hand, HeuristicBot, RandomBot, RuleSet, seat_view
from uno_server.engine import actions as ids
from uno_server.engine import cards as cardlib
from uno_server.engine import events as ev
from uno_server.engine.hand import CLOSE_WINDOW
from uno_server.engine.views import SPECTATOR, SeatView, redact_all

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
MAX_ACTIONS = 5_000


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    dealer: int
    rules: RuleSet
    bots: tuple[str, ...]
    """Per seat: ``heuristic``, ``random`` or ``random_draws`` (random, drawing voluntarily)."""
    view_every: int = 1
    """Record the seats' views after every ``view_every``-th action (and always the last)."""


CASES: tuple[Case, ...] = (
    Case("default", 1, 1, RuleSet(), ("heuristic", "random", "random_draws", "random")),
    Case("two_seats", 1, 1, RuleSet(seats=2), ("heuristic", "random_draws")),
    Case(
        "two_decks",
        1,
        1,
        RuleSet(seats=7, decks=2),
        ("heuristic", "random", "random", "heuristic", "random_draws", "random", "random"),
        view_every=3,
    ),
    Case(
        "stacking",
        14,
        2,
        RuleSet(stacking=True, stacking_wd4=True, uno_penalty=4),
        ("random", "heuristic", "random", "random"),
    ),
    Case(
        "seven_o",
        2,
        2,
        RuleSet(seats=3, seven_o=True),
        ("heuristic", "random", "random"),
    ),
    Case(
        "house_rules",
        6,
        1,
        RuleSet(seats=5, jump_in=True, draw_until_playable=True, first_flip="redraw"),
        ("random", "heuristic", "random", "random", "random_draws"),
        view_every=2,
    ),
)


# ---------------------------------------------------------------------------------- rendering


def _names(codes: tuple[int, ...] | list[int]) -> list[str]:
    return [cardlib.name(c) for c in codes]


def render_view(view: SeatView) -> dict[str, Any]:
    d = dataclasses.asdict(view)
    d["hand"] = _names(view.hand)
    d["top_card"] = cardlib.name(view.top_card) if view.top_card >= 0 else None
    d["active_color"] = cardlib.color_name(view.active_color) if view.active_color >= 0 else None
    d["drawn_card"] = cardlib.name(view.drawn_card) if view.drawn_card >= 0 else None
    d["card_counts"] = list(view.card_counts)
    d["uno_called"] = list(view.uno_called)
    d["legal_actions"] = list(view.legal_actions)
    return d


def render_event(event: ev.Event) -> dict[str, Any]:
    out: dict[str, Any] = {"event": ev.event_name(event)}
    values: tuple[Any, ...] = tuple(event)
    for key, value in zip(event._fields, values, strict=True):
        if key == "card":
            out[key] = cardlib.name(value)
        elif key in ("cards", "hand"):
            out[key] = _names(value)
        elif key == "hands":
            out[key] = [_names(h) for h in value]
        elif key == "color" and isinstance(event, ev.Played | ev.ColorChosen):
            out[key] = cardlib.color_name(value)
        elif isinstance(value, tuple):
            out[key] = list(value)
        else:
            out[key] = value
    return out


def render_events(events: list[ev.Event], n: int) -> dict[str, list[dict[str, Any]]]:
    out = {str(s): [render_event(e) for e in redact_all(events, s)] for s in range(n)}
    out["spectator"] = [render_event(e) for e in redact_all(events, SPECTATOR)]
    return out


# ---------------------------------------------------------------------------------- playing


def _bots(case: Case) -> list[RandomBot | HeuristicBot]:
    out: list[RandomBot | HeuristicBot] = []
    for seat, kind in enumerate(case.bots):
        seed = case.seed * 100 + seat
        if kind == "heuristic":
            out.append(HeuristicBot(seed))
        elif kind == "random":
            out.append(RandomBot(seed))
        elif kind == "random_draws":
            out.append(RandomBot(seed, voluntary_draws=True))
        else:
            raise ValueError(f"unknown bot {kind!r}")
    return out


def _pick_seat(hand: Hand, rng: random.Random) -> int:
    """The first pending seat, but now and then a late UNO call, a catch by a seat other than
    the first, the service closing the window, or a jump-in."""
    pending = hand.pending_seats()
    if len(pending) == 1:
        return pending[0]
    if hand.window >= 0:
        return SYSTEM if rng.random() < 0.05 else rng.choice(pending)
    return rng.choice(pending[1:]) if rng.random() < 0.3 else pending[0]


def build(case: Case) -> dict[str, Any]:
    """The transcript of one case, as JSON-ready data."""
    rules = case.rules
    n = rules.seats
    if len(case.bots) != n:
        raise ValueError(f"case {case.name}: {len(case.bots)} bots for {n} seats")
    hand = Hand.deal(rules, case.seed, case.dealer)
    bots = _bots(case)
    rng = random.Random(case.seed)
    views = [seat_view(hand, s) for s in range(n)]
    steps: list[dict[str, Any]] = []
    initial = {
        "views": [render_view(v) for v in views],
        "events": render_events(hand.log, n),
    }
    for i in range(MAX_ACTIONS):
        if hand.over:
            break
        seat = _pick_seat(hand, rng)
        if seat == SYSTEM:
            action = CLOSE_WINDOW
            text = "close the UNO window"
        else:
            action = bots[seat].choose(views[seat])
            text = ids.decode(action).describe()
        events = hand.apply(seat, action)
        views = [seat_view(hand, s) for s in range(n)]
        step: dict[str, Any] = {
            "turn": i + 1,
            "seat": seat,
            "action": action,
            "text": text,
            "events": render_events(events, n),
        }
        if (i + 1) % case.view_every == 0 or hand.over:
            step["views"] = [render_view(v) for v in views]
        steps.append(step)
    else:
        raise RuntimeError(f"case {case.name}: the hand did not end in {MAX_ACTIONS} actions")
    return {
        "case": case.name,
        "seed": case.seed,
        "dealer": case.dealer,
        "rules": rules.to_dict(),
        "bots": list(case.bots),
        "view_every": case.view_every,
        "winner": hand.winner,
        "actions": [list(a) for a in hand.actions],
        "initial": initial,
        "steps": steps,
    }


def dumps(transcript: dict[str, Any]) -> str:
    """Stable text: one line per top-level field and per step, so a diff points at the step."""
    lines = ["{"]
    keys = list(transcript)
    for k, key in enumerate(keys):
        comma = "," if k < len(keys) - 1 else ""
        value = transcript[key]
        if key == "steps":
            lines.append(f"{json.dumps(key)}: [")
            for j, step in enumerate(value):
                sep = "," if j < len(value) - 1 else ""
                lines.append(json.dumps(step, sort_keys=True, separators=(",", ":")) + sep)
            lines.append("]" + comma)
        else:
            text = json.dumps(value, sort_keys=True, separators=(",", ":"))
            lines.append(f"{json.dumps(key)}: {text}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def path_of(case: Case) -> Path:
    return GOLDEN_DIR / f"{case.name}.json"


def main() -> int:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        text = dumps(build(case))
        path = path_of(case)
        old = path.read_text() if path.exists() else None
        path.write_text(text)
        state = "unchanged" if old == text else ("written" if old is None else "CHANGED")
        print(f"{path.relative_to(GOLDEN_DIR.parent)}: {len(text) // 1024} KB, {state}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
