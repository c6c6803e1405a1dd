"""Shared helpers of the tournament tests: small configs of real bot processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PY_BOT = '["{python}", "-m", "%s", "--log-level", "warning"%s]'


def bot_entry(name: str, module: str = "uno_bot.examples.heuristic_bot", *extra: str) -> str:
    args = "".join(f', "{a}"' for a in extra)
    return f'[[bots]]\nname = "{name}"\ncommand = {PY_BOT % (module, args)}\n'


def graded(name: str, p: float) -> str:
    return bot_entry(name, "uno_tournament.bots.graded", "--randomness", str(p))


def write_config(
    folder: Path,
    bots: list[str],
    *,
    name: str = "t",
    blocks: int = 1,
    concurrency: int = 8,
    extra: str = "",
    startup_timeout_s: float = 30,
) -> Path:
    text = (
        f'[tournament]\nname = "{name}"\nseed = 7\nblocks = {blocks}\n'
        f'concurrency = {concurrency}\noutput = "{folder / "out"}"\n'
        "[rules]\nuno_window_ms = 200\n"
        f"[faults]\nstartup_timeout_s = {startup_timeout_s:g}\n" + extra + "\n" + "\n".join(bots)
    )
    path = folder / "tournament.toml"
    path.write_text(text)
    return path


def bot_stats(name: str, rating: float, se: float, low: float, high: float, **over: Any) -> Any:
    """A leaderboard row (report.BotStats) with a rating and its interval, the rest ordinary:
    10 hands, no fault; ``over`` replaces any field."""
    from uno_tournament.report import BotStats

    fields: dict[str, Any] = {
        "bot": name,
        "rating": rating,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "hands": 10,
        "wins": 1,
        "win_rate": 0.1,
        "mean_points_left": 9.0,
        "mean_points_won": 3.0,
        "timeouts": 0,
        "strikes": 0,
        "illegal_actions": 0,
        "late_answers": 0,
        "crashes": 0,
        "seats_taken_over": 0,
        "forfeits": 0,
        "given_up": False,
        "decisions": 30,
        "mean_decision_ms": 1.0,
        "p99_decision_ms": 2.0,
    }
    return BotStats(**{**fields, **over})
