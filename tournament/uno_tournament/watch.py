"""``uno-arena tournament watch DIR|--store URL``: follow a running tournament from its store.

Every few seconds it reads the hands stored since its last look (:meth:`ResultStore.new_hands`:
seat rows only, never a replay), refits the ratings with a warm start, and shows the progress,
each shard's state (from the ``shards`` table the shards keep up to date) and the leaderboard
with its 95% intervals. It reads only, so it can follow a ``--shards N`` run in its folder or
every shard of a Kubernetes Indexed Job in the shared PostgreSQL store, from any machine.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from .config_stored import load_config
from .ratings import Ratings
from .report import GIVEN_UP_MARK, interval_text, ranks_allowed
from .standings import Standings, fit_shown
from .store import FOLLOW_OVERLAP, ResultStore, ShardStatus

STALE_S = 30.0
"""A shard whose last heartbeat is older than this is shown as silent."""


@dataclass
class Follower:
    """The standings of a store, kept up to date by reading only what is new."""

    store: ResultStore
    names: list[str]
    policy: str
    standings: Standings = field(init=False)
    seen: set[str] = field(default_factory=set)
    seq: int = 0

    def __post_init__(self) -> None:
        self.standings = Standings(self.names, self.policy)

    def poll(self) -> int:
        """Read the new hands; returns how many were new."""
        hands, self.seq = self.store.new_hands(self.seq, overlap=FOLLOW_OVERLAP)
        before = len(self.seen)
        for h in hands:
            self._add(h.hand_id, h.deal_id, [(s.bot, s.place, s.taken_over) for s in h.seats])
        if self.store.count() != len(self.seen):  # a commit fell out of the overlap: resync
            for h in self.store.hand_rows():
                self._add(h.hand_id, h.deal_id, [(s.bot, s.place, s.taken_over) for s in h.seats])
        return len(self.seen) - before

    def given_up(self) -> set[str]:
        """The bots the runner gave up on (marked as in the report)."""
        return {bot for _, bot, _, _ in self.store.incidents(["given_up"])}

    def _add(self, hand_id: str, deal_id: str, seats: list[tuple[str, int, bool]]) -> None:
        if hand_id not in self.seen:
            self.seen.add(hand_id)
            self.standings.add(hand_id, deal_id, seats)


def fitted_table(
    title: str,
    columns: list[tuple[str, str]],
    rows: list[list[str]],
    width: int | None,
    *,
    drop: tuple[str, ...] = (),
    shrink: str = "",
) -> Table:
    """A table of plain cells that fits ``width`` (None: any width) without wrapping a row:
    the columns named in ``drop`` go first (in that order) while it is too wide, then the
    column ``shrink`` is cut, its cells shortened with …. ``columns``: (header, justify)."""
    names = [c for c, _ in columns]
    keep = list(range(len(columns)))

    def natural(cols: list[int]) -> int:
        cells = [max([len(names[i]), *(len(r[i]) for r in rows)]) for i in cols]
        return sum(cells) + 2 * (len(cols) - 1)  # one space each side between columns

    for name in drop:
        if width is None or natural(keep) <= width:
            break
        keep.remove(names.index(name))
    t = Table(title=title, title_justify="left", box=None, pad_edge=False)
    for i in keep:
        header, justify = columns[i]
        cut = None
        if width is not None and names[i] == shrink and natural(keep) > width:
            widest = max([len(names[i]), *(len(r[i]) for r in rows)])
            cut = max(1, widest - (natural(keep) - width))
        t.add_column(header, justify=justify, no_wrap=True, overflow="ellipsis", max_width=cut)  # type: ignore[arg-type]
    for r in rows:
        t.add_row(*(r[i] for i in keep))
    return t


def _shard_table(shards: list[ShardStatus], now: float, width: int | None = None) -> Table:
    columns = [
        (col, "right" if col in ("hands", "last seen") else "left")
        for col in ("shard", "state", "hands", "server", "host", "last seen")
    ]
    rows = []
    for s in shards:
        age = now - s.heartbeat_at
        state = s.state if s.state != "playing" or age < STALE_S else "silent"
        rows.append([s.shard, state, f"{s.done}/{s.planned}", s.addr, s.host, f"{age:.0f} s ago"])
    return fitted_table("shards", columns, rows, width, drop=("host", "server"), shrink="state")


def _board_rows(r: Ratings, given_up: set[str]) -> list[list[str]]:
    """The leaderboard as the report shows it: by estimate, with the ranks the ratings allow,
    a one-sided bot's limit in place of its estimate, "-" for a bot not rated, and the mark of
    a bot given up on."""
    lo, hi = r.ci_low, r.ci_high
    order = sorted(range(len(r.bots)), key=lambda i: (-_key(float(r.elo[i])), r.bots[i]))
    names = [r.bots[i] for i in order]
    rated = {r.bots[i] for i in order if not (math.isnan(r.elo[i]) or math.isnan(lo[i]))}
    rows = []
    for rank, i in zip(ranks_allowed(r, names, rated), order, strict=True):
        low, high = float(lo[i]), float(hi[i])
        name = f"{r.bots[i]} {GIVEN_UP_MARK}" if r.bots[i] in given_up else r.bots[i]
        if r.bots[i] not in rated:
            rows.append([rank, name, "-", "not rated"])
            continue
        est = f"{float(r.elo[i]):+.0f}"
        if math.isinf(low) != math.isinf(high):
            est = f"≤ {high:+.0f}" if math.isinf(low) else f"≥ {low:+.0f}"
        rows.append([rank, name, est, interval_text(low, high)])
    return rows


def _key(elo: float) -> float:
    return -1e18 if math.isnan(elo) else elo


def short_path(location: str, width: int) -> str:
    """``location`` (a folder or file path, a database URL) in at most ``width`` characters: the
    last parts of the path after …/, e.g. ``…/run2/tournament.sqlite``; cut mid-word (ending
    in …) only when even its last part is too long."""
    if len(location) <= width:
        return location
    parts = location.split("/")
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + 1 + len(tail) + 2 > width:
            break
        tail = f"{part}/{tail}"
    out = f"…/{tail}"
    return out if len(out) <= width else out[: max(1, width - 1)] + "…"


def heading(title: str, location: str, progress: str, width: int | None) -> Text:
    """``title (location): progress`` on one line when it fits; else the location shortened
    (:func:`short_path`) and the progress on a line of its own, so no line wraps mid-word."""
    one = f"{title} ({location}): {progress}"
    if width is None or len(one) <= width:
        return Text(one)
    room = width - len(title) - 4  # " (" + "):"
    short = short_path(location, room) if room >= 8 else "…"
    where = "" if short.endswith("…") else f" ({short})"  # a cut word says nothing
    return Text(f"{title}{where}:\n{progress}", overflow="fold")


def render(
    follower: Follower,
    planned: int,
    rate: float,
    shards: list[ShardStatus],
    title: str,
    *,
    location: str = "",
    width: int | None = None,
) -> RenderableType:
    """Progress, shards and leaderboard; with ``width``, every line fits it: the location is
    shortened, columns that matter less drop and long bot names are cut with …."""
    done = len(follower.seen)
    eta = f", ETA {(planned - done) / rate:.0f} s" if rate > 0 and done < planned else ""
    progress = (
        f"{done}/{planned} hands ({100 * done / planned if planned else 0:.1f}%), "
        f"{rate:.1f} hands/s{eta}"
    )
    head: RenderableType = (
        heading(title, location, progress, width) if location else f"{title}: {progress}"
    )
    parts: list[RenderableType] = [head]
    if shards:
        parts.append(_shard_table(shards, time.time(), width))
    columns = [("#", "right"), ("bot", "left"), ("Elo", "right"), ("95% CI", "right")]
    rows = [["", "(ratings from 8 hands on)", "", ""]]
    r = None
    if len(follower.standings) >= 8:
        # the report's fit (one-sided limits for a bot the results bound one way only, ranks
        # as the ratings allow): a fit with a prior showed such a bot's prior artefact as a
        # rating, two-sided, ranked (an examination: a bot that never played read -1375, rank 4,
        # where the report gave an upper limit and ranks 1-4)
        r, _ = fit_shown(follower.standings.outcomes(), follower.names)
    if r is not None:
        rows = _board_rows(r, follower.given_up())
    board = fitted_table("leaderboard", columns, rows, width, shrink="bot")
    if width is not None and _too_narrow(board, rows, width):
        board = fitted_table("leaderboard", columns, rows, width, drop=("95% CI",), shrink="bot")
    parts.append(board)
    return Group(*parts)


def _too_narrow(board: Table, rows: list[list[str]], width: int) -> bool:
    """True when fitting cut the bot names (or the column's header) to fewer than 8
    characters: then the interval column gives way instead."""
    widest = max([len("bot"), *(len(r[1]) for r in rows)])
    cut = board.columns[1].max_width
    return cut is not None and cut < min(8, widest)


def terminal_width(stream: TextIO) -> int | None:
    """The width of the terminal ``stream`` writes to; None if it is not a terminal (a pipe or
    a file get the lines whole)."""
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


def watch(
    store: ResultStore,
    *,
    interval_s: float = 5.0,
    once: bool = False,
    stream: TextIO | None = None,
    width: int | None = None,
) -> int:
    """Follow the store until every planned hand is in (or once). ``width``: the lines' width
    (default: the terminal's, when ``stream`` is one; else lines are not cut)."""
    out = stream or sys.stdout
    config = load_config(store, store.location)
    tid = store.tournament_id()
    planned = len(config.plan(tid))
    follower = Follower(store, [b.name for b in config.bots], config.faults.forfeit)
    console = Console(file=out, width=120)
    title = f"tournament {tid}"
    last_n, last_t = 0, time.monotonic()
    rate = 0.0
    try:
        while True:
            follower.poll()
            now = time.monotonic()
            n = len(follower.seen)
            if last_n and now > last_t:
                rate = (n - last_n) / (now - last_t)
            last_n, last_t = n, now
            fit = width or terminal_width(out)  # a terminal resized meanwhile: its new width
            console.width = fit or 120
            console.print(
                render(
                    follower,
                    planned,
                    rate,
                    store.shards(),
                    title,
                    location=store.location,
                    width=fit,
                )
            )
            if once or n >= planned:
                if n >= planned:
                    console.print("every planned hand is stored")
                return 0
            time.sleep(interval_s)
    except KeyboardInterrupt:
        return 130
