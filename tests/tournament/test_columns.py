"""Issue 20, item 3: columns that mean what they say.

* "illegal" counts real faults only; answers that came after their request had closed are
  "late", stored in their own column (``seats.late``), and shown apart in every output and in
  the metrics. Stores written before the column existed gain it (SQLite and PostgreSQL).
* A bot's row counts the hands the bot played itself: a seat a stand-in played is a forfeit,
  never the bot's win, points or hand.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import psycopg
import pytest
from prometheus_client import generate_latest

from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.pgstore import PgStore
from uno_tournament.report import summarize, write_all
from uno_tournament.runner import Runner
from uno_tournament.store import DB_NAME, HandRecord, SeatRecord, Store

BOTS = ["a", "b", "c", "d"]


def _config(forfeit: str = "last") -> TournamentConfig:
    bots = tuple(BotSpec(n, ("x",), "/", {}, "", False) for n in BOTS)
    return TournamentConfig.from_dict(
        {
            **TournamentConfig(name="t", bots=bots).to_dict(),
            "faults": {
                **TournamentConfig(name="t", bots=bots).to_dict()["faults"],
                "forfeit": forfeit,
            },
        }
    )


def _hand(
    i: int, winner: int, *, taken: int | None = None, illegal: int = 0, late: int = 0
) -> HandRecord:
    """Hand i: seats a, b, c, d; ``winner`` goes out; seat ``taken`` was played by a stand-in;
    seat 0 (bot a) has ``illegal`` faults and ``late`` answers."""
    losers = [s for s in range(4) if s != winner]
    places = [1 if s == winner else 2 + losers.index(s) for s in range(4)]
    return HandRecord(
        hand_id=f"t/t0/b0/d{i // 4}/r{i % 4}",
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
            SeatRecord(
                s,
                b,
                places[s],
                0 if s == winner else 5 + s,
                20 if s == winner else 0,
                illegal=illegal if s == 0 else 0,
                late=late if s == 0 else 0,
                taken_over=s == taken,
                takeover_cause="strikes" if s == taken else "",
                decisions=10,
                response_ms=[5, 6],
            )
            for s, b in enumerate(BOTS)
        ],
        replay={"hand_id": f"t/t0/b0/d{i // 4}/r{i % 4}"},
    )


def test_late_answers_are_stored_apart_from_illegal_actions_and_shown_apart(
    tmp_path: Path,
) -> None:
    store = Store.create(tmp_path, {"tournament_id": "t"})
    for i in range(16):
        store.add_hand(_hand(i, winner=i % 4, illegal=1 if i == 3 else 0, late=2))
    h = store.hand_row("t/t0/b0/d0/r0")
    assert h is not None and (h.seats[0].illegal, h.seats[0].late) == (0, 2)
    cols = store.columns(BOTS)
    assert int(cols.late[:, 0].sum()) == 32 and int(cols.illegal[:, 0].sum()) == 1
    s = write_all(tmp_path, store, _config(), "t", planned=16)
    a = next(b for b in s.bots if b.bot == "a")
    assert (a.illegal_actions, a.late_answers) == (1, 32)
    data = json.loads((tmp_path / "results.json").read_text())
    row = next(b for b in data["leaderboard"] if b["bot"] == "a")
    assert (row["illegal_actions"], row["late_answers"]) == (1, 32)
    md = (tmp_path / "leaderboard.md").read_text()
    head = next(ln for ln in md.splitlines() if ln.startswith("| # |"))
    assert "| illegal | late |" in head
    line = next(ln for ln in md.splitlines() if ln.startswith("| ") and "| a |" in ln)
    cells = [c.strip() for c in line.strip("|").split("|")]
    names = [c.strip() for c in head.strip("|").split("|")]
    assert cells[names.index("illegal")] == "1" and cells[names.index("late")] == "32"
    assert "late: answers that arrived after their chance had closed" in md
    rows = list(csv.DictReader(io.StringIO((tmp_path / "leaderboard.csv").read_text())))
    assert {r["bot"]: r["late_answers"] for r in rows}["a"] == "32"
    store.close()


def test_a_sqlite_store_written_before_the_late_column_gains_it(tmp_path: Path) -> None:
    store = Store.create(tmp_path, {"tournament_id": "t"})
    store.add_hand(_hand(0, winner=1, illegal=3))
    store.close()
    conn = sqlite3.connect(tmp_path / DB_NAME)  # the schema before seats.late
    conn.execute("ALTER TABLE seats DROP COLUMN late")
    conn.commit()
    conn.close()
    ro = Store.open(tmp_path, readonly=True)  # a watcher beside an old runner: reads zeros
    assert [s.late for s in next(iter(ro.hand_rows())).seats] == [0, 0, 0, 0]
    assert int(ro.columns(BOTS).late.sum()) == 0
    assert [s.late for s in ro.new_hands(0)[0][0].seats] == [0, 0, 0, 0]
    ro.close()
    again = Store.open(tmp_path)  # a writer migrates: the column is added, old rows get 0
    assert again.add_hand(_hand(1, winner=2, late=4))
    rows = {h.hand_id: h for h in again.hand_rows()}
    assert rows["t/t0/b0/d0/r0"].seats[0].illegal == 3
    assert rows["t/t0/b0/d0/r0"].seats[0].late == 0
    assert rows["t/t0/b0/d0/r1"].seats[0].late == 4
    again.close()


def test_a_postgresql_store_written_before_the_late_column_gains_it(pg_url: str) -> None:
    pg = PgStore.connect(pg_url, create=True)
    pg.add_hand(_hand(0, winner=1, illegal=3))
    pg.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE seats DROP COLUMN late")
    again = PgStore.connect(pg_url)
    try:
        assert again.add_hand(_hand(1, winner=2, late=4))
        rows = {h.hand_id: h for h in again.hand_rows()}
        assert (rows["t/t0/b0/d0/r0"].seats[0].illegal, rows["t/t0/b0/d0/r0"].seats[0].late) == (
            3,
            0,
        )
        assert rows["t/t0/b0/d0/r1"].seats[0].late == 4
        assert int(again.columns(BOTS).late.sum()) == 4
    finally:
        again.close()


@pytest.mark.parametrize("policy", ["last", "count", "exclude"])
def test_a_bot_s_row_counts_only_the_hands_it_played_itself(tmp_path: Path, policy: str) -> None:
    """Bot a loses every hand it plays itself; a stand-in plays its seat in half the hands and
    wins every one of them. Its row must not show the stand-in's wins or points."""
    store = Store.create(tmp_path, {"tournament_id": "t"})
    for i in range(40):
        if i % 2:
            store.add_hand(_hand(i, winner=0, taken=0))  # the stand-in wins in a's seat
        else:
            store.add_hand(_hand(i, winner=1 + i % 3))  # a plays and loses
    store.add_incident("a", "given_up", "kept crashing")
    s = summarize(store, _config(policy), "t", planned=40)
    a = next(b for b in s.bots if b.bot == "a")
    assert a.hands == 20  # its own hands; the 20 a stand-in played are not its hands
    assert a.wins == 0 and a.win_rate == 0.0
    assert a.mean_points_won == 0.0
    assert a.mean_points_left == 5.0  # seat 0 holds 5 points in every hand it lost
    assert a.seats_taken_over == 20
    assert a.forfeits == (0 if policy == "count" else 20)
    assert a.given_up
    others = [b for b in s.bots if b.bot != "a"]
    assert sum(b.hands for b in others) == 3 * 40
    store.close()


def test_the_runner_counts_illegal_and_late_apart_and_only_its_own_wins(
    tmp_path: Path,
) -> None:
    store = Store.create(tmp_path, {"tournament_id": "t"})
    runner = Runner(tmp_path, store, _config(), "t", progress=False, stream=io.StringIO())
    try:
        runner._count(_hand(0, winner=0, taken=0, illegal=2, late=5))
        runner._count(_hand(1, winner=0, illegal=1))
        text = generate_latest(runner.metrics.registry).decode()
    finally:
        runner.log.close()
        store.close()

    def value(name: str, bot: str) -> float:
        for ln in text.splitlines():
            if ln.startswith(name + "{") and f'bot="{bot}"' in ln:
                return float(ln.rsplit(" ", 1)[1])
        raise AssertionError(f"{name}{{bot={bot}}} missing")

    assert value("uno_tournament_bot_illegal_actions_total", "a") == 3
    assert value("uno_tournament_bot_late_answers_total", "a") == 5
    assert value("uno_tournament_bot_wins_total", "a") == 1  # the stand-in's win is not a's
    assert value("uno_tournament_bot_hands_total", "a") == 1


def test_a_bot_that_answered_no_decision_in_time_shows_no_time_not_zero(tmp_path: Path) -> None:
    """An examination: a bot that timed out on all 308 of its decisions showed "mean ms 0.0,
    p99 0" in every report, the fastest bot of the field."""
    import dataclasses

    store = Store.create(tmp_path, {"tournament_id": "t"})
    for i in range(8):
        h = _hand(i, winner=i % 3)
        silent = dataclasses.replace(h.seats[3], timeouts=10, decisions=0, response_ms=[])
        store.add_hand(dataclasses.replace(h, seats=[*h.seats[:3], silent]))
    s = write_all(tmp_path, store, _config(), "t", planned=8)
    store.close()
    md = (tmp_path / "leaderboard.md").read_text()
    head = next(ln for ln in md.splitlines() if ln.startswith("| # |"))
    names = [c.strip() for c in head.strip("|").split("|")]
    for bot, mean, p99 in (("d", "-", "-"), ("a", "5.5", "6")):
        line = next(ln for ln in md.splitlines() if ln.startswith("| ") and f"| {bot} |" in ln)
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert (cells[names.index("mean ms")], cells[names.index("p99 ms")]) == (mean, p99)
    rows = {
        r["bot"]: r for r in csv.DictReader(io.StringIO((tmp_path / "leaderboard.csv").read_text()))
    }
    assert (rows["d"]["mean_decision_ms"], rows["d"]["p99_decision_ms"]) == ("", "")
    assert float(rows["a"]["mean_decision_ms"]) == 5.5
    data = json.loads((tmp_path / "results.json").read_text())
    d = next(b for b in data["leaderboard"] if b["bot"] == "d")
    assert d["mean_decision_ms"] is None and d["p99_decision_ms"] is None
    assert "(- where it answered none in time)" in md and s.hands == 8


def test_a_report_with_no_bot_rated_says_so_and_nothing_of_ratings_it_does_not_show(
    tmp_path: Path,
) -> None:
    """An examination cut a run to one hand: every bot read "not rated", yet the note spoke of
    upper limits and a reference bot, and the going-out table gave the shares "the ratings
    predict" (100% vs 98%) from ratings it did not show."""
    from uno_tournament.report import NONE_RATED

    store = Store.create(tmp_path, {"tournament_id": "t"})
    store.add_hand(_hand(0, winner=0))
    s = write_all(tmp_path, store, _config(), "t", planned=16)
    store.close()
    assert s.ratings is None and s.note == NONE_RATED
    md = (tmp_path / "leaderboard.md").read_text()
    assert NONE_RATED in md and "limit" not in md and "reference" not in md
    assert "% vs " not in md.split("## Going out first")[1].split("##")[0]  # no predicted share
    data = json.loads((tmp_path / "results.json").read_text())
    assert {b["interval"] for b in data["leaderboard"]} == {"not rated"}
    assert {b["ranks"] for b in data["leaderboard"]} == {"-"}  # ranks 1-4 read as a ranking
    rows = list(csv.DictReader(io.StringIO((tmp_path / "leaderboard.csv").read_text())))
    assert {r["ranks"] for r in rows} == {"-"} and {r["interval"] for r in rows} == {"not rated"}
    table = [ln for ln in md.splitlines() if ln.startswith("| ") and not ln.startswith("| # ")]
    assert all(ln.split("|")[1].strip() == "-" for ln in table[:4]), table[:4]


def test_a_bot_that_played_no_hand_itself_shows_no_share_or_points(tmp_path: Path) -> None:
    """An examination: a bot that crashed on every decision (a stand-in played all its seats)
    read "win % 0.0, pts left 0.0": 0.0 points left is the best a bot can do."""
    store = Store.create(tmp_path, {"tournament_id": "t"})
    for i in range(8):
        store.add_hand(_hand(i, winner=i % 3, taken=3))  # d: every seat a stand-in's
    write_all(tmp_path, store, _config(), "t", planned=8)
    store.close()
    md = (tmp_path / "leaderboard.md").read_text()
    head = next(ln for ln in md.splitlines() if ln.startswith("| # |"))
    names = [c.strip() for c in head.strip("|").split("|")]
    line = next(ln for ln in md.splitlines() if ln.startswith("| ") and "| d |" in ln)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert [cells[names.index(c)] for c in ("hands", "win %", "pts left", "pts won")] == [
        "0",
        "-",
        "-",
        "-",
    ]
    rows = {
        r["bot"]: r for r in csv.DictReader(io.StringIO((tmp_path / "leaderboard.csv").read_text()))
    }
    assert rows["d"]["mean_points_left"] == "" and rows["a"]["mean_points_left"] != ""
    data = json.loads((tmp_path / "results.json").read_text())
    d = next(b for b in data["leaderboard"] if b["bot"] == "d")
    assert d["win_rate"] is None and d["mean_points_left"] is None
