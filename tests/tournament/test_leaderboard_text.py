"""The terminal leaderboard (``report.print_leaderboard``): a bot's name and its interval are
printed whole, however long, into a file or a pipe, and every counter's header stays readable."""

from __future__ import annotations

import io
from pathlib import Path

from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.report import _COLS, print_leaderboard, summarize
from uno_tournament.store import HandRecord, SeatRecord, Store

NAMES = [
    "a-bot-with-a-rather-long-name-v12",
    "heuristic-baseline-from-last-year",
    "c",
    "d",
]


def _hand(i: int) -> HandRecord:
    winner = i % 4
    losers = [s for s in range(4) if s != winner]
    places = [1 if s == winner else 2 + losers.index(s) for s in range(4)]
    hid = f"t/t0/b0/d{i // 4}/r{i % 4}"
    return HandRecord(
        hand_id=hid,
        table=0,
        block=0,
        deal=i // 4,
        rotation=i % 4,
        deal_id=f"t/t0/b0/d{i // 4}",
        match_seed=i,
        hand_seed=i,
        dealer=0,
        match_id=f"m{i}",
        winner_seat=winner,
        moves=30,
        duration_s=0.1,
        seats=[
            SeatRecord(s, b, places[s], 0 if s == winner else 5 + s, 20 if s == winner else 0)
            for s, b in enumerate(NAMES)
        ],
        replay={"hand_id": hid},
    )


def test_names_and_intervals_are_printed_whole_and_headers_unclipped(tmp_path: Path) -> None:
    store = Store.create(tmp_path, {"tournament_id": "t"})
    for i in range(8):  # few hands: wide intervals, the longest cells this table can have
        store.add_hand(_hand(i))
    bots = tuple(BotSpec(n, ("x",), "/", {}, "", False) for n in NAMES)
    s = summarize(store, TournamentConfig(name="t", bots=bots), "t", planned=8)
    out = io.StringIO()
    print_leaderboard(s, out)
    text = out.getvalue()
    assert "…" not in text, text  # nothing cut short: no name, interval or header
    lines = text.splitlines()
    for b in s.bots:
        row = next(ln for ln in lines if f" {b.bot} " in ln)  # the name, whole, on one line
        assert f"[{b.ci_low:+.0f}, {b.ci_high:+.0f}]" in row
    header = next(ln for ln in lines if " bot " in ln and " Elo " in ln)
    for col in _COLS:
        assert col in header, col  # every header on the header's one line
    store.close()
