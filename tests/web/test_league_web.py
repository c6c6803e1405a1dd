"""``league run --web-port`` (issue 26, "Seeing it"): the league's standings live in a real
headless Chromium, with links into the spectator view of each version's recent matches.

The page polls ``/api/league``; every row it shows must be the league's store at the refit the
page says it shows (rating and interval), with hands between that refit's and what the store
holds now (hands only grow: causality, not timing); a link of a version's recent matches opens
the spectator view of a match that version played.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tournament.test_league_run import RANDOM, _enter, _new_league
from uno_tournament.league.ratings import server_name
from uno_tournament.league.report import Standing, interval_text, rank_ranges
from uno_tournament.league.store import LeagueStore
from uno_tournament.rating_bounds import reference_of

from .cdp import WAIT_S, chromium, chromium_path

pytestmark = pytest.mark.asyncio

if chromium_path() is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("the browser test needs Debian's chromium (.ci/run installs it)")
    pytest.skip("chromium not installed: apt-get install chromium", allow_module_level=True)

ROWS = """(() => {
  const t = document.getElementById("standings");
  if (!t || !t.dataset.refits) return null;
  return {
    refits: Number(t.dataset.refits),
    rows: [...t.querySelectorAll("tbody tr")].map((tr) => ({
      key: tr.dataset.version,
      rank: tr.querySelector(".rank").textContent,
      state: tr.querySelector(".state").textContent,
      hands: Number(tr.querySelector(".hands").textContent),
      rating: tr.querySelector(".rating").textContent,
      interval: tr.querySelector(".interval").textContent,
      text: tr.textContent,
      links: [...tr.querySelectorAll(".recent a")].map((a) => a.getAttribute("href")),
    })),
  };
})()"""


def _signed(x: float) -> str:
    """As the page writes it (JavaScript's Math.round: halves go up)."""
    n = math.floor(x + 0.5)
    return f"+{n}" if x >= 0 else f"{n}"


def _seats(league: Path) -> dict[str, int]:
    conn = sqlite3.connect(league / "play" / "tournament.sqlite", timeout=10)
    try:
        return {
            str(b): int(n) for b, n in conn.execute("SELECT bot, COUNT(*) FROM seats GROUP BY bot")
        }
    finally:
        conn.close()


def _refits(league: Path) -> int:
    store = LeagueStore.open(league)
    try:
        return len(store.refits())
    finally:
        store.close()


async def _until(proc: subprocess.Popen[str], what: str, cond: object) -> None:
    end = time.monotonic() + WAIT_S
    while not cond():  # type: ignore[operator]
        assert proc.poll() is None, f"league run exited ({proc.returncode}) before {what}"
        assert time.monotonic() < end, f"no {what} within {WAIT_S:g} s"
        await asyncio.sleep(0.1)


async def test_standings_live_in_chromium_with_links_into_the_spectator_view(
    tmp_path: Path,
) -> None:
    league = _new_league(tmp_path)
    _enter(league, "a", "0", "ann")
    _enter(league, "a", "1", "ann")  # a@0 retired, replaced before it played
    _enter(league, "b", "1", "bob", RANDOM)
    _enter(league, "c", "1", "cat", RANDOM)  # b's equal: their ranks stay a range (2-3)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = (tmp_path / "run.txt").open("w")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "uno_server.cli", "league", "run", str(league)),
            "--web-port",
            str(port),
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR", "PYTHONUNBUFFERED": "1"},
    )
    try:
        await _until(proc, "a second refit", lambda: _refits(league) >= 2)
        async with chromium() as page:
            await page.goto(f"http://127.0.0.1:{port}/league")
            want = (
                "(() => { const d = " + ROWS + "; return d && d.refits >= 2 && d.rows.length === 4 "
            )
            want += "&& d.rows.filter((r) => r.links.length).length === 3 ? d : null; })()"
            dom = await page.wait_for(want)
            now = _seats(league)
            store = LeagueStore.open(league)
            try:
                versions = {v.key: v for v in store.versions()}
                hist = {(rid, vid): (r, lo, hi, n) for rid, vid, r, lo, hi, n in store.history()}
            finally:
                store.close()
            shown = {r["key"]: r for r in dom["rows"]}
            at_refit = [
                (k, *hist[(dom["refits"], versions[k].id)][1:3])
                for k in shown
                if (dom["refits"], versions[k].id) in hist
            ]
            assert set(shown) == {"a@0", "a@1", "b@1", "c@1"}
            for key, row in shown.items():
                v = versions[key]
                assert row["state"] == v.state, row
                at = hist.get((dom["refits"], v.id))
                if at is None:  # a@0: never played, never rated
                    assert key == "a@0" and row["rating"] == row["interval"] == "", row
                    assert row["hands"] == 0 and "replaced by a@1" in row["text"], row
                    continue
                r, lo, hi, n = at
                assert row["rating"] == _signed(r), (row, r)
                text = interval_text(Standing(v, r, lo, hi), reference_of(at_refit))
                assert row["interval"] == text and text.startswith("["), (row, lo, hi)
                assert n <= row["hands"] <= now[server_name(v)], (row, n, now)
            # ranked strongest first, as the refit has them
            rated = [r["key"] for r in dom["rows"] if r["rating"]]
            order = sorted(rated, key=lambda k: -hist[(dom["refits"], versions[k].id)][0])
            assert rated == order
            # each rank the range the intervals allow (1-2 while two overlap), none if not rated
            standing = [
                Standing(versions[k], *hist[(dom["refits"], versions[k].id)][:3]) for k in rated
            ]
            ranks = {r["key"]: r["rank"] for r in dom["rows"]}
            assert [ranks[k] for k in rated] == rank_ranges(standing), (ranks, standing)
            assert all(ranks[k] == "" for k in shown if k not in rated), ranks
            # two equal random bots: their intervals overlap, so a range shows (the ranges
            # themselves may differ: b@1 may overlap a@1 while c@1 does not)
            assert "-" in ranks["b@1"] or "-" in ranks["c@1"], ranks

            # a link of a@1's recent matches opens the spectator view of a match a@1 played
            link = shown["a@1"]["links"][0]
            assert link.startswith("/#/match/")
            await page.evaluate(
                "document.querySelector('tr[data-version=\"a@1\"] .recent a').click()"
            )
            table = await page.wait_for(
                "(() => { const t = document.getElementById('table'); "
                "return t && t.dataset.seq ? document.body.innerText : null; })()"
            )
            assert server_name(versions["a@1"]) in table, table[:500]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=WAIT_S)
        finally:
            out.close()
    assert code == 130, (tmp_path / "run.txt").read_text()[-3000:]
