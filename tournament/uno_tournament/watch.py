"""``uno-arena tournament watch DIR|--store URL``: follow a running tournament from its store.

Every few seconds it reads the hands stored since its last look (:meth:`ResultStore.new_hands`:
seat rows only, never a replay), refits the ratings with a warm start, and shows the progress,
each shard's state (from the ``shards`` table the shards keep up to date) and the leaderboard
with its 95% intervals. It reads only, so it can follow a ``--shards N`` run in its folder or
every shard of a Kubernetes Indexed Job in the shared PostgreSQL store, from any machine.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.table import Table

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


def _shard_table(shards: list[ShardStatus], now: float) -> Table:
    t = Table(title="shards", title_justify="left", box=None)
    for col in ("shard", "state", "hands", "server", "host", "last seen"):
        t.add_column(col, justify="right" if col in ("hands", "last seen") else "left")
    for s in shards:
        age = now - s.heartbeat_at
        state = s.state if s.state != "playing" or age < STALE_S else "silent"
        t.add_row(s.shard, state, f"{s.done}/{s.planned}", s.addr, s.host, f"{age:.0f} s ago")
    return t


def _board_rows(board: Table, r: Ratings, given_up: set[str]) -> None:
    """The leaderboard as the report shows it: by estimate, with the ranks the ratings allow,
    a one-sided bot's limit in place of its estimate, "-" for a bot not rated, and the mark of
    a bot given up on."""
    lo, hi = r.ci_low, r.ci_high
    order = sorted(range(len(r.bots)), key=lambda i: (-_key(float(r.elo[i])), r.bots[i]))
    names = [r.bots[i] for i in order]
    rated = {r.bots[i] for i in order if not (math.isnan(r.elo[i]) or math.isnan(lo[i]))}
    for rank, i in zip(ranks_allowed(r, names, rated), order, strict=True):
        low, high = float(lo[i]), float(hi[i])
        name = f"{r.bots[i]} {GIVEN_UP_MARK}" if r.bots[i] in given_up else r.bots[i]
        if r.bots[i] not in rated:
            board.add_row(rank, name, "-", "not rated")
            continue
        est = f"{float(r.elo[i]):+.0f}"
        if math.isinf(low) != math.isinf(high):
            est = f"≤ {high:+.0f}" if math.isinf(low) else f"≥ {low:+.0f}"
        board.add_row(rank, name, est, interval_text(low, high))


def _key(elo: float) -> float:
    return -1e18 if math.isnan(elo) else elo


def render(
    follower: Follower, planned: int, rate: float, shards: list[ShardStatus], title: str
) -> RenderableType:
    done = len(follower.seen)
    eta = f", ETA {(planned - done) / rate:.0f} s" if rate > 0 and done < planned else ""
    head = (
        f"{title}: {done}/{planned} hands ({100 * done / planned if planned else 0:.1f}%), "
        f"{rate:.1f} hands/s{eta}"
    )
    parts: list[RenderableType] = [head]
    if shards:
        parts.append(_shard_table(shards, time.time()))
    board = Table(title="leaderboard", title_justify="left", box=None)
    for col in ("#", "bot", "Elo", "95% CI"):
        board.add_column(col, justify="left" if col == "bot" else "right")
    r = None
    if len(follower.standings) >= 8:
        # the report's fit (one-sided limits for a bot the results bound one way only, ranks
        # as the ratings allow): a fit with a prior showed such a bot's prior artefact as a
        # rating, two-sided, ranked (an examination: a bot that never played read -1375, rank 4,
        # where the report gave an upper limit and ranks 1-4)
        r, _ = fit_shown(follower.standings.outcomes(), follower.names)
    if r is not None:
        _board_rows(board, r, follower.given_up())
    else:
        board.add_row("", "(ratings from 8 hands on)", "", "")
    parts.append(board)
    return Group(*parts)


def watch(
    store: ResultStore,
    *,
    interval_s: float = 5.0,
    once: bool = False,
    stream: TextIO | None = None,
) -> int:
    out = stream or sys.stdout
    config = load_config(store, store.location)
    tid = store.tournament_id()
    planned = len(config.plan(tid))
    follower = Follower(store, [b.name for b in config.bots], config.faults.forfeit)
    console = Console(file=out, width=120)
    title = f"tournament {tid} ({store.location})"
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
            console.print(render(follower, planned, rate, store.shards(), title))
            if once or n >= planned:
                if n >= planned:
                    console.print("every planned hand is stored")
                return 0
            time.sleep(interval_s)
    except KeyboardInterrupt:
        return 130
