"""Compare one stored hand (its ``hands`` row and ``seats`` rows) with its replay, column by column.

The replay is re-run through the engine's :class:`~uno_server.engine.match.Match` (the deal of
the recorded match seed, the recorded actions), which gives the winner, the points held and the
points each seat gained; the places follow from those. Columns the engine cannot know (time-outs,
strikes, takeovers) are compared with what the replay records of the service (``timed_out`` and
``taken_over`` events, ``stand_in_seats``, ``fallback_seats``). Every difference is a
``(column, message)`` pair; :mod:`uno_tournament.verify` prints them, one line per hand.

The table of which column is checked how is in docs/tournaments.md ("Verifying results").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from uno_server.engine.errors import EngineError, InvalidRulesError
from uno_server.engine.events import HandScored
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet

from .schedule import HandSpec
from .store import HandRecord

CAUSES = {"END_CAUSE_STRIKES": "strikes", "END_CAUSE_DISCONNECTED": "disconnected"}
"""A ``taken_over`` event's cause as the ``takeover_cause`` column spells it."""
UNAVAILABLE = "unavailable"
"""The runner's stand-in for a bot it gave up on (``fallback_seats``)."""


def places_from(winner: int, points: list[int]) -> list[int]:
    """The finishing place of each seat: the winner 1, then by points held (ties share a place).
    Derived here from the engine's numbers, independently of the runner's code."""
    out = [0] * len(points)
    out[winner] = 1
    rest = sorted((p, s) for s, p in enumerate(points) if s != winner)
    for i, (p, s) in enumerate(rest):
        out[s] = out[rest[i - 1][1]] if i and rest[i - 1][0] == p else i + 2
    return out


@dataclass
class Expected:
    """What a hand's rows must hold, by column, from its replay (None: not known)."""

    hand: dict[str, Any] = field(default_factory=dict)
    seats: list[dict[str, Any]] = field(default_factory=list)
    how: dict[str, str] = field(default_factory=dict)
    """column -> where the expected value comes from (for the messages)."""


class ReplayMismatchError(Exception):
    """The engine cannot re-run the replay (the message says where it diverges)."""


def _engine(replay: dict[str, Any]) -> tuple[int, list[int], list[int] | None]:
    """(winner, points held, points gained) as the engine computes them from the replay."""
    try:
        rules = RuleSet.from_dict(dict(replay["rules"]))
    except (InvalidRulesError, TypeError, ValueError, KeyError) as exc:
        raise ReplayMismatchError(f"the recorded rule set is invalid: {exc}") from exc
    seed, dealer = int(replay["seed"]), int(replay["dealer"])
    match_seed = replay.get("match_seed")
    m: Match | None = None
    if isinstance(match_seed, int) and dealer == 0:
        m = Match(rules, match_seed, dealer=0)
        if m.hand.seed != seed:
            raise ReplayMismatchError(f"match seed {match_seed} does not deal hand seed {seed}")
    if m is None:  # no match seed recorded: the hand alone (no scoring known)
        from uno_server.engine.hand import Hand

        hand = Hand.deal(rules, seed, dealer)
        apply = hand.apply
    else:
        hand = m.hand
        apply = m.apply
    gained: list[int] | None = None
    for i, (seat, action_id) in enumerate(replay["actions"]):
        if hand.over:
            raise ReplayMismatchError(f"the hand is over before action {i + 1}")
        try:
            events = apply(int(seat), int(action_id))
        except (EngineError, ValueError, IndexError) as exc:
            raise ReplayMismatchError(f"the engine rejects action {i + 1}: {exc}") from exc
        for e in events:
            if isinstance(e, HandScored):
                gained = list(e.gained)
    if not hand.over:
        raise ReplayMismatchError("after every recorded action the hand is not over")
    points = [hand.points_held(s) for s in range(rules.seats)]
    return int(hand.winner), points, gained


def _events(replay: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    out = []
    for e in replay.get("events") or []:
        if isinstance(e, dict) and isinstance(e.get(kind), dict):
            out.append(e[kind])
    return out


def expected(replay: dict[str, Any], spec: HandSpec | None) -> Expected:
    """Every column value the replay (re-run by the engine) and the schedule determine."""
    winner, points, gained = _engine(replay)
    n = len(points)
    ex = Expected()
    e, how = ex.hand, ex.how
    e["winner_seat"], how["hands.winner_seat"] = winner, "the engine"
    e["moves"] = sum(1 for a in replay["actions"] if int(a[0]) >= 0)
    how["hands.moves"] = "the replay's actions"
    e["hand_seed"], how["hands.hand_seed"] = int(replay["seed"]), "the replay"
    e["dealer"], how["hands.dealer"] = int(replay["dealer"]), "the replay"
    for key, col in (("match_id", "match_id"), ("hand_id", "hand_id")):
        if isinstance(replay.get(key), str):
            e[col] = replay[key]
            how[f"hands.{col}"] = "the replay"
    if isinstance(replay.get("match_seed"), int):
        e["match_seed"], how["hands.match_seed"] = replay["match_seed"], "the replay"
    sch = replay.get("schedule")
    if isinstance(sch, dict):
        t, b, d, r = (sch.get(k) for k in ("table", "block", "deal", "rotation"))
        e.update(table=t, block=b, deal=d, rotation=r, deal_id=f"t{t}/b{b}/d{d}")
        for c in ("table", "block", "deal", "rotation", "deal_id"):
            how[f"hands.{c}"] = "the replay's schedule slot"
    if spec is not None:  # the schedule itself has the last word on these
        e.update(
            hand_id=spec.hand_id,
            table=spec.table,
            block=spec.block,
            deal=spec.deal,
            rotation=spec.rotation,
            deal_id=spec.deal_id,
            match_seed=spec.seed,
        )
        for c in ("hand_id", "table", "block", "deal", "rotation", "deal_id", "match_seed"):
            how[f"hands.{c}"] = "the schedule"
    place = places_from(winner, points)
    bots = list(replay.get("bots") or [])
    if spec is not None:
        bots = list(spec.bots)
    stand_in = set(replay.get("stand_in_seats") or [])
    fallback = set(replay.get("fallback_seats") or [])
    timeouts = [0] * n
    strikes = [0] * n
    for ev in _events(replay, "timed_out"):
        s = int(ev.get("seat", 0))
        if 0 <= s < n:
            timeouts[s] += 1
            strikes[s] = max(strikes[s], int(ev.get("strikes", 0)))
    cause: dict[int, str] = {}
    for ev in _events(replay, "taken_over"):
        s = int(ev.get("seat", 0))
        cause.setdefault(s, CAUSES.get(str(ev.get("cause", "")), str(ev.get("cause", ""))))
    if gained is None:
        scored = _events(replay, "hand_scored")
        gained = [int(x) for x in scored[0].get("gained", [])] if scored else None
    for s in range(n):
        row: dict[str, Any] = {
            "seat": s,
            "place": place[s],
            "points_left": points[s],
            "timeouts": timeouts[s],
            "strikes": strikes[s],
        }
        if gained is not None and len(gained) == n:
            row["points_won"] = gained[s]
        if s < len(bots):
            row["bot"] = bots[s]
        if "stand_in_seats" in replay:
            row["taken_over"] = s in stand_in
            if s in fallback:
                row["takeover_cause"] = UNAVAILABLE
            elif s in cause:
                row["takeover_cause"] = cause[s]
            elif s not in stand_in:
                row["takeover_cause"] = ""
        ex.seats.append(row)
    how.update(
        {
            "seats.place": "the engine's winner and points",
            "seats.points_left": "the engine",
            "seats.points_won": "the engine's scoring",
            "seats.timeouts": "the replay's timed_out events",
            "seats.strikes": "the replay's timed_out events",
            "seats.bot": "the schedule" if spec is not None else "the replay",
            "seats.taken_over": "the replay's stand_in_seats",
            "seats.takeover_cause": "the replay's taken_over events and fallback_seats",
        }
    )
    return ex


HAND_COLUMN = {"table": "table_no"}
"""HandRecord attribute -> the column's name in the store."""


def compare(h: HandRecord, ex: Expected) -> list[tuple[str, str]]:
    """Every column of ``h`` that differs from ``ex``: ``(table.column, message)``."""
    out: list[tuple[str, str]] = []
    for attr, want in ex.hand.items():
        got = getattr(h, attr)
        if want is not None and got != want:
            col = f"hands.{HAND_COLUMN.get(attr, attr)}"
            out.append((col, f"stored {got!r}, {ex.how.get(col, 'the replay')} says {want!r}"))
    by_seat = {s.seat: s for s in h.seats}
    for row in ex.seats:
        seat = by_seat.get(row["seat"])
        if seat is None:
            continue  # the raw scan reports missing seat rows
        for attr, want in row.items():
            got = getattr(seat, attr)
            if attr == "taken_over":
                got = bool(got)
            if got != want:
                col = f"seats.{attr}"
                out.append(
                    (
                        col,
                        f"seat {seat.seat} ({seat.bot}) stored {got!r}, "
                        f"{ex.how.get(col, 'the replay')} says {want!r}",
                    )
                )
    for seat in h.seats:
        out.extend(_consistency(seat))
    return out


def _consistency(seat: Any) -> list[tuple[str, str]]:
    """Checks of the columns only the service knows, against each other."""
    out = []
    for attr in ("decisions", "illegal", "strikes", "timeouts"):
        v = getattr(seat, attr)
        if not isinstance(v, int) or v < 0:
            out.append((f"seats.{attr}", f"seat {seat.seat} ({seat.bot}) stored {v!r}"))
    n_ms = len(seat.response_ms)
    if isinstance(seat.decisions, int) and n_ms > seat.decisions:
        out.append(
            (
                "seats.response_ms",
                f"seat {seat.seat} ({seat.bot}) has {n_ms} decision times for "
                f"{seat.decisions} decisions",
            )
        )
    elif isinstance(seat.decisions, int) and n_ms < min(seat.decisions, RESPONSE_MS_CAP):
        out.append(
            (
                "seats.decisions",
                f"seat {seat.seat} ({seat.bot}) stored {seat.decisions} decisions but "
                f"{n_ms} decision times",
            )
        )
    return out


RESPONSE_MS_CAP = 10_000
"""The service keeps at most this many decision times per seat and match."""
