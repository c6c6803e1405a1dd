"""``uno-arena serve --web-port P --league DIR`` (issue 26, "Seeing it"): a standalone game
server's web view also shows a league's standings at ``/league``, read from DIR read-only, in a
real headless Chromium, as ``league run --web-port`` does (tests/web/test_league_web.py).

The league plays elsewhere (``league run``, its own server); the page must show the league's
store as it is: every row's rating and interval those of the refit the page says it shows, its
hands those stored, and a refit made while the page is open appears on it. The server never
writes the league's database.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tournament.test_league_run import RANDOM, _enter, _new_league
from uno_tournament.league.ratings import server_name
from uno_tournament.league.store import LeagueStore

from .cdp import WAIT_S, chromium, chromium_path
from .test_league_web import ROWS, _seats, _signed

if chromium_path() is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("the browser test needs Debian's chromium (.ci/run installs it)")
    pytest.skip("chromium not installed: apt-get install chromium", allow_module_level=True)

ENV = {**os.environ, "GRPC_VERBOSITY": "ERROR", "PYTHONUNBUFFERED": "1"}


def _play(league: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", "run", str(league), "--hands", "24"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=ENV,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_serve_league_needs_a_league_and_the_web_port(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"]
    env = {**ENV, "UNO_ARENA_ADMIN_TOKEN": "admin-token-0123456789"}
    res = subprocess.run(
        [*base, "--web-port", "0", "--league", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"uno-arena: --league: {tmp_path / 'none'}: no league here")
    league = _new_league(tmp_path)
    res = subprocess.run(
        [*base, "--league", str(league)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert (res.returncode, res.stderr) == (
        2,
        "uno-arena: --league: needs --web-port (the standings are a page of the web view)\n",
    )


@pytest.mark.asyncio
async def test_serve_shows_the_league_standings_read_only_in_chromium(tmp_path: Path) -> None:
    league = _new_league(tmp_path)
    _enter(league, "a", "1", "ann")
    _enter(league, "b", "1", "bob", RANDOM)
    _play(league)  # the league plays on its own server, then stops
    before = _digest(league / "league.sqlite")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = (tmp_path / "serve.txt").open("w")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"),
            *("--web-port", str(port), "--league", str(league)),
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
        env={**ENV, "UNO_ARENA_ADMIN_TOKEN": "admin-token-0123456789"},
    )
    try:
        end = time.monotonic() + WAIT_S
        while "league standings on" not in (tmp_path / "serve.txt").read_text():
            assert proc.poll() is None, (tmp_path / "serve.txt").read_text()
            assert time.monotonic() < end, "serve --league did not start"
            await asyncio.sleep(0.1)
        async with chromium() as page:
            await page.goto(f"http://127.0.0.1:{port}/league")
            store = LeagueStore.open(league)
            try:
                refits = len(store.refits())
                versions = {v.key: v for v in store.versions()}
                hist = {(rid, vid): (r, lo, hi) for rid, vid, r, lo, hi, _ in store.history()}
            finally:
                store.close()
            assert refits >= 1
            dom = await page.wait_for(
                "(() => { const d = "
                + ROWS
                + f"; return d && d.refits === {refits} ? d : null; }})()"
            )
            now = _seats(league)
            shown = {r["key"]: r for r in dom["rows"]}
            assert set(shown) == {"a@1", "b@1"}
            for key, row in shown.items():
                v = versions[key]
                r, lo, hi = hist[(refits, v.id)]
                assert row["state"] == v.state == "active"
                assert row["rating"] == _signed(r), (row, r)
                assert row["interval"] == f"[{lo:+.0f}, {hi:+.0f}]", (row, lo, hi)
                assert row["hands"] == now[server_name(v)] == 24, (row, now)
                assert row["links"] == []  # the league's matches are on its own server
            assert _digest(league / "league.sqlite") == before  # serve wrote nothing
            # the page follows the folder: a refit made while it is open appears on it
            _play(league)
            dom = await page.wait_for(
                "(() => { const d = "
                + ROWS
                + f"; return d && d.refits > {refits} ? d : null; }})()"
            )
            assert all(r["hands"] == 48 for r in dom["rows"]), dom["rows"]
            # a refit whose ratings are bound on one side only (a version that always went out
            # ahead of the other): open ends, which JSON cannot carry as numbers, show as
            # infinity; the page once failed to parse the whole response ("unreachable")
            store = LeagueStore.open(league)
            try:
                ids = {v.key: v.id for v in store.versions()}
                store.add_refit(
                    48,
                    [
                        (ids["a@1"], 790.0, 785.2, math.inf, 48),
                        (ids["b@1"], -790.0, -math.inf, -310.4, 48),
                    ],
                    "one-sided (written by the test)",
                )
                refits = len(store.refits())
            finally:
                store.close()
            dom = await page.wait_for(
                "(() => { const d = "
                + ROWS
                + f"; return d && d.refits === {refits} ? d : null; }})()"
            )
            shown = {r["key"]: r for r in dom["rows"]}
            assert shown["a@1"]["interval"] == "[+785, +inf)", shown
            assert shown["b@1"]["interval"] == "(-inf, -310]", shown
            # and the matches page of this server is still there
            await page.goto(f"http://127.0.0.1:{port}/")
            await page.wait_for("document.readyState === 'complete' ? true : null")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=WAIT_S)
        finally:
            out.close()
    assert code == 0, (tmp_path / "serve.txt").read_text()[-3000:]
    text = (tmp_path / "serve.txt").read_text()
    assert f"league standings on http://127.0.0.1:{port}/league" in text
