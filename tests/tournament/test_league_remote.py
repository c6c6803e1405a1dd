"""Remote bots of a league (issue 26): an author runs the bot on their own machine with a token
of ``league token add`` and connects to the league's server, as Battlesnake authors host their
snakes. Here a real remote bot (the Python SDK's example bot, a process of its own pointed at the
league's server port and the token) is gated on its first connection, enters the ladder and plays
rated hands; when it goes away it is skipped, not given up on, and plays again once back; a broken
remote bot is refused with its reason; a bot that never connects is "waiting for first
connection"; a revoked token is refused by the server with UNAUTHENTICATED."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from uno_tournament.league.cli import settings_from
from uno_tournament.league.store import LeagueStore

BROKEN = """
import sys
import uno_bot.deciding
from uno_bot.examples.random_bot import RandomBot

# a bot without the SDK's guard (as one in another language may be): it sends what it decides
uno_bot.deciding._check_choice = lambda req, result: (result, "")

class Broken(RandomBot):
    def decide(self, request, state):
        return 987654  # no such action: every answer is rejected

raise SystemExit(Broken().main(sys.argv[1:]))
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


LOGS: dict[Path, BinaryIO] = {}
"""The open log files of the processes a test started (closed at its end)."""


def _log(path: Path) -> BinaryIO:
    if path not in LOGS:
        LOGS[path] = path.open("ab")
    return LOGS[path]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bot(port: int, token: str, name: str, log: Path, *cmd: str) -> subprocess.Popen[bytes]:
    """A remote bot: a process of its own, pointed at the league's server with its token."""
    return subprocess.Popen(
        [
            sys.executable,
            *(cmd or ("-m", "uno_bot.examples.random_bot")),
            "--log-level",
            "warning",
            "--addr",
            f"127.0.0.1:{port}",
            "--token",
            token,
            "--name",
            name,
        ],
        stdout=_log(log),
        stderr=subprocess.STDOUT,
    )


def _rows(db: Path, query: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    if not db.exists():
        return []
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return list(conn.execute(query, args))
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return []


def _hands(league: Path) -> dict[str, set[str]]:
    """The bots of every stored ladder hand, by hand id."""
    out: dict[str, set[str]] = {}
    for hid, bot in _rows(league / "play" / "tournament.sqlite", "SELECT hand_id, bot FROM seats"):
        out.setdefault(str(hid), set()).add(str(bot))
    return out


def _version(league: Path, key: str) -> tuple[str, str] | None:
    name, _, version = key.partition("@")
    rows = _rows(
        league / "league.sqlite",
        "SELECT state, reason FROM versions WHERE name = ? AND version = ?",
        (name, version),
    )
    return (str(rows[0][0]), str(rows[0][1])) if rows else None


def _wait(run: subprocess.Popen[bytes], out: Path, what: str, cond: Callable[[], object]) -> None:
    deadline = time.monotonic() + 300
    while not cond():
        if run.poll() is not None:
            raise AssertionError(
                f"league run exited ({run.returncode}) before {what}:\n{out.read_text()}"
            )
        assert time.monotonic() < deadline, f"no {what}:\n{out.read_text()[-3000:]}"
        time.sleep(0.1)


def test_remote_bots_are_gated_play_come_back_and_are_refused(tmp_path: Path) -> None:
    league = tmp_path / "league"
    LeagueStore.create(league, settings_from(None)).close()
    tokens = {}
    for name, author in (("broken", "bob"), ("ghost", "cat")):
        res = _cli("token", "add", str(league), name, "--author", author)
        assert res.returncode == 0, res.stderr
        tokens[name] = res.stdout.strip()
    raw = b"".join(p.read_bytes() for p in league.glob("league.sqlite*"))
    assert not any(t.encode() in raw for t in tokens.values())  # only hashes are kept

    port = _free_port()
    out = tmp_path / "run.out"
    run = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "league", "run", str(league), "--port", str(port)],
        stdout=_log(out),
        stderr=subprocess.STDOUT,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )
    bots: list[subprocess.Popen[bytes]] = []
    try:
        _wait(run, out, "the server's address", lambda: "remote bots connect to" in out.read_text())
        assert f"remote bots connect to 127.0.0.1:{port}" in out.read_text()

        # a broken remote bot: gated on its first connection, refused with its reason
        script = tmp_path / "broken_bot.py"
        script.write_text(BROKEN)
        bots.append(_bot(port, tokens["broken"], "broken", tmp_path / "broken.log", str(script)))
        _wait(run, out, "the broken bot's verdict", lambda: _version(league, "broken@remote.1"))
        state, reason = _version(league, "broken@remote.1") or ("", "")
        assert state == "refused", reason
        assert "illegal action(s) in 24 gate hands; the first in hand gate-broken-1/" in reason
        assert "seat " in reason and "uno-arena replay" in reason
        # what the server said of the first illegal action, and the request it answered
        assert ", answering request m" in reason and "with action id 987654" in reason, reason
        assert "reconnect it to be gated again" in reason

        # a token added while the league runs: registered before the next block
        res = _cli("token", "add", str(league), "good", "--author", "alice")
        assert res.returncode == 0, res.stderr
        tokens["good"] = res.stdout.strip()
        raw = b"".join(p.read_bytes() for p in league.glob("league.sqlite*"))
        assert tokens["good"].encode() not in raw  # only hashes are kept
        _wait(
            run,
            out,
            "the new token's registration",
            lambda: "remote bot good (alice): waiting for its first connection" in out.read_text(),
        )
        # the example bot: gated, enters, plays rated hands
        bots.append(_bot(port, tokens["good"], "good", tmp_path / "good.log"))
        _wait(
            run,
            out,
            "a rated block with the remote bot",
            lambda: (
                sum("good" in b for b in _hands(league).values()) >= 24
                and "refit 2:" in out.read_text()
            ),
        )
        assert _version(league, "good@remote.1") == (
            "active",
            "gate passed: 24 hands, 0 illegal, 0 timeouts, 0 crashes",
        )
        gate_hands = _rows(
            league / "gates" / "good@remote.1" / "tournament.sqlite",
            "SELECT COUNT(DISTINCT hand_id) FROM seats WHERE bot = 'good'",
        )
        assert gate_hands == [(24,)]  # the gate's hands are the gate's, not the ladder's
        text = out.read_text()
        accepted = text.index("good@remote.1: accepted")
        first_block = next(
            i for i, line in enumerate(text.splitlines(keepends=True)) if "block " in line
        )
        assert accepted < sum(len(x) for x in text.splitlines(keepends=True)[:first_block])
        ladder = _hands(league)
        assert all("broken" not in b and "ghost" not in b for b in ladder.values())
        history = _rows(
            league / "league.sqlite",
            "SELECT h.hands FROM history h JOIN versions v ON v.id = h.version_id "
            "WHERE v.name = 'good'",
        )
        assert history and max(int(str(h[0])) for h in history) >= 24

        # away: skipped, not given up on; back: plays again, with no new gate
        waits = out.read_text().count("remote, not connected: good")
        bots[1].kill()
        bots[1].wait()
        seen = len(ladder)
        _wait(
            run,
            out,
            "the league waiting for the remote bot",
            lambda: out.read_text().count("remote, not connected: good") > waits,
        )
        gone = len(_hands(league))
        bots[1] = _bot(port, tokens["good"], "good", tmp_path / "good.log")
        _wait(
            run, out, "the bot's hands after its return", lambda: len(_hands(league)) >= gone + 24
        )
        assert seen <= gone
        assert _version(league, "good@remote.1") == (
            "active",
            "gate passed: 24 hands, 0 illegal, 0 timeouts, 0 crashes",
        )
        assert _version(league, "good@remote.2") is None
        assert "given up" not in out.read_text()
        # absent costs no forfeit: only the hands in play when it died were taken over
        # (the server's takeover; at most --concurrency, 8), its later hands were skipped
        taken = _rows(
            league / "play" / "tournament.sqlite",
            "SELECT COUNT(*) FROM seats WHERE bot = 'good' AND taken_over = 1",
        )
        assert int(str(taken[0][0])) <= 8, taken

        status = _cli("status", str(league))
        assert status.returncode == 0, status.stderr
        lines = status.stdout.splitlines()
        assert any(
            line.split()[:2] == ["1", "good@remote.1"] and "remote" in line for line in lines
        )
        assert any("broken@remote.1" in ln and "illegal action(s)" in ln for ln in lines)
        assert any(
            ln.split()[:3] == ["ghost", "remote", "cat"] and "waiting for first connection" in ln
            for ln in lines
        )

        # a revoked token: retired, and the league's server refuses it with UNAUTHENTICATED
        res = _cli("token", "revoke", str(league), "good")
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() == "token of good revoked; retired good@remote.1"
        _wait(run, out, "the revocation", lambda: "good: token revoked" in out.read_text())
        again = subprocess.run(
            [
                sys.executable,
                "-m",
                "uno_bot.examples.random_bot",
                "--addr",
                f"127.0.0.1:{port}",
                "--token",
                tokens["good"],
                "--name",
                "good",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert again.returncode != 0
        assert "UNAUTHENTICATED" in again.stdout + again.stderr
        assert _version(league, "good@remote.1") == ("retired", "token revoked")
        res = _cli("token", "revoke", str(league), "good")
        assert (res.returncode, res.stderr.count("\n")) == (2, 1), res.stderr
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=120) == 130, out.read_text()
    finally:
        for b in bots:
            if b.poll() is None:
                b.kill()
                b.wait()
        if run.poll() is None:
            run.kill()
            run.wait()
        for f in LOGS.values():
            f.close()
        LOGS.clear()
    text = out.read_text()
    assert "league stopped" in text


def test_token_names_of_the_league_and_unknown_tokens_are_one_line_errors(tmp_path: Path) -> None:
    league = tmp_path / "league"
    LeagueStore.create(league, settings_from(None)).close()
    for name in ("bot.7", "house-random", "gate-x"):  # a version's server name, the league's own
        res = _cli("token", "add", str(league), name, "--author", "eve")
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert "is reserved" in res.stderr and res.stdout == ""
    res = _cli("token", "add", str(league), "mine", "--author", "eve")
    assert res.returncode == 0, res.stderr
    res = _cli("token", "add", str(league), "mine", "--author", "eve")
    assert (res.returncode, res.stderr.count("\n")) == (2, 1), res.stderr
    assert "the name is taken (by eve)" in res.stderr
    res = _cli("status", str(league))
    assert "waiting for first connection" in res.stdout, res.stdout
    res = _cli("token", "revoke", str(league), "nobody")
    assert res.returncode == 2 and res.stderr == (
        f"uno-arena: nobody: no token of that name; `uno-arena league status {league}` lists "
        "the tokens\n"
    )
