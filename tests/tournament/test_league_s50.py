"""An examination of the league (strangers submit bots, each confined by bubblewrap), and what
its findings changed: a sandbox turned off needs the organiser's explicit ``required = false``
(and is then a loud warning), a bot a limit stopped is refused for that and not for the
timeouts it left behind, reserved names hold in any case, a damaged database is one line, the
records are the owner's only, ``sandbox check`` reads a league's config, addresses are checked
before a run starts, and a few messages say what to do."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from uno_tournament import sandbox
from uno_tournament.config import SandboxSpec
from uno_tournament.league import start
from uno_tournament.league.manifest import reserved
from uno_tournament.league.settings import league_sandbox
from uno_tournament.league.store import LeagueError, LeagueStore
from uno_tournament.league.submit import judge
from uno_tournament.store import HandRecord, SeatRecord

from .test_league_submit import GOOD, _bot, _cli

CI = os.environ.get("CI") == "true"


def _one_line(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1, res.stderr
    return res.stderr.strip()


def _run(league: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``league run`` that is expected to refuse: a run that started instead (a league without
    versions waits for one) fails the test after two minutes, not ten."""
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", "run", str(league), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )


def _settings(league: Path, change: dict[str, object] | str) -> None:
    """Edit the stored settings of ``league`` (a dict: merged into its ``sandbox``; a string:
    the raw value), as an organiser with sqlite3 would."""
    conn = sqlite3.connect(league / "league.sqlite")
    try:
        if isinstance(change, str):
            value = change
        else:
            row = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
            settings = json.loads(row[0])
            settings["sandbox"] = {**settings["sandbox"], **change}
            value = json.dumps(settings)
        with conn:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (value,))
    finally:
        conn.close()


# ------------------------------------------------------------------ 1. the sandbox turned off


@pytest.mark.parametrize("extra", ["", "required = true\n"])
def test_init_refuses_a_sandbox_turned_off_and_makes_no_league(tmp_path: Path, extra: str) -> None:
    """`[sandbox] enabled = false` made a league that ran strangers' bots unconfined, as root
    (an examination's bot read /etc/shadow and ptraced pid 1), and nothing warned."""
    cfg = tmp_path / "nosb.toml"
    cfg.write_text("[sandbox]\nenabled = false\n" + extra)
    err = _one_line(_cli("init", str(tmp_path / "L"), "--config", str(cfg)))
    assert err.startswith(f"uno-arena: {cfg}: sandbox.enabled = false: "), err
    assert "sandbox.required = false" in err
    assert not (tmp_path / "L").exists()


def test_init_with_required_false_warns_loudly_and_keeps_the_choice(tmp_path: Path) -> None:
    cfg = tmp_path / "nosb.toml"
    cfg.write_text("[sandbox]\nenabled = false\nrequired = false\n")
    res = _cli("init", str(tmp_path / "L"), "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("\n") == 1 and "WARNING" in res.stderr, res.stderr
    assert "UNCONFINED" in res.stderr and "sandbox.enabled = false" in res.stderr
    store = LeagueStore.open(tmp_path / "L")
    try:
        sb = store.settings()["sandbox"]
    finally:
        store.close()
    assert (sb["enabled"], sb["required"]) == (False, False)


def test_submit_and_run_refuse_a_stored_league_with_the_sandbox_off(tmp_path: Path) -> None:
    """An edited database (or a league of an older init) with `enabled = false` and
    `required = true`: nothing is copied, built, recorded or run."""
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    _settings(league, {"enabled": False})
    bot = _bot(tmp_path / "b", **GOOD)
    err = _one_line(_cli("submit", str(league), str(bot)))
    assert "sandbox.enabled = false with sandbox.required = true" in err, err
    assert str(league / "league.sqlite") in err
    assert not (league / "bots").exists() and not (league / "gates").exists()
    store = LeagueStore.open(league)
    try:
        assert store.versions() == []
    finally:
        store.close()
    err = _one_line(_run(league, "--hands", "24"))
    assert "sandbox.enabled = false with sandbox.required = true" in err, err
    assert not (league / "play").exists()


def test_submit_and_run_warn_where_the_organiser_said_required_false(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    _settings(league, {"enabled": False, "required": False})
    bot = _bot(tmp_path / "b", **GOOD)
    os.mkfifo(bot / "pipe")  # refused after the sandbox's word, before any copy or gate
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and "WARNING" in lines[0] and "UNCONFINED" in lines[0], lines
    assert "a named pipe" in lines[1]

    def stop(*args: object, **kwargs: object) -> None:
        raise LeagueError("stopped here")

    monkeypatch.setattr(start, "open_hands", stop)
    with pytest.raises(LeagueError, match="stopped here"):
        start.run_league(league)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "WARNING" in err and "UNCONFINED" in err, err


def test_league_sandbox_reads_the_stored_choice() -> None:
    with pytest.raises(LeagueError, match=r"sandbox\.enabled = false"):
        league_sandbox({"sandbox": {"enabled": False}}, "db")  # required unset: a league's true
    with pytest.raises(LeagueError, match=r"sandbox\.enabled = false"):
        league_sandbox({"sandbox": {"enabled": False, "required": True}}, "db")
    assert league_sandbox({}, "db").enabled
    with pytest.raises(LeagueError, match=r"db: not a league database \(meta\.settings: sandbox"):
        league_sandbox({"sandbox": {"colour": "red"}}, "db")


# ------------------------------------------------------------------ 3. a crash before timeouts


def _seat(bot: str, seat: int, timeouts: int = 0) -> SeatRecord:
    return SeatRecord(seat, bot, 1, 0, 0, timeouts=timeouts, decisions=5)


def _hand(n: int, timeouts: int) -> HandRecord:
    seats = [_seat("hog.2", 0, timeouts)] + [_seat(f"house-{i}", i) for i in (1, 2, 3)]
    return HandRecord(f"h{n}", 0, 0, 0, n, "d", 1, 1, 0, f"m{n}", 1, 10, 0.1, seats, {})


def test_a_crash_is_the_reason_before_the_timeouts_it_left(tmp_path: Path) -> None:
    """A bot the memory limit stopped was refused for "3 timeout(s)" (its pending decisions
    timed out); the crash, with the limit and the log's tail, is the reason now."""
    log = tmp_path / "hog.2.log"
    log.write_text("about to eat memory\n--- 05:41:05 memory limit 128 MiB reached, stopped\n")
    rows = [_hand(0, 0), _hand(1, 3)]
    ok, reason, gate = judge(
        rows,
        "hog.2",
        24,
        tmp_path,
        ["memory limit 128 MiB reached, stopped", "after 0 restarts (last: ...)"],
        bot_log=log,
    )
    assert not ok and gate["timeouts"] == 3 and gate["crashes"] == 2
    assert reason == (
        "the bot crashed during the gate: memory limit 128 MiB reached, stopped; last log lines: "
        "about to eat memory | --- 05:41:05 memory limit 128 MiB reached, stopped "
        f"(log: {log})"
    )


MEMHOG = """\
import sys

from uno_bot.examples.random_bot import RandomBot


class Hog(RandomBot):
    calls = 0

    def decide(self, request, state):
        self.calls += 1
        if self.calls == 3:
            print("about to eat memory", flush=True)
            hog = []
            while True:
                hog.append(bytearray(16 << 20))
        return super().decide(request, state)


sys.exit(Hog().main(sys.argv[1:]))
"""


def test_a_bot_the_memory_limit_stopped_is_refused_for_it(tmp_path: Path) -> None:
    missing = sandbox.probe().missing(SandboxSpec(memory_mb=128))
    if missing:
        if CI:
            pytest.fail(f"sandbox protections missing under CI=true: {missing}")
        pytest.skip(f"sandbox protections missing on this machine: {missing[0]}")
    cfg = tmp_path / "mem.toml"
    cfg.write_text("[sandbox]\nmemory_mb = 128\n")
    league = tmp_path / "L"
    assert _cli("init", str(league), "--config", str(cfg)).returncode == 0
    run = ["{python}", "bot.py", "--log-level", "warning", "--addr", "{addr}", "--name", "{name}"]
    bot = _bot(tmp_path / "memhog", name="memhog", version="1", author="m", run=run)
    (bot / "bot.py").write_text(MEMHOG)
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout.startswith(
        "memhog@1: refused: the bot crashed during the gate: memory limit 128 MiB reached, "
        "stopped; last log lines: "
    ), res.stdout
    assert "about to eat memory" in res.stdout and "timeout(s)" not in res.stdout


# ------------------------------------------------------------------ 4. reserved in any case


@pytest.mark.parametrize("name", ["House-random", "HOUSE-x", "Gate-heuristic", "GATE-1"])
def test_reserved_names_hold_in_any_case(tmp_path: Path, name: str) -> None:
    assert reserved(name)
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    err = _one_line(_cli("token", "add", str(league), name, "--author", "z"))
    assert f"NAME: {name!r} is reserved" in err, err
    bot = _bot(tmp_path / "b", **{**GOOD, "name": name})
    err = _one_line(_cli("submit", str(league), str(bot)))
    assert f"name: {name!r} is reserved" in err, err
    store = LeagueStore.open(league)
    try:
        assert store.versions() == [] and store.token_names() == []
    finally:
        store.close()


# ------------------------------------------------------------------ 5. a damaged database


def test_damaged_settings_are_one_line_naming_the_database(tmp_path: Path) -> None:
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    _settings(league, "{bad json")
    bot = _bot(tmp_path / "b", **GOOD)
    db = league / "league.sqlite"
    for args in (
        ("submit", str(league), str(bot)),
        ("run", str(league), "--hands", "24"),  # refused at once
        ("token", "add", str(league), "rb", "--author", "x"),
    ):
        err = _one_line(_cli(*args))
        assert err.startswith(f"uno-arena: {db}: not a league database (meta.settings: "), err
    _settings(league, '{"sandbox": 5}')
    err = _one_line(_run(league, "--hands", "24"))
    assert err == f"uno-arena: {db}: not a league database (meta.settings: sandbox is no table)"
    assert not (league / "play").exists()


def test_a_damaged_versions_gate_is_one_line(tmp_path: Path) -> None:
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    store = LeagueStore.open(league)
    try:
        store.record(
            name="x",
            version="1",
            author="a",
            language="python",
            folder="bots/x/1",
            manifest={},
            state="refused",
            reason="r",
        )
    finally:
        store.close()
    conn = sqlite3.connect(league / "league.sqlite")
    with conn:
        conn.execute("UPDATE versions SET gate = '{oops'")
    conn.close()
    err = _one_line(_cli("status", str(league)))
    assert "not a league database (versions.gate of x@1: " in err, err


# ------------------------------------------------------------------ 6. the records are private


def test_the_league_records_are_the_owners_only(tmp_path: Path) -> None:
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    db = league / "league.sqlite"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    store = LeagueStore.open(league)  # WAL: its -wal and -shm take the database's mode
    try:
        for p in league.glob("league.sqlite*"):
            assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    finally:
        store.close()
    db.chmod(0o644)  # a league made before: its next command makes it private
    assert _cli("status", str(league)).returncode == 0
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


# ------------------------------------------------------------------ 7. sandbox check, a league's


def _check(cfg: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "sandbox", "check", "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_sandbox_check_reads_a_league_config(tmp_path: Path) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text("[sandbox]\nmemory_mb = 512\n[league]\nmax_bots_per_author = 2\n")
    res = _check(cfg)
    assert res.returncode in (0, 1) and "bots:" not in res.stderr, res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("sandbox: "), res.stdout
    if "memory" in first:
        assert "memory 512 MiB" in first
    cfg.write_text("[sandbox]\nenabled = false\nrequired = false\n")
    res = _check(cfg)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "every protection is active" not in res.stdout
    assert "missing: every protection (sandbox.enabled = false" in res.stdout
    cfg.write_text("[sandbox]\nenabled = false\n")
    err = _one_line(_check(cfg))
    assert "sandbox.enabled = false" in err


# ------------------------------------------------------------------ 8. addresses, up front


def test_a_bad_host_is_named_as_the_host_before_the_run_starts(tmp_path: Path) -> None:
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    err = _one_line(_run(league, "--metrics-port", "47300", "--metrics-host", "999.1.1.1"))
    assert err.startswith("uno-arena: --metrics-host 999.1.1.1: "), err
    assert err.endswith("give an address of this machine") and "port" not in err, err
    err = _one_line(_run(league, "--bind", "192.0.2.1"))
    assert err.startswith("uno-arena: --bind 192.0.2.1: cannot listen there ("), err
    assert err.endswith("give an address of this machine"), err
    assert "game server" not in err
    err = _one_line(_run(league, "--web-port", "47301", "--web-host", "999.1.1.1"))
    assert err.startswith("uno-arena: --web-host 999.1.1.1: "), err
    assert not (league / "play").exists()


# ------------------------------------------------------------------ 9. messages


@pytest.mark.parametrize("reason", ["", "''", "  ", '""'])
def test_an_empty_retire_reason_is_refused(tmp_path: Path, reason: str) -> None:
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    err = _one_line(_cli("retire", str(league), "snd", "--reason", reason))
    assert err.startswith("uno-arena: --reason: 1-200 printable characters"), err


def test_token_add_again_and_revoke_say_which_command(tmp_path: Path) -> None:
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    assert _cli("token", "add", str(league), "rb", "--author", "x").returncode == 0
    err = _one_line(_cli("token", "add", str(league), "rb", "--author", "x"))
    assert "has a token already" in err, err
    assert err.endswith(f"revoke that first: uno-arena league token revoke {league} rb"), err
    err = _one_line(_cli("token", "add", str(league), "rb", "--author", "y"))
    assert err == "uno-arena: rb: the name is taken (by x); choose another name"
    err = _one_line(_cli("token", "revoke", str(league), "nosuch"))
    assert err == (
        f"uno-arena: nosuch: no token of that name; `uno-arena league status {league}` lists "
        "the tokens"
    )


def test_init_inside_another_leagues_folder_is_refused(tmp_path: Path) -> None:
    league = tmp_path / "L2"
    assert _cli("init", str(league)).returncode == 0
    (league / "bots").mkdir(exist_ok=True)
    for inner in (league / "bots" / "x", league / "sub" / "deeper"):
        err = _one_line(_cli("init", str(inner)))
        assert err == (
            f"uno-arena: {inner}: inside the folder of the league {league.resolve()}; give a "
            "folder outside any league"
        )
        assert not inner.exists()
