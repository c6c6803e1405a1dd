"""The league's standings live in the browser: ``league run --web-port PORT``.

The web view of the league's own game server (:class:`uno_server.web.WebView`: the matches, and
one table live at ``/#/match/ID``), with two more routes:

==================  ==========================================================================
``GET /league``      the standings page (refreshed every 2 s from ``/api/league``)
``GET /api/league``  the standings as JSON: each version's rating and 95% interval of the last
                     refit, hands stored, state, note, and its most recent matches
==================  ==========================================================================

Every text from the league (names, notes) goes into the page through ``textContent``; the
links of a version's matches lead into the spectator view of the same web view.
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from aiohttp import web

from uno_server.web import WebView

from ..store import DB_NAME as HANDS_DB
from .ratings import server_name
from .report import interval_text, rank_ranges, reference, summarize
from .store import LeagueStore

__all__ = ["RECENT", "LeagueWebView", "serve_view_factory", "standings_json"]

RECENT = 5
"""Matches listed per version (the newest; the server keeps a finished match's events for a
while, its summary longer)."""


def _strict(data: Any) -> str:
    """JSON a browser parses: a number JSON cannot carry is an error here, not in the page."""
    return json.dumps(data, allow_nan=False)


def _num(x: float) -> float | None:
    """A number for strict JSON: NaN (not rated) and an open end (infinity, which JSON cannot
    carry and the browser's parser refuses) are null; ``interval`` says which."""
    return x if math.isfinite(x) else None


def standings_json(
    league: LeagueStore,
    name: str,
    counts: dict[str, int],
    recent: dict[str, deque[str]],
) -> dict[str, Any]:
    """The standings of the last refit, strongest first, with the hands stored per version
    (``counts``, by server name) and its recent matches (``recent``, newest first)."""
    s = summarize(league, name)
    ref = reference(s)
    versions = []
    ranges = rank_ranges(s.standings)
    for rank, (st, ranks) in enumerate(zip(s.standings, ranges, strict=True), 1):
        v = st.version
        sname = server_name(v)
        versions.append(
            {
                "rank": rank if not math.isnan(st.rating) else None,
                "ranks": ranks,
                "key": v.key,
                "bot": v.name,
                "version": v.version,
                "author": v.author,
                "language": v.language,
                "state": v.state,
                "rating": _num(st.rating),
                "low": _num(st.low),
                "high": _num(st.high),
                "interval": interval_text(st, ref),
                "hands": counts.get(sname, 0),
                "note": st.note[:300],
                "matches": list(recent.get(sname, ())),
            }
        )
    return {
        "league": name,
        "refits": len(s.refits),
        "fit_hands": s.refits[-1][2] if s.refits else 0,
        "versions": versions,
        "refused": [
            {"key": v.key, "author": v.author, "reason": v.reason[:300]} for v in s.refused
        ],
    }


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>UNO Arena league</title>
<link rel="stylesheet" href="/static/style.css">
</head>
<body>
<header><h1>League <span id="league"></span></h1>
<p><span id="summary"></span> <span id="conn"></span> <a href="/">all matches</a></p></header>
<main>
<table id="standings" class="matches">
<thead><tr><th>#</th><th>version</th><th>author</th><th>state</th><th>hands</th>
<th>rating</th><th>95% interval</th><th>note</th><th>recent matches</th></tr></thead>
<tbody></tbody>
</table>
<h2>Refused</h2>
<ul id="refused"></ul>
</main>
<script src="/league.js"></script>
</body>
</html>
"""

SCRIPT = """"use strict";
function el(tag, text, attrs) {
  const n = document.createElement(tag);
  if (text !== undefined && text !== null) n.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
  return n;
}
function signed(x) { return x === null ? "" : (x >= 0 ? "+" : "") + Math.round(x); }
async function load() {
  let data;
  try {
    const res = await fetch("/api/league");
    if (!res.ok) throw new Error(await res.text());
    data = await res.json();
    document.getElementById("conn").textContent = "";
  } catch (err) {
    document.getElementById("conn").textContent = "league unreachable: " + err.message;
    return;
  }
  document.getElementById("league").textContent = data.league;
  document.getElementById("summary").textContent =
    `${data.refits} refits, ${data.fit_hands} hands in the last`;
  const body = document.querySelector("#standings tbody");
  body.replaceChildren(...data.versions.map((v) => {
    const tr = el("tr", null, {"data-version": v.key, class: v.state});
    tr.append(el("td", v.ranks, {class: "rank"}), el("td", v.key), el("td", v.author),
      el("td", v.state, {class: "state"}), el("td", v.hands, {class: "hands"}),
      el("td", signed(v.rating), {class: "rating"}),
      el("td", v.interval, {class: "interval"}),
      el("td", v.note));
    const links = el("td", null, {class: "recent"});
    for (const m of v.matches) {
      links.append(el("a", m, {href: "/#/match/" + encodeURIComponent(m)}), " ");
    }
    tr.append(links);
    return tr;
  }));
  document.getElementById("refused").replaceChildren(
    ...data.refused.map((r) => el("li", `${r.key} (${r.author}): ${r.reason}`)));
  document.getElementById("standings").dataset.refits = data.refits;
}
load();
setInterval(load, 2000);
"""


class LeagueWebView(WebView):
    """The server's web view plus the league's standings (``state`` gives the live counts)."""

    def __init__(
        self,
        target: str,
        admin_token: str,
        league: LeagueStore,
        name: str,
        state: Callable[[], tuple[dict[str, int], dict[str, deque[str]]]],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        credentials: grpc.ChannelCredentials | None = None,
        blocking: bool = False,
    ) -> None:
        super().__init__(target, admin_token, host=host, port=port, credentials=credentials)
        self.league = league
        self.name = name
        self.state = state
        self.blocking = blocking
        """The standings are read over the network (a PostgreSQL league): in a worker thread,
        so that the event loop they share with the game server never waits for them."""

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_get("/league", self.league_page)
        app.router.add_get("/league.js", self.league_script)
        app.router.add_get("/api/league", self.league_api)
        return app

    async def league_page(self, request: web.Request) -> web.Response:
        return web.Response(
            text=PAGE, content_type="text/html", headers={"Cache-Control": "no-cache"}
        )

    async def league_script(self, request: web.Request) -> web.Response:
        return web.Response(
            text=SCRIPT,
            content_type="application/javascript",
            headers={"Cache-Control": "no-cache"},
        )

    async def league_api(self, request: web.Request) -> web.Response:
        if self.blocking:
            return web.json_response(await asyncio.to_thread(self._standings), dumps=_strict)
        return web.json_response(self._standings(), dumps=_strict)

    def _standings(self) -> dict[str, Any]:
        counts, recent = self.state()
        return standings_json(self.league, self.name, counts, recent)


def stored_counts(db: Path) -> dict[str, int]:
    """Hands per server name in a league's hand store, read-only (empty before its first
    hand, or while the store cannot be read)."""
    if not db.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute("SELECT bot, COUNT(*) FROM seats GROUP BY bot").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return {}
    return {str(b): int(n) for b, n in rows}


def pg_counts(url: str) -> Callable[[], dict[str, int]]:
    """Hands per server name in a PostgreSQL league's hand store, read at every call on one
    connection, opened again after an error (empty while the store cannot be read)."""
    import psycopg

    conn: psycopg.Connection[Any] | None = None
    lock = threading.Lock()  # requests are answered in worker threads: one at a time here

    def counts() -> dict[str, int]:
        with lock:
            return read()

    def read() -> dict[str, int]:
        nonlocal conn
        try:
            if conn is None or conn.closed:
                conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
            rows = conn.execute("SELECT bot, COUNT(*) FROM seats GROUP BY bot").fetchall()
        except psycopg.Error:
            if conn is not None:
                conn.close()
            conn = None
            return {}
        return {str(b): int(n) for b, n in rows}

    return counts


def serve_view_factory(league_dir: Path, url: str | None = None) -> Callable[..., WebView]:
    """For ``uno-arena serve --web-port P --league DIR [--league-store URL]``: a web view of
    that server with the standings of the league in DIR (or in the PostgreSQL database at URL)
    at ``/league``, read-only (the hands per version counted in its hand store at every
    request). The league plays on its own server (``league run``), so no match links are
    listed here. Raises :class:`~.store.LeagueError` for a folder or store that holds no
    league."""
    from .records import open_league

    league = open_league(league_dir, url, readonly=True)
    name = league_dir.resolve().name
    db = league_dir / "play" / HANDS_DB
    count: Callable[[], dict[str, int]] = pg_counts(url) if url else lambda: stored_counts(db)

    def state() -> tuple[dict[str, int], dict[str, deque[str]]]:
        return count(), {}

    def make(
        target: str,
        admin_token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> WebView:
        return LeagueWebView(
            target,
            admin_token,
            league,
            name,
            state,
            host=host,
            port=port,
            credentials=credentials,
            blocking=url is not None,
        )

    return make
