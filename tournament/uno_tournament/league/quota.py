"""Per-author limits of a league: the ``[league]`` section of its settings.

A league is open to strangers, and one author with a script could fill it: a hundred bot names
would take a seat at almost every table (matchmaking seats the fewest-played first, and one
author's bots are never together, so each of them sits with the others' bots), and a
submission a minute would keep the gate, which judges one submission at a time, busy for
everyone. Kaggle caps both (submissions a day, and the ones in its ranking); so does a league:

- ``max_bots_per_author``: the bot names of one author in the ladder at once, remote bots
  (tokens) included. A new version of one of them replaces it, so it is always taken;
- ``max_submissions_per_day``: the submissions of one author judged in the last 24 hours,
  accepted or refused (a refused one cost the gate as much).

A refused submission is one line and exit status 2, and nothing is recorded (as for a name of
another author). The author is the manifest's ``author``, which the submitter writes: the limits
hold an honest author to the league's share, and an organiser who takes submissions from
people they cannot tell apart puts an identity check in front of ``league submit``.

A league made before these limits has no ``[league]`` section and keeps no limit.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ..config_values import _int, _table
from .store import LeagueError

__all__ = ["DAY_S", "DEFAULTS", "LIMITS", "check_author", "league_section"]

DEFAULTS: dict[str, int] = {"max_bots_per_author": 4, "max_submissions_per_day": 20}
"""The limits of a league whose ``--config`` file has no ``[league]`` section."""

LIMITS: dict[str, tuple[int, int]] = {
    "max_bots_per_author": (1, 1_000),
    "max_submissions_per_day": (1, 10_000),
}
"""Each setting's allowed range (inclusive)."""

DAY_S = 86_400.0


def league_section(given: Any) -> dict[str, int]:
    """The ``[league]`` section of a league's ``--config`` file, validated with the config's
    own checks (each bad field named with its rule), with the defaults for what it leaves out.
    Raises :class:`~uno_tournament.config_values.ConfigError`."""
    if given is None:
        return dict(DEFAULTS)
    out = dict(DEFAULTS)
    for key, value in _table("league", given, set(LIMITS)).items():
        out[key] = _int(f"league.{key}", value, *LIMITS[key])
    return out


def check_author(
    store: Any, author: str, name: str, settings: dict[str, Any], now: float | None = None
) -> None:
    """Refuse (``LeagueError``, nothing recorded) a submission of ``name`` by ``author`` that
    the league's per-author limits do not take. ``store`` is the league's records (SQLite or
    PostgreSQL); ``now`` is the time in seconds since the epoch."""
    limits = settings.get("league")
    if not isinstance(limits, dict):  # a league made before the limits
        return
    now = time.time() if now is None else now
    # one author whatever the case of the letters: "Alice" was a second author beside "alice"
    folded = author.casefold()
    mine = [v for v in store.versions() if v.author.casefold() == folded]
    per_day = int(limits.get("max_submissions_per_day", DEFAULTS["max_submissions_per_day"]))
    recent = sorted(v.submitted_at for v in mine if now - v.submitted_at < DAY_S)
    if len(recent) >= per_day:
        # the oldest of the last day's verdicts leaves the window first
        free = recent[len(recent) - per_day] + DAY_S
        # the minute shown is the first one wholly after it (rounded down, it was up to 59 s
        # early, and a submission at the time said was refused again)
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(math.ceil(free / 60) * 60))
        raise LeagueError(
            f"{author}: {len(recent)} submissions judged in the last 24 hours, the most this "
            f"league takes (league.max_submissions_per_day = {per_day}); submit again from {when}"
        )
    per_author = int(limits.get("max_bots_per_author", DEFAULTS["max_bots_per_author"]))
    bots = {v.name for v in mine if v.state == "active"}
    bots |= {n for n, a in store.token_names() if a.casefold() == folded}
    if name not in bots and len(bots) >= per_author:
        shown = ", ".join(sorted(bots)[:8]) + (", ..." if len(bots) > 8 else "")
        raise LeagueError(
            f"{author}: {len(bots)} bots in the ladder already ({shown}), the most this league "
            f"takes (league.max_bots_per_author = {per_author}); a new version of one of them "
            "replaces it"
        )
