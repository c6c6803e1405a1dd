"""A league's per-author limits (``[league]``: ``max_bots_per_author``,
``max_submissions_per_day``): one author cannot fill the ladder with names or keep the gate
busy for everyone. A submission over a limit is one line, exit status 2, and nothing is
recorded or copied; a new version of a bot already in the ladder is always taken."""

from __future__ import annotations

import calendar
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.refusal import cli
from uno_tournament.league.quota import DAY_S, DEFAULTS, check_author
from uno_tournament.league.store import LeagueError, LeagueStore


def _league(tmp_path: Path, section: str) -> Path:
    cfg = tmp_path / "league.toml"
    cfg.write_text(f"[league]\n{section}\n")
    league = tmp_path / "L"
    res = cli("league", "init", str(league), "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    return league


def _record(league: Path, name: str, version: str, author: str, state: str = "active") -> None:
    store = LeagueStore.open(league)
    try:
        store.record(
            name=name,
            version=version,
            author=author,
            language="python",
            folder=str(league / "bots" / name / version),
            manifest={},
            state=state,
            reason="" if state == "active" else "refused in its gate",
        )
    finally:
        store.close()


def _bot(folder: Path, name: str, author: str, version: str = "1") -> Path:
    folder.mkdir(parents=True)
    fields = {"name": name, "version": version, "author": author, "run": ["{python}", "bot.py"]}
    (folder / "bot.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()))
    return folder


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("max_bots_per_author = 0", "league.max_bots_per_author: must be 1-1000, got 0"),
        ("max_bots_per_author = 1001", "league.max_bots_per_author: must be 1-1000, got 1001"),
        (
            'max_submissions_per_day = "ten"',
            "league.max_submissions_per_day: must be an integer, got 'ten'",
        ),
        ("max_submissions_per_day = true", "league.max_submissions_per_day: must be an integer"),
        ("max_submissions_per_day = 2.5", "league.max_submissions_per_day: must be an integer"),
        ("max_bots = 3", "league.max_bots: unknown setting (known: max_bots_per_author, "),
    ],
)
def test_a_bad_limit_names_its_field_and_makes_no_league(
    tmp_path: Path, section: str, message: str
) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text(f"[league]\n{section}\n")
    res = cli("league", "init", str(tmp_path / "L"), "--config", str(cfg))
    assert res.returncode == 2, res.stdout + res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and message in res.stderr, res.stderr
    assert not (tmp_path / "L").exists()


def test_a_new_league_has_the_default_limits_and_a_file_sets_them(tmp_path: Path) -> None:
    assert cli("league", "init", str(tmp_path / "a")).returncode == 0
    league = _league(tmp_path, "max_bots_per_author = 2")
    for folder, want in (
        (tmp_path / "a", DEFAULTS),
        (league, {**DEFAULTS, "max_bots_per_author": 2}),
    ):
        store = LeagueStore.open(folder)
        try:
            assert store.settings()["league"] == want
        finally:
            store.close()


def test_an_author_at_the_bot_limit_is_refused_a_new_name_with_nothing_kept(
    tmp_path: Path,
) -> None:
    league = _league(tmp_path, "max_bots_per_author = 2")
    _record(league, "a1", "1", "alice")
    _record(league, "a2", "1", "alice")
    _record(league, "gone", "1", "alice", state="refused")  # not in the ladder: not counted
    res = cli("league", "submit", str(league), str(_bot(tmp_path / "a3", "a3", "alice")))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip() == (
        "uno-arena: alice: 2 bots in the ladder already (a1, a2), the most this league takes "
        "(league.max_bots_per_author = 2); a new version of one of them replaces it"
    )
    assert not (league / "bots" / "a3").exists()
    store = LeagueStore.open(league)
    try:
        assert [v.name for v in store.versions()] == ["a1", "a2", "gone"]
        settings = store.settings()
        check_author(store, "alice", "a1", settings)  # a new version replaces a1: taken
        check_author(store, "bob", "b1", settings)  # another author: taken
    finally:
        store.close()
    # a remote bot's token is a bot in the ladder too
    res = cli("league", "token", "add", str(league), "a4", "--author", "alice")
    assert res.returncode == 2 and "alice: 2 bots in the ladder already" in res.stderr
    assert res.stdout == ""
    for name, author in (("a9\n", "zed"), ("a9", "alice\n")):  # a final newline passed
        res = cli("league", "token", "add", str(league), name, "--author", author)
        assert res.returncode == 2 and "must be 1-40" in res.stderr, res.stderr
    # a name that differs from another bot's only in case (a submitted one's, a remote one's):
    # refused as a submission is (it was given a token, and stood beside alice's a1)
    for name in ("A1", "GONE"):
        res = cli("league", "token", "add", str(league), name, "--author", "bob")
        assert res.returncode == 2, res.stdout + res.stderr
        assert f"{name}: too like the bot {name.lower()} (names differ only in case)" in res.stderr
        assert res.stdout == ""
    res = cli("league", "token", "add", str(league), "b9", "--author", "bob")
    assert res.returncode == 0, res.stderr
    res = cli("league", "token", "add", str(league), "B9", "--author", "bob")
    assert res.returncode == 2 and "B9: too like the bot b9" in res.stderr, res.stderr
    store = LeagueStore.open(league)
    try:
        assert store.token_names() == [("b9", "bob")]
        with pytest.raises(LeagueError, match=r"bob: 1 bots in the ladder already \(b9\)"):
            check_author(store, "bob", "b10", {"league": {"max_bots_per_author": 1}})
    finally:
        store.close()


def test_an_author_at_the_daily_limit_is_told_when_to_submit_again(tmp_path: Path) -> None:
    league = _league(tmp_path, "max_submissions_per_day = 3")
    t0 = time.time()
    for i in range(3):  # refused verdicts count: each cost a gate
        _record(league, "x", str(i), "carol", state="refused")
    res = cli("league", "submit", str(league), str(_bot(tmp_path / "x", "x", "carol", version="9")))
    assert res.returncode == 2, res.stdout + res.stderr
    line = res.stderr.strip()
    assert line.startswith(
        "uno-arena: carol: 3 submissions judged in the last 24 hours, the most this league takes "
        "(league.max_submissions_per_day = 3); submit again from "
    ), line
    when = time.strptime(line.rsplit("from ", 1)[1], "%Y-%m-%d %H:%M UTC")
    free = calendar.timegm(when)
    assert t0 + DAY_S - 60 <= free <= time.time() + DAY_S + 60  # a day after the oldest
    assert not (league / "bots" / "x" / "9").exists()
    store = LeagueStore.open(league)
    try:
        settings = store.settings()
        with pytest.raises(LeagueError, match="3 submissions judged"):
            check_author(store, "carol", "x", settings, now=time.time() + DAY_S - 60)
        check_author(store, "carol", "x", settings, now=time.time() + DAY_S + 1)  # a day on
        check_author(store, "dave", "y", settings)  # another author's count is their own
    finally:
        store.close()


def test_a_league_made_before_the_limits_keeps_none(tmp_path: Path) -> None:
    league = _league(tmp_path, "max_bots_per_author = 1")
    for i in range(5):
        _record(league, f"n{i}", "1", "erin")
    store = LeagueStore.open(league)
    try:
        settings = store.settings()
        with pytest.raises(LeagueError, match="erin: 5 bots"):
            check_author(store, "erin", "n9", settings)
        old = {k: v for k, v in settings.items() if k != "league"}
        check_author(store, "erin", "n9", old)
    finally:
        store.close()


class _Store:
    """A league's records as check_author reads them."""

    def __init__(self, versions: list[object]) -> None:
        self._versions = versions

    def versions(self) -> list[object]:
        return self._versions

    def token_names(self) -> list[tuple[str, str]]:
        return []


def test_the_time_to_submit_again_is_never_early() -> None:
    """Rounded down to the minute, it was up to 59 s early: a submission at the time said was
    refused again (an examination)."""
    at = calendar.timegm((2026, 12, 5, 21, 11, 59)) + 0.9
    store = _Store([SimpleNamespace(author="al", submitted_at=at, state="refused", name="x")])
    settings = {"league": {"max_submissions_per_day": 1}}
    with pytest.raises(LeagueError, match="submit again from 2026-12-06 21:12 UTC"):
        check_author(store, "al", "x", settings, now=at + 10)
    with pytest.raises(LeagueError):  # at the minute a rounded-down time named, still refused
        check_author(store, "al", "x", settings, now=at + DAY_S - 59.9)
    check_author(store, "al", "x", settings, now=calendar.timegm((2026, 12, 6, 21, 12, 0)))


def test_a_token_waits_for_a_submission_being_judged(tmp_path: Path) -> None:
    """A token added while a gate ran took its author past max_bots_per_author (the submission
    had checked the limit before its gate): token add now waits for the submission lock."""
    import fcntl
    import subprocess
    import sys

    league = _league(tmp_path, "max_bots_per_author = 1")
    with open(league / ".submit.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as a submission being judged holds it
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uno_server.cli",
                "league",
                "token",
                "add",
                str(league),
                "t1",
                "--author",
                "carol",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        first = proc.stderr.readline()  # said before it waits
        assert first.startswith("waiting: another submission"), first
        store = LeagueStore.open(league)
        try:
            assert store.token_names() == []  # nothing while the lock is held
        finally:
            store.close()
        _record(league, "c1", "1", "carol")  # the judged submission's verdict
        fcntl.flock(held.fileno(), fcntl.LOCK_UN)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "carol: 1 bots in the ladder already (c1)" in err, err


def test_a_name_with_a_token_is_not_submitted_beside_it(tmp_path: Path) -> None:
    league = _league(tmp_path, "max_bots_per_author = 4")
    assert cli("league", "token", "add", str(league), "ctok", "--author", "carol").returncode == 0
    res = cli("league", "submit", str(league), str(_bot(tmp_path / "ctok", "ctok", "carol")))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "ctok: a remote bot of that name has a token" in res.stderr, res.stderr


def test_a_refused_remote_bot_is_not_gated_again_past_the_daily_limit(tmp_path: Path) -> None:
    """A remote bot is gated on each new connection after a refusal: reconnecting, it got a
    gate each time, past max_submissions_per_day (an examination: 3 gates, limit 2)."""
    from uno_tournament.league.remote import Remote, RemoteBots

    league = _league(tmp_path, "max_submissions_per_day = 2")
    assert cli("league", "token", "add", str(league), "dtok", "--author", "dave").returncode == 0
    said: list[str] = []
    store = LeagueStore.open(league)
    try:
        runner = SimpleNamespace(
            remote={"dtok": Remote("dtok", "dave", "x", registered=True, refused_session="s1")},
            league=store,
            say=said.append,
            _waiting="",
        )
        gate = RemoteBots._to_gate  # what a reconnect (session s2) asks
        assert gate(runner, {"dtok": "s2"}) is runner.remote["dtok"]  # type: ignore[arg-type]
        for i in (1, 2):  # two refused gates today
            _record(league, "dtok", f"remote.{i}", "dave", state="refused")
        assert gate(runner, {"dtok": "s3"}) is None  # type: ignore[arg-type]
        assert said and "remote bot dtok: not gated (dave: 2 submissions judged" in said[-1]
    finally:
        store.close()


def test_an_author_is_one_whatever_the_case_and_a_name_differing_only_in_case_is_refused(
    tmp_path: Path,
) -> None:
    """ "Alice" and "alice" were two authors (two bots past a limit of one, and at one table),
    and bots "A1" and "a1" of two authors could pass for each other (an examination)."""
    league = _league(tmp_path, "max_bots_per_author = 1")
    _record(league, "a1", "1", "alice")
    res = cli("league", "submit", str(league), str(_bot(tmp_path / "a2", "a2", "Alice")))
    assert res.returncode == 2 and "Alice: 1 bots in the ladder already (a1)" in res.stderr
    res = cli("league", "submit", str(league), str(_bot(tmp_path / "A1", "A1", "bob")))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "A1: too like the bot a1 (names differ only in case)" in res.stderr, res.stderr


def test_the_organiser_retires_a_bot_by_hand(tmp_path: Path) -> None:
    """Four versions that never played a card stopped a league, and nothing but an edit of
    league.sqlite took them out (an examination): `league retire` does."""
    league = _league(tmp_path, "max_bots_per_author = 2")
    _record(league, "hog", "1", "mallory")
    res = cli("league", "retire", str(league), "hog", "--reason", "never plays a card")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("hog@1: retired (never plays a card)"), res.stdout
    store = LeagueStore.open(league)
    try:
        (v,) = store.versions("hog")
        assert (v.state, v.reason) == ("retired", "retired by the organiser: never plays a card")
    finally:
        store.close()
    again = cli("league", "retire", str(league), "hog")
    assert again.returncode == 2 and "hog: no active version of that name" in again.stderr
    assert cli("league", "token", "add", str(league), "rem", "--author", "zed").returncode == 0
    res = cli("league", "retire", str(league), "rem")
    assert res.returncode == 2 and "revoke its token instead" in res.stderr, res.stderr
    res = cli("league", "retire", str(league), "hog", "--reason", "a\x1bb")
    assert res.returncode == 2 and "--reason: 1-200 printable characters" in res.stderr
    status = cli("league", "status", str(league))
    assert "retired by the organiser: never plays a card" in status.stdout, status.stdout
