"""``league run --metrics-port`` (issue 26, "Seeing it"): the series per version, scraped from a
short real league run, hold what the league's stores hold: hands per version, the last refit's
rating and interval, versions active and retired, refits and the hands in the last one."""

from __future__ import annotations

import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from uno_tournament.league.ratings import server_name
from uno_tournament.league.store import LeagueStore

from .test_league_run import RANDOM, _enter, _new_league, _start, _wait_for

HANDS = 48
Key = tuple[str, str, str]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _scrape(port: int) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def _per_version(
    page: dict[str, dict[tuple[tuple[str, str], ...], float]], name: str
) -> dict[Key, float]:
    out = {}
    for labels, value in page.get(name, {}).items():
        d = dict(labels)
        assert d["league"] == "league", d
        out[(d["bot"], d["version"], d["author"])] = value
    return out


def _seats(league: Path) -> dict[str, int]:
    conn = sqlite3.connect(league / "play" / "tournament.sqlite")
    try:
        return {
            str(b): int(n) for b, n in conn.execute("SELECT bot, COUNT(*) FROM seats GROUP BY bot")
        }
    finally:
        conn.close()


def test_series_per_version_hold_what_the_league_stored(tmp_path: Path) -> None:
    league = _new_league(tmp_path)
    _enter(league, "a", "1", "ann")
    _enter(league, "a", "2", "ann")  # retires a@1 before it plays: hands 0, no rating
    _enter(league, "b", "1", "bob", RANDOM)
    port = _free_port()
    proc = _start(
        league, "--hands", str(HANDS), "--metrics-port", str(port), "--metrics-linger", "600"
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None

        def lingering() -> bool:
            line = proc.stdout.readline() if proc.stdout else ""
            lines.append(line)
            return "final values stay up" in line

        _wait_for(proc, "the linger", lingering, timeout=300)
        page = _scrape(port)
    finally:
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, "".join(lines) + rest

    store = LeagueStore.open(league)
    try:
        versions = store.versions()
        refits = store.refits()
        history = store.history()
    finally:
        store.close()
    seats = _seats(league)
    assert sum(seats.values()) == 4 * HANDS
    keys = {server_name(v): (v.name, v.version, v.author) for v in versions}

    hands = _per_version(page, "uno_league_version_hands")
    played = _per_version(page, "uno_league_version_hands_played_total")
    for sname, key in keys.items():
        assert hands[key] == seats.get(sname, 0), (key, hands, seats)
        assert played[key] == seats.get(sname, 0), (key, played, seats)
    assert hands[("a", "1", "ann")] == 0 and hands[("a", "2", "ann")] > 0
    house = {k: v for k, v in hands.items() if k[1] == "house"}
    assert house and sum(house.values()) == sum(
        n for b, n in seats.items() if b.startswith("house")
    )

    # the last refit's ratings and intervals, exactly as recorded in the history
    last = refits[-1][0]
    rated = {vid: (r, lo, hi) for rid, vid, r, lo, hi, _ in history if rid == last}
    by_id = {v.id: keys[server_name(v)] for v in versions}
    rating = _per_version(page, "uno_league_version_rating")
    low = _per_version(page, "uno_league_version_rating_low")
    high = _per_version(page, "uno_league_version_rating_high")
    assert len(rated) == 2
    for vid, (r, lo, hi) in rated.items():
        key = by_id[vid]
        assert (rating[key], low[key], high[key]) == (r, lo, hi), key
        assert lo < r < hi
    assert ("a", "1", "ann") not in rating  # never rated: no made-up value

    active = _per_version(page, "uno_league_version_active")
    assert active[("a", "1", "ann")] == 0 and active[("a", "2", "ann")] == 1
    assert active[("b", "1", "bob")] == 1
    states = {dict(k)["state"]: v for k, v in page["uno_league_versions"].items()}
    assert states == {"active": 2, "retired": 1, "refused": 0}
    assert page["uno_league_refits_total"][(("league", "league"),)] == len(refits) >= 2
    assert page["uno_league_refit_hands"][(("league", "league"),)] == refits[-1][2] == HANDS
    assert page["uno_league_refit_seconds"][(("league", "league"),)] > 0
    # the page's process series are the league runner's
    assert any(dict(k).get("process") == "league" for k in page["process_cpu_seconds_total"])


@pytest.mark.parametrize("flag", ["--metrics-port", "--web-port"])
def test_a_taken_port_is_one_line_and_exit_2(tmp_path: Path, flag: str) -> None:
    league = _new_league(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = subprocess.run(
            [
                *(sys.executable, "-m", "uno_server.cli", "league", "run", str(league)),
                flag,
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1 and flag in res.stderr, res.stderr
    assert "choose another port" in res.stderr


def test_a_resumed_run_continues_the_counts_of_the_store(tmp_path: Path) -> None:
    """The hands gauge counts every stored hand of the league, over runs; the counter only this
    run's (from 0, for rate()); the ratings are the last refit's."""
    league = _new_league(tmp_path)
    _enter(league, "a", "1", "ann")
    _enter(league, "b", "1", "bob", RANDOM)
    first = subprocess.run(
        [*(sys.executable, "-m", "uno_server.cli", "league", "run", str(league)), "--hands", "24"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert first.returncode == 0, first.stdout + first.stderr
    before = _seats(league)
    port = _free_port()
    proc = _start(league, "--hands", "24", "--metrics-port", str(port), "--metrics-linger", "600")
    try:
        assert proc.stdout is not None

        def lingering() -> bool:
            return "final values stay up" in (proc.stdout.readline() if proc.stdout else "")

        _wait_for(proc, "the linger", lingering, timeout=300)
        page = _scrape(port)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    assert proc.returncode == 0
    after = _seats(league)
    store = LeagueStore.open(league)
    try:
        versions = store.versions()
        refits = store.refits()
        last = {vid: r for rid, vid, r, _, _, _ in store.history() if rid == refits[-1][0]}
    finally:
        store.close()
    hands = _per_version(page, "uno_league_version_hands")
    played = _per_version(page, "uno_league_version_hands_played_total")
    rating = _per_version(page, "uno_league_version_rating")
    for v in versions:
        key, sname = (v.name, v.version, v.author), server_name(v)
        assert before[sname] > 0 and after[sname] > before[sname]
        assert hands[key] == after[sname], (key, hands, after)
        assert played[key] == after[sname] - before[sname], (key, played, before, after)
        assert rating[key] == last[v.id]
    assert page["uno_league_refit_hands"][(("league", "league"),)] == 48


def test_metrics_wait_holds_the_first_block_until_the_page_is_read(tmp_path: Path) -> None:
    """``--metrics-wait``: no hand is played before the first scrape, which reads every counter
    at 0; the scrape releases the first block. Without a scrape the run goes on at the end of
    the wait and says why."""
    league = _new_league(tmp_path)
    _enter(league, "a", "1", "ann")
    _enter(league, "b", "1", "bob", RANDOM)
    port = _free_port()
    proc = _start(league, "--hands", "24", "--metrics-port", str(port), "--metrics-wait", "600")
    lines: list[str] = []
    try:
        assert proc.stdout is not None

        def waiting() -> bool:
            line = proc.stdout.readline() if proc.stdout else ""
            lines.append(line)
            return "waiting up to 600 s for the first scrape" in line

        _wait_for(proc, "the wait", waiting, timeout=120)
        # the run holds: nothing stored while nobody has read the page
        assert proc.poll() is None
        assert (
            not (league / "play" / "tournament.sqlite").exists()
            or sum(_seats(league).values()) == 0
        )
        page = _scrape(port)  # the first scrape: every counter at 0, and it releases the block
        played = _per_version(page, "uno_league_version_hands_played_total")
        assert played and set(played.values()) == {0.0}, played
        rest, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    text = "".join(lines) + rest
    assert proc.returncode == 0, text
    assert text.index("first scrape seen; playing") > text.index("waiting up to 600 s")
    assert sum(_seats(league).values()) == 4 * 24

    # nobody scrapes: the wait ends by itself, and the run says so and plays
    quiet = subprocess.run(
        [
            *(sys.executable, "-m", "uno_server.cli", "league", "run", str(league)),
            *("--hands", "24", "--metrics-port", str(_free_port()), "--metrics-wait", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "no scrape within 1 s; playing anyway" in quiet.stdout, quiet.stdout
    assert sum(_seats(league).values()) == 4 * 48
