"""Re-run a recorded hand through the engine and check its result.

A replay file holds the rule set, the hand's seed and dealer and every action (seat, action id)
in order, as the server's HandEndedEvent gave them. :func:`check` deals the hand again from the
seed (``uno_server.engine.Hand``), applies the actions one by one and compares the winner and the
points held with the recorded result; it says where the two diverge otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_server.engine.errors import EngineError, InvalidRulesError
from uno_server.engine.hand import Hand
from uno_server.engine.rules import RuleSet


class ReplayError(Exception):
    """The file is missing or not a replay."""


@dataclass
class Verdict:
    ok: bool
    message: str


def load(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError as exc:
        raise ReplayError(f"{p}: no such file") from exc
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReplayError(f"{p}: not a replay file ({exc})") from exc
    if not isinstance(data, dict):
        raise ReplayError(f"{p}: not a replay file (expected a JSON object)")
    for key in ("rules", "seed", "dealer", "actions", "result"):
        if key not in data:
            raise ReplayError(f"{p}: not a replay file ({key!r} is missing)")
    return data


def check(data: dict[str, Any]) -> Verdict:
    try:
        rules = RuleSet.from_dict(dict(data["rules"]))
    except (InvalidRulesError, TypeError) as exc:
        return Verdict(False, f"the recorded rule set is invalid: {exc}")
    seed, dealer = int(data["seed"]), int(data["dealer"])
    actions = [(int(a[0]), int(a[1])) for a in data["actions"]]
    hand = Hand.deal(rules, seed, dealer)
    for i, (seat, action_id) in enumerate(actions):
        if hand.over:
            return Verdict(
                False,
                f"diverges at action {i + 1} of {len(actions)}: the hand was already over "
                f"(seat {hand.winner} out) when seat {seat} played action {action_id}",
            )
        try:
            hand.apply(seat, action_id)
        except EngineError as exc:
            return Verdict(
                False,
                f"diverges at action {i + 1} of {len(actions)} (seat {seat}, action "
                f"{action_id}): the engine rejects it: {exc}",
            )
    result = data["result"]
    want_winner = int(result["winner"])
    want_points = [int(p) for p in result["points_held"]]
    if not hand.over:
        return Verdict(False, f"diverges: after all {len(actions)} actions the hand is not over")
    points = [hand.points_held(s) for s in range(rules.seats)]
    if hand.winner != want_winner:
        return Verdict(
            False, f"diverges: the engine's winner is seat {hand.winner}, recorded {want_winner}"
        )
    if points != want_points:
        return Verdict(
            False, f"diverges: the engine's points held are {points}, recorded {want_points}"
        )
    bots = data.get("bots") or []
    who = f" ({bots[want_winner]})" if want_winner < len(bots) else ""
    return Verdict(
        True,
        f"confirmed: {len(actions)} actions, seat {want_winner}{who} went out, "
        f"points held {points}",
    )
