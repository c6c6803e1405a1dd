"""A league in PostgreSQL (issue 26: ``--store postgresql://...``), on a real server
(tests/tournament/pg.py): the records behave as ``league.sqlite``'s, every subcommand takes the
URL, a bad URL is one line, two writers take turns, and a league run's hands go to the database:
kill -9 and resume store every hand once, and a second run is refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from uno_tournament.league.cli import settings_from
from uno_tournament.league.pgleague import PgLeagueStore
from uno_tournament.league.records import create_league, open_league
from uno_tournament.league.store import LeagueStore

from .pg import TempPostgres

SDK = ["--addr", "{addr}", "--name", "{name}"]
RUN = ["{python}", "-m", "uno_bot.examples.heuristic_bot", "--log-level", "warning", *SDK]
RANDOM = ["{python}", "-m", "uno_bot.examples.random_bot", "--log-level", "warning", *SDK]
ENV = {**os.environ, "GRPC_VERBOSITY": "ERROR"}
EXAMPLES = Path(__file__).parents[2] / "tournament" / "uno_tournament" / "league" / "examples"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "uno_server.cli", "league", *args]


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _cli(*args), capture_output=True, text=True, timeout=timeout, check=False, env=ENV
    )


def _history(store: LeagueStore) -> dict[str, Any]:
    """Everything the league's records hold, without times and ids' storage types."""
    return {
        "settings": store.settings(),
        "versions": [
            (v.id, v.key, v.author, v.language, v.state, v.reason, v.gate) for v in store.versions()
        ],
        "owner": [store.owner(n) for n in ("a", "b", "r", "nobody")],
        "manifest": store.manifest(1),
        "refits": [(r, h, n) for r, _, h, n in store.refits()],
        "history": store.history(),
        "replacements": [(o, n, v, t) for o, n, _, v, t in store.replacements()],
        "tokens": store.tokens(),
        "token_names": store.token_names(),
    }


def _exercise(store: LeagueStore) -> list[Any]:
    """The same changes, in the same order, as league submit, run and token do them."""
    out: list[Any] = []
    for name, ver, author, state in (
        ("a", "1", "ann", "active"),
        ("b", "1", "bob", "refused"),
        ("a", "2", "ann", "active"),
        ("b", "2", "bob", "active"),
    ):
        out.append(
            store.record(
                name=name,
                version=ver,
                author=author,
                language="python",
                folder=f"/bots/{name}/{ver}",
                manifest={"run": RUN, "v": ver},
                state=state,
                reason="" if state == "active" else "gate: 1 illegal action",
                gate={"hands": 24},
            )
        )
    out.append(store.add_refit(48, [(2, 10.0, -5.0, 25.0, 24), (3, 20.0, 1.0, 39.0, 48)], "ml"))
    out.append(store.add_refit(96, [(1, -3.5, -9.0, 2.0, 24), (3, 7.0, 0.5, 13.5, 72)]))
    store.set_verdict(1, "better", {"llr": 3.1})
    store.give_up(4, "crashed 3 times")
    store.add_token("r", "rae", "x" * 48)
    out.append(store.revoke_token("r"))
    return out


def test_pg_records_are_the_sqlite_records(tmp_path: Path, pg_url: str) -> None:
    settings = settings_from(None)
    lite = create_league(tmp_path / "lite", settings)
    pg = create_league(tmp_path / "pg", settings, pg_url)
    try:
        assert isinstance(pg, PgLeagueStore) and not isinstance(lite, PgLeagueStore)
        assert _exercise(pg) == _exercise(lite) == [[], [], ["a@1"], [], 1, 2, []]
        got = _history(pg)
        assert got == _history(lite)
        assert [v[4] for v in got["versions"]] == ["retired", "refused", "active", "retired"]
        assert got["replacements"] == [(1, 3, "better", {"llr": 3.1})]
        assert got["history"][0] == (1, 2, 10.0, -5.0, 25.0, 24)
        with pytest.raises(Exception, match="no token of that name"):
            pg.revoke_token("r")  # the failed change rolled back; the store goes on
        assert _history(pg) == got
    finally:
        pg.close()
        lite.close()
    # the folder of a PostgreSQL league holds no records, and says where they are
    assert not (tmp_path / "pg" / "league.sqlite").exists()
    again = open_league(tmp_path / "pg", pg_url)
    try:
        assert _history(again) == got
    finally:
        again.close()


def test_a_write_waits_for_the_one_in_progress(tmp_path: Path, pg_url: str) -> None:
    """Two writers take turns, as SQLite's BEGIN IMMEDIATE makes them: a second submission of a
    bot waits for the first to commit, so it retires it (never two active versions)."""
    first = create_league(tmp_path / "lg", settings_from(None), pg_url)
    second = open_league(tmp_path / "lg", pg_url)
    order: list[str] = []
    held = threading.Event()
    release = threading.Event()

    def slow_submission() -> None:
        with first._tx():
            first._x(
                "INSERT INTO versions (name, version, author, language, folder, manifest, "
                "submitted_at, state) VALUES ('a', '1', 'ann', 'go', '', '{}', 0, 'active')"
            )
            held.set()
            release.wait(30)
            order.append("first committed")

    t = threading.Thread(target=slow_submission)
    t.start()
    try:
        assert held.wait(30)

        def late() -> None:
            time.sleep(1.0)
            order.append("first released")
            release.set()

        threading.Thread(target=late).start()
        retired = second.record(
            name="a",
            version="2",
            author="ann",
            language="go",
            folder="",
            manifest={},
            state="active",
        )
        order.append("second recorded")
    finally:
        release.set()
        t.join(30)
    assert order == ["first released", "first committed", "second recorded"]
    assert retired == ["a@1"]
    assert [(v.key, v.state) for v in second.versions()] == [("a@1", "retired"), ("a@2", "active")]
    first.close()
    second.close()


def test_bad_stores_are_one_line_and_exit_2(
    tmp_path: Path, pg_url: str, postgres: TempPostgres
) -> None:
    lg = str(tmp_path / "lg")
    db = pg_url.rsplit("/", 1)[1]
    cases = [
        (("status", lg, "--store", "mysql://x:wrong-password@h/db"), "is no PostgreSQL URL"),
        (
            ("status", lg, "--store", "postgresql://u:pw@h/db?nonsense=1"),
            "not a valid PostgreSQL URL",
        ),
        (
            ("init", lg, "--store", postgres.url(db, password="wrong-password")),
            "PostgreSQL refused the password for user uno",
        ),
        (("status", lg, "--store", postgres.url("nodb")), "database nodb does not exist"),
        (("submit", lg, str(EXAMPLES / "heuristic"), "--store", pg_url), "no league in this"),
        (("token", "add", lg, "x", "--author", "a", "--store", pg_url), "no league in this"),
        (("run", lg, "--store", pg_url), "no league in this database"),
        (("run", lg, "--shard", "1/2"), "--shard: shards share a PostgreSQL store; add --store"),
        (
            ("run", lg, "--store", pg_url, "--shard", "0/2", "--until", "settled"),
            "--until settled: not with --shard I/N for N > 1",
        ),
    ]
    with FreePort() as port:
        cases.append((("report", lg, "--store", postgres.url(db, port=port)), "connection refused"))
        for args, want in cases:
            res = _run(*args, timeout=60)
            lines = res.stderr.strip().splitlines()
            assert res.returncode == 2 and len(lines) == 1, (args, res.stdout, res.stderr)
            assert want in lines[0] and lines[0].startswith("uno-arena: "), (want, lines)
            assert "wrong-password" not in lines[0] and "uno-test-password" not in lines[0]
            assert res.stdout == ""
    for shard, why in (("2/2", "the index must be 0-1"), ("1", "give I/N")):
        res = _run("run", lg, "--store", pg_url, "--shard", shard)
        assert res.returncode == 2 and f"argument --shard: {why}" in res.stderr, res.stderr
    res = _run("init", lg, "--store", pg_url)
    assert res.returncode == 0 and "uno-test-password" not in res.stdout, res.stdout
    assert res.stdout.startswith(
        f"league ready in {pg_url.replace('uno-test-password', '***')} (local files in {lg})"
    )
    res = _run("init", str(tmp_path / "other"), "--store", pg_url)
    assert res.returncode == 2 and "already holds a league" in res.stderr, res.stderr
    other_db = postgres.new_database()
    res = _run("init", lg, "--store", postgres.url(other_db))  # the folder is the first one's
    postgres.drop_database(other_db)
    assert res.returncode == 2 and res.stderr.strip() == (
        f"uno-arena: {lg} already holds the local files of the league in "
        f"{pg_url.replace('uno-test-password', '***')}; give the new league another folder"
    )
    res = subprocess.run(  # the URL from the environment, out of the process list
        _cli("token", "add", lg, "r", "--author", "rae"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**ENV, "UNO_ARENA_LEAGUE_STORE": pg_url},
    )
    assert res.returncode == 0 and len(res.stdout.strip()) == 48, res.stderr
    store = open_league(Path(lg), pg_url)
    try:
        assert store.token_names() == [("r", "rae")]
    finally:
        store.close()
    res = _run("status", lg)  # the folder alone: where its records are, and what to add
    assert res.returncode == 2 and res.stderr.strip() == (
        f"uno-arena: {lg}: this league's records are in the PostgreSQL store "
        f"{pg_url.replace('uno-test-password', '***')}; add --store URL (with its password) to "
        "the command"
    )


class FreePort:
    """A port of 127.0.0.1 that nothing listens on, for as long as the block lasts."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))  # bound, not listening: a connection is refused
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


# ---------------------------------------------------------------------- league run --store


def _enter(
    league: Path, url: str, name: str, author: str, run: list[str] = RUN, version: str = "1"
) -> None:
    folder = league / "bots" / name / version
    folder.mkdir(parents=True, exist_ok=True)
    store = open_league(league, url)
    try:
        store.record(
            name=name,
            version=version,
            author=author,
            language="python",
            folder=str(folder.resolve()),
            manifest={"run": run},
            state="active",
        )
    finally:
        store.close()


def _stored(url: str) -> list[tuple[str, tuple[str, ...]]]:
    """(hand id, bots by seat) of every hand in the league's database."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('seats') IS NOT NULL").fetchone() != (True,):
            return []
        out: dict[str, list[str]] = {}
        for hid, bot in conn.execute("SELECT hand_id, bot FROM seats ORDER BY hand_id, seat"):
            out.setdefault(hid, []).append(bot)
    return [(h, tuple(b)) for h, b in out.items()]


def _count(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('hands') IS NOT NULL").fetchone() != (True,):
            return 0
        return sum(int(n) for (n,) in conn.execute("SELECT COUNT(*) FROM hands"))


def test_pg_league_end_to_end_kill_9_resume_and_one_run(tmp_path: Path, pg_url: str) -> None:
    """init, submit (built and gated for real), run with its hands in PostgreSQL, a second run
    refused, kill -9 at a stored-hand count the test saw, resume: every hand once; then status
    and report read it all from the database."""
    lg = tmp_path / "lg"
    res = _run("init", str(lg), "--store", pg_url)
    assert res.returncode == 0, res.stderr
    res = _run("submit", str(lg), str(EXAMPLES / "heuristic"), "--store", pg_url, timeout=600)
    assert res.returncode == 0 and "accepted" in res.stdout, res.stdout + res.stderr
    for name, author in (("b", "bob"), ("c", "cat")):
        _enter(lg, pg_url, name, author, RANDOM)
    proc = subprocess.Popen(
        _cli("run", str(lg), "--store", pg_url, "--no-house-bots"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=ENV,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("waiting:"):  # three authors: no table yet
                break
        second = _run("run", str(lg), "--store", pg_url, timeout=120)
        assert second.returncode == 2 and second.stderr.strip().endswith(
            "another `league run` plays this league; stop it (Ctrl-C) first"
        ), second.stderr
        assert "uno-test-password" not in second.stderr
        _enter(lg, pg_url, "d", "dan", RANDOM)  # while it runs: no restart
        deadline = time.monotonic() + 180
        while _count(pg_url) < 5:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "no 5 stored hands within 180 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGSTOP)  # the only writer: the count holds
        before = _stored(pg_url)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    assert 5 <= len(before) < 24, len(before)
    assert not (lg / "play" / "tournament.sqlite").exists()  # the hands are in PostgreSQL

    # a new version while the league is down: block 0's plan still seats b@1, retired now
    _enter(lg, pg_url, "b", "bob", RANDOM, version="2")
    res = _run("run", str(lg), "--store", pg_url, "--hands", "24", "--no-house-bots")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "resuming at block 0" in res.stdout, res.stdout  # its plan is finished first
    assert "b@2 (bob) enters the ladder" in res.stdout and "b@1 (bob) enters" not in res.stdout
    after = _stored(pg_url)
    ids = [h for h, _ in after]
    assert len(ids) == len(set(ids)) == len(before) + 24  # every hand once, none lost
    assert set(before) <= set(after)  # the stored ones untouched

    store = open_league(lg, pg_url)
    try:
        refits = store.refits()
        history = store.history()
        names = {v.id: v.key for v in store.versions()}
    finally:
        store.close()
    assert refits and refits[-1][2] == len(after)  # the last refit has every hand
    last = {names[vid] for r, vid, *_ in history if r == refits[-1][0]}
    assert last == {"example-heuristic@1.0", "b@1", "b@2", "c@1", "d@1"}  # each one rated
    res = _run("status", str(lg), "--store", pg_url)
    assert res.returncode == 0, res.stderr
    assert f"{len(after)} hands, {len(refits)} refits" in res.stdout
    out = tmp_path / "report"
    res = _run("report", str(lg), "--store", pg_url, "--out", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads((out / "league.json").read_text())
    assert data["hands"] == len(after) and len(data["refits"]) == len(refits)

    # a standalone server shows the PostgreSQL league's standings read-only, hands counted
    # in its database
    per_bot: dict[str, int] = {}
    for _, bots in after:
        for b in bots:
            per_bot[b] = per_bot.get(b, 0) + 1
    _serve_shows(lg, pg_url, per_bot)


def _serve_shows(lg: Path, url: str, per_bot: dict[str, int]) -> None:
    import urllib.request

    bad = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "serve", "--port", "0", "--admin-token",
         "admin-token-123", "--league-store", url],
        capture_output=True, text=True, timeout=60, check=False, env=ENV,
    )  # fmt: skip
    assert bad.returncode == 2 and "--league-store: needs --league DIR" in bad.stderr, bad.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "serve", "--port", "0", "--admin-token",
         "admin-token-123", "--web-port", "0", "--league", str(lg), "--league-store", url],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
    )  # fmt: skip
    lines = Lines(proc)
    try:
        line = lines.wait_for("league standings on http://", timeout=120)
        page = line.split("league standings on ")[1].strip()
        api = page.replace("/league", "/api/league")
        with urllib.request.urlopen(api, timeout=30) as r:
            got = json.loads(r.read())
        shown = {v["key"]: v["hands"] for v in got["versions"]}
        assert shown["example-heuristic@1.0"] > 0
        total = sum(shown.values())
        assert total == sum(n for b, n in per_bot.items() if not b.startswith("house-")), (
            shown,
            per_bot,
        )
    finally:
        proc.terminate()
        proc.wait(30)


class Lines:
    """A process's output lines, read by a thread of their own (the test polls them)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, after: int = 0, timeout: float = 180) -> str:
        deadline = time.monotonic() + timeout
        while True:
            for line in self.lines[after:]:
                if text in line:
                    return line
            if self.proc.poll() is not None and not self.thread.is_alive():
                raise AssertionError(f"exited before {text!r}:\n" + "\n".join(self.lines))
            assert time.monotonic() < deadline, f"no {text!r} in:\n" + "\n".join(self.lines)
            time.sleep(0.05)

    def text(self) -> str:
        self.thread.join(30)
        return "\n".join(self.lines)


def _per_table(url: str) -> list[tuple[int, int, int]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT block, table_no, COUNT(*) FROM hands GROUP BY block, table_no ORDER BY 1, 2"
        ).fetchall()
    return [(int(b), int(t), int(n)) for b, t, n in rows]


def _hashes(url: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return dict(conn.execute("SELECT hand_id, content_hash FROM hands").fetchall())


def test_two_shards_share_the_blocks_wait_for_each_other_and_survive_kill_9(
    tmp_path: Path, pg_url: str
) -> None:
    """--shard 0/2 alone plans block 0, plays its table and waits, naming shard 1 as not
    running; shard 1 joins and is killed with kill -9 amid its table; shard 0 names it again
    with the hands it has stored; shard 1 started again plays only the rest of its table, and
    both play block 1: every hand once, the stored ones untouched."""
    lg = tmp_path / "lg"
    assert _run("init", str(lg), "--store", pg_url).returncode == 0
    for i in range(8):  # two tables of four authors each
        _enter(lg, pg_url, f"v{i}", f"author{i}", RANDOM)
    args = ["--tables", "2", "--hands", "96", "--no-house-bots", "--concurrency", "4"]

    def shard(i: int) -> Lines:
        return Lines(
            subprocess.Popen(
                _cli("run", str(lg), "--store", pg_url, "--shard", f"{i}/2", *args),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=ENV,
            )
        )

    procs: list[Lines] = []
    try:
        first = shard(0)
        procs.append(first)
        line = first.wait_for("waits for shard 1/2")
        assert "it is not running (0 of its 24 hands stored)" in line, line
        assert f"uno-arena league run {lg} --store URL --shard 1/2" in line, line
        assert _per_table(pg_url) == [(0, 0, 24)]  # its own table, no more: the barrier holds
        assert sum(x.startswith("block 0:") and "(24 hands)" in x for x in first.lines) == 1
        said = len(first.lines)

        killed = shard(1)
        procs.append(killed)
        deadline = time.monotonic() + 180
        while sum(n for b, t, n in _per_table(pg_url) if t == 1) < 5:
            assert killed.proc.poll() is None, killed.text()
            assert time.monotonic() < deadline, "shard 1 stored no 5 hands within 180 s"
            time.sleep(0.05)
        killed.proc.send_signal(signal.SIGSTOP)  # block 0's last writer: the count holds
        before = _hashes(pg_url)
        killed.proc.send_signal(signal.SIGKILL)
        killed.proc.wait(timeout=30)
        k = len(before) - 24
        assert 5 <= k < 24, k
        line = first.wait_for("waits for shard 1/2", after=said)
        assert f"it is not running ({k} of its 24 hands stored)" in line, line

        second = shard(1)
        procs.append(second)
        assert second.proc.wait(timeout=400) == 0, second.text()
        assert first.proc.wait(timeout=400) == 0, first.text()
    finally:
        for lp in procs:
            if lp.proc.poll() is None:
                lp.proc.kill()
                lp.proc.wait()
            lp.thread.join(30)
    out0, out1 = first.text(), second.text()
    after = _hashes(pg_url)
    assert len(after) == 96  # two blocks of two tables, every hand once (ids are unique)
    assert {h: after[h] for h in before} == before  # the stored hands untouched
    assert _per_table(pg_url) == [(0, 0, 24), (0, 1, 24), (1, 0, 24), (1, 1, 24)]
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        plans = conn.execute("SELECT block, shards FROM league_blocks ORDER BY block").fetchall()
    assert plans == [(0, 2), (1, 2)]  # one plan per block, recorded once
    # the restarted shard 1 played only the rest of its table of block 0, then its block 1
    blocks1 = [x for x in out1.splitlines() if x.startswith("block ")]
    assert len(blocks1) == 2 and blocks1[0].startswith("block 0:"), blocks1
    assert blocks1[0].endswith(f"({24 - k} hands)") and blocks1[1].endswith("(24 hands)")
    refits = [x for x in out0.splitlines() if x.startswith("refit ")]
    assert refits and not [x for x in out1.splitlines() if x.startswith("refit ")], out1
    # (shard 0 alone writes the rating history)
    store = open_league(lg, pg_url)
    try:
        assert store.refits() and store.refits()[-1][2] == 96
    finally:
        store.close()


def test_a_version_whose_folder_is_not_on_this_machine_stops_the_shard(
    tmp_path: Path, pg_url: str
) -> None:
    """A league on many machines shares its folder at one path: a shard that does not find a
    version's built folder says so in one line, before it plays, and does not give it up."""
    lg = tmp_path / "lg"
    assert _run("init", str(lg), "--store", pg_url).returncode == 0
    _enter(lg, pg_url, "here", "ann", RANDOM)
    gone = tmp_path / "elsewhere" / "bots" / "away" / "1"
    store = open_league(lg, pg_url)
    try:
        store.record(
            name="away",
            version="1",
            author="bob",
            language="python",
            folder=str(gone),
            manifest={"run": RANDOM},
            state="active",
        )
    finally:
        store.close()
    res = _run("run", str(lg), "--store", pg_url, "--shard", "1/2", "--hands", "24")
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip().splitlines() == [
        f"uno-arena: away@1: its built folder {gone} is not on this machine; a league on many "
        "machines shares its folder at the same path on every machine (NFS or a shared "
        f"volume): mount it there, then: uno-arena league run {lg} --store URL --shard 1/2"
    ]
    assert _count(pg_url) == 0
    store = open_league(lg, pg_url)
    try:
        assert {v.key: v.state for v in store.versions()} == {
            "here@1": "active",
            "away@1": "active",
        }
    finally:
        store.close()
