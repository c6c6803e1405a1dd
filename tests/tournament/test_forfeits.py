"""Issue 10, item 2: a bot whose seats a stand-in played is not rated on the stand-in's play.

A real tournament with a bot process that crashes every time after a few decisions: the runner
restarts it once, then gives up on it, and the fallback bot plays its seats. Every such hand is a
forfeit (the bot takes last place, the other three keep their real order), the policy is named
in every output and the bot is marked as given up in every output, including the metrics.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from prometheus_client import generate_latest

from uno_tournament.config import load
from uno_tournament.report import GIVEN_UP_MARK
from uno_tournament.runner import Runner
from uno_tournament.sharding import new_tournament_id
from uno_tournament.standings import Standings
from uno_tournament.store import Store

from .helpers import bot_entry, write_config

CRASHY = Path(__file__).with_name("crashy_bot.py")


def _crashy(name: str, after: int) -> str:
    return (
        f'[[bots]]\nname = "{name}"\n'
        f'command = ["{{python}}", "{CRASHY}", "--crash-after", "{after}", '
        '"--log-level", "warning"]\n'
    )


@pytest.fixture(scope="module")
def crashed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Runner, str]:
    tmp = tmp_path_factory.mktemp("forfeit")
    cfg_path = write_config(
        tmp,
        [bot_entry("h0"), bot_entry("h1"), bot_entry("h2"), _crashy("crashy", 25)],
        name="ff",
        extra="max_restarts = 1\n[time_control]\nreconnect_grace_ms = 300\n",
    )
    config = load(cfg_path)
    out = tmp / "out"
    tid = new_tournament_id(config.name)
    store = Store.create(out, {"tournament_id": tid, "config": config.to_dict()})
    terminal = io.StringIO()
    runner = Runner(out, store, config, tid, progress=False, stream=terminal)
    try:
        assert asyncio.run(runner.run()) == 0
    finally:
        store.close()
    return out, runner, terminal.getvalue()


def test_a_bot_given_up_on_is_rated_last_in_every_hand_a_stand_in_played(
    crashed_run: tuple[Path, Runner, str],
) -> None:
    out, runner, _ = crashed_run
    store = Store.open(out)
    try:
        cols = store.columns(["h0", "h1", "h2", "crashy"])
        assert [k for _, b, k, _ in store.incidents(["given_up"])] == ["given_up"]
        assert store.incidents(["given_up"])[0][1] == "crashy"
        st = Standings.from_columns(cols, ["h0", "h1", "h2", "crashy"], "last")
        rated = st.outcomes()
    finally:
        store.close()
    crashy = 3
    taken = cols.taken_over & (cols.bots == crashy)
    assert taken.any(axis=1).sum() >= 12  # most of its seats went to the stand-in
    assert not (cols.taken_over & (cols.bots != crashy)).any()
    # in hand-id order: every forfeited hand puts crashy strictly last, the others in real order
    order = np.argsort(np.asarray(cols.hand_ids, dtype=object), kind="stable")
    for row, h in enumerate(order):
        seat = int(np.nonzero(cols.bots[h] == crashy)[0][0])
        if not cols.taken_over[h, seat]:
            continue
        others = [s for s in range(4) if s != seat]
        assert all(rated.places[row, seat] > rated.places[row, s] for s in others)
        real = sorted(others, key=lambda s: cols.places[h, s])
        assert sorted(others, key=lambda s: rated.places[row, s]) == real
    results = json.loads((out / "results.json").read_text())
    board = {b["bot"]: b for b in results["leaderboard"]}
    assert board["crashy"]["forfeits"] == int(taken.sum())
    # a stand-in (the heuristic bot) winning hands must not lift crashy: it is rated last
    assert results["leaderboard"][-1]["bot"] == "crashy"
    # its row counts its own play only: the stand-in's wins in its seats are not its wins
    mine = (cols.bots == crashy) & ~cols.taken_over
    own_wins = int((mine & (cols.places == 1)).sum())
    assert board["crashy"]["wins"] == own_wins
    assert board["crashy"]["hands"] == int(mine.sum())
    stand_in_wins = int((taken & (cols.places == 1)).sum())
    assert stand_in_wins > 0  # the stand-in did win some of its seats, and they are not counted
    # nor in the cross-table (an examination found the stand-in's results credited there):
    # under "last" crashy is behind every bot in a hand a stand-in played its seat
    cross = results["cross_table"]
    for other in ("h0", "h1", "h2"):
        k = ["h0", "h1", "h2", "crashy"].index(other)
        shared = (cols.bots == crashy).any(axis=1) & (cols.bots == k).any(axis=1)
        mine_place = np.where(cols.bots == crashy, cols.places, 0).sum(axis=1)
        their_place = np.where(cols.bots == k, cols.places, 0).sum(axis=1)
        played = (mine & (cols.bots == crashy)).any(axis=1)
        ahead = int((shared & played & (mine_place < their_place)).sum())
        behind = int(
            (shared & ~played).sum() + (shared & played & (mine_place > their_place)).sum()
        )
        row = cross["crashy"][other]
        assert (row["ahead"], row["behind"]) == (ahead, behind), (other, row)
        col = cross[other]["crashy"]
        assert (col["ahead"], col["behind"]) == (behind, ahead), (other, col)
    assert runner.standings.policy == "last"


def test_the_policy_and_the_given_up_mark_are_in_every_output(
    crashed_run: tuple[Path, Runner, str],
) -> None:
    out, runner, terminal = crashed_run
    results = json.loads((out / "results.json").read_text())
    assert results["forfeits"]["policy"] == "last"
    assert results["forfeits"]["hands_with_a_stand_in"] > 0
    assert "crashy" in results["given_up"]
    assert {b["bot"]: b["given_up"] for b in results["leaderboard"]} == {
        "h0": False,
        "h1": False,
        "h2": False,
        "crashy": True,
    }
    md = (out / "leaderboard.md").read_text()
    assert f"crashy {GIVEN_UP_MARK}" in md and "Forfeits: last" in md and "given up on" in md
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert {r["bot"]: r["given_up"] for r in rows}["crashy"] == "True"
    assert {r["forfeit_policy"] for r in rows} == {"last"}
    html = (out / "report.html").read_text()
    assert f"crashy {GIVEN_UP_MARK}" in html and "Forfeits: last" in html
    assert f"crashy {GIVEN_UP_MARK}" in terminal and "Forfeits: last" in terminal
    assert "bot crashy: given_up" in terminal
    metrics = generate_latest(runner.metrics.registry).decode()
    t = f'tournament="{runner.tid}"'
    assert f'uno_tournament_bot_given_up{{bot="crashy",{t}}} 1.0' in metrics
    assert f'uno_tournament_bot_given_up{{bot="h0",{t}}} 0.0' in metrics
    forfeits = [ln for ln in metrics.splitlines() if ln.startswith("uno_tournament_bot_forfeits")]
    assert any('bot="crashy"' in ln and not ln.endswith(" 0.0") for ln in forfeits)
