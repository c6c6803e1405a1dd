"""Shared helpers of the tournament tests: small configs of real bot processes."""

from __future__ import annotations

from pathlib import Path

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
