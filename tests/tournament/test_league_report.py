"""``league report`` and ``league status`` (issue 26): the standings from the last refit, the
rating history per version, the replacements with their verdicts and the refusals, in md, csv,
json and a self-contained html with the ratings over time."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path

from uno_tournament.league.ratings import fit_league, record_refit, server_name
from uno_tournament.league.report import Standing, rank_ranges
from uno_tournament.league.store import Version
from uno_tournament.store import Store

from .test_league_ratings import _league, _play


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )


def test_report_and_status_show_standings_history_and_verdicts(tmp_path: Path) -> None:
    league = _league(tmp_path)
    store = Store.create(tmp_path / "league" / "play", {"tournament_id": "league"})
    rng = random.Random(5)
    try:
        v = {x.name: x for x in league.versions()}
        a1, b, c, d = (server_name(v[n]) for n in "abcd")
        elo = {a1: -100.0, b: 0.0, c: 100.0, d: 200.0}
        for _ in range(3):
            _play(store, rng, [a1, b, c, d], elo, 96)
            record_refit(league, fit_league(store, "last"))
        league.record(
            name="a",
            version="2",
            author="ann",
            language="python",
            folder="",
            manifest={"run": ["x"]},
            state="active",
        )
        league.record(
            name="e",
            version="0.1",
            author="eve",
            language="go",
            folder="",
            manifest={"run": ["x"]},
            state="refused",
            reason="3 illegal action(s) in 24 gate hands; the first in hand gate/t0/b0/d1/r2",
        )
        a2 = server_name(next(x for x in league.versions() if x.key == "a@2"))
        elo[a2] = 400.0
        for _ in range(20):
            _play(store, rng, [a2, b, c, d], elo, 96)
            record_refit(league, fit_league(store, "last"))
            if league.replacements()[0][3] != "undecided yet":
                break
        n_refits = len(league.refits())
    finally:
        store.close()
        league.close()
    folder = tmp_path / "league"

    res = _cli("report", str(folder))
    assert res.returncode == 0, res.stderr
    out = folder / "report"
    md = (out / "league.md").read_text()
    assert "| a@1 | ann | retired |" in md and "replaced by a@2: better" in md
    assert "| a@1 | a@2 | better |" in md
    assert "e@0.1 (eve): 3 illegal action(s)" in md

    rows = list(csv.DictReader(io.StringIO((out / "league.csv").read_text())))
    assert [r["version"] for r in rows][:2] == ["a@2", "d@1"]  # strongest first
    assert all(float(r["low"]) < float(r["rating"]) < float(r["high"]) for r in rows)

    data = json.loads((out / "league.json").read_text())
    assert len(data["refits"]) == n_refits
    hist = {s["version"]: s["history"] for s in data["standings"]}
    assert len(hist["b@1"]) == n_refits  # one entry per refit
    assert len(hist["a@2"]) == n_refits - 3 and len(hist["a@1"]) == n_refits
    assert data["replacements"][0]["verdict"] == "better"
    assert data["refused"][0]["version"] == "e@0.1"

    page = (out / "league.html").read_text()
    assert not re.search(r"(src|href)=['\"]?https?:", page)  # no network assets
    svg = page[page.index("<svg") : page.index("</svg>")]
    groups = re.findall(r"<g class='version' data-version='([^']+)'>", svg)
    assert sorted(groups) == ["a@1", "a@2", "b@1", "c@1", "d@1"]
    assert svg.count("class='version-start'") == 5 and ">v2</text>" in svg
    assert svg.count("<polygon") == 5  # an interval band per version
    assert "stroke-dasharray='5 3'" in svg  # the retired version is drawn dashed
    assert "<td>better</td>" in page

    res = _cli("status", str(folder))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split()[:4] == ["#", "version", "state", "author"]
    assert lines[1].split()[:3] == ["1", "a@2", "active"]
    assert any(ln.split()[1:3] == ["a@1", "retired"] and "better" in ln for ln in lines)
    assert any(ln.split()[0:2] == ["e@0.1", "refused"] for ln in lines)


def test_report_of_a_league_without_hands(tmp_path: Path) -> None:
    league = _league(tmp_path)
    league.close()
    res = _cli("report", str(tmp_path / "league"), "--out", str(tmp_path / "r"))
    assert res.returncode == 0, res.stderr
    assert "no league hands yet" in (tmp_path / "r" / "league.md").read_text()
    res = _cli("report", str(tmp_path / "nowhere"))
    assert (
        res.returncode == 2
        and res.stderr.startswith("uno-arena: ")
        and "no league here" in (res.stderr)
    )
    # a bot's own folder (what it reads in its sandbox, frozen once judged) is no place for it
    # (an examination wrote the report into an accepted bot's folder)
    for inside in ("bots/probe/1", "gates", "bots"):
        res = _cli("report", str(tmp_path / "league"), "--out", str(tmp_path / "league" / inside))
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert f"inside the league's {inside.split('/')[0]}/ folder" in res.stderr, res.stderr
        assert not (tmp_path / "league" / inside / "league.md").exists()


def _standing(name: str, rating: float, low: float, high: float) -> Standing:
    v = Version(1, name, "1", "ann", "python", "", 0.0, "active", "", {})
    return Standing(v, rating=rating, low=low, high=high, hands=96)


def test_ranks_are_ranges_while_intervals_overlap() -> None:
    # An examination found two copies of one bot ranked 1 and 2, the two swapping between
    # refits with nothing to say the pair was open. A rank is now the range the intervals allow.
    nan = math.nan
    s = [
        _standing("a", 150, 100, 200),
        _standing("b", 140, 90, 190),  # overlaps a: 1-2 both
        _standing("c", 0, -50, 50),  # apart from everyone
        _standing("d", -80, -120, -40),  # overlaps c (-40 > -50)
        _standing("e", -300, -math.inf, -130),  # one-sided, wholly below d
        _standing("f", nan, nan, nan),  # not rated
    ]
    assert rank_ranges(s) == ["1-2", "1-2", "3-4", "3-4", "5", ""]
    assert rank_ranges(s[2:3]) == ["1"]
    # a frame of one bot (its interval 'reference', no width) is placed like any other
    s = [_standing("r", 0, 0, 0), _standing("x", -500, -900, -100), _standing("y", 20, -10, 60)]
    assert rank_ranges(s) == ["1-2", "3", "1-2"]


def test_status_and_report_show_the_rank_ranges(tmp_path: Path) -> None:
    league = _league(tmp_path)
    store = Store.create(tmp_path / "league" / "play", {"tournament_id": "league"})
    rng = random.Random(7)
    try:
        v = {x.name: x for x in league.versions()}
        a, b, c, d = (server_name(v[n]) for n in "abcd")
        # a and b equal, c and d far below and apart
        elo = {a: 300.0, b: 300.0, c: 0.0, d: -400.0}
        _play(store, rng, [a, b, c, d], elo, 192)
        record_refit(league, fit_league(store, "last"))
    finally:
        store.close()
        league.close()
    folder = tmp_path / "league"
    res = _cli("status", str(folder))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert sorted(ln.split()[:2][1] for ln in lines[1:3]) == ["a@1", "b@1"]
    assert [ln.split()[0] for ln in lines[1:5]] == ["1-2", "1-2", "3", "4"], res.stdout
    assert _cli("report", str(folder)).returncode == 0
    out = folder / "report"
    rows = list(csv.DictReader(io.StringIO((out / "league.csv").read_text())))
    assert [r["ranks"] for r in rows] == ["1-2", "1-2", "3", "4"]
    assert [r["rank"] for r in rows] == ["1", "2", "3", "4"]
    data = json.loads((out / "league.json").read_text())
    assert [s["ranks"] for s in data["standings"]] == ["1-2", "1-2", "3", "4"]
    assert "| 1-2 |" in (out / "league.md").read_text()


def test_status_spells_out_a_recorded_reasons_escape_sequences(tmp_path: Path) -> None:
    """A refusal recorded before reasons were made printable (or by another tool) still reaches
    the terminal spelled out."""
    league = _league(tmp_path)
    try:
        league.record(
            name="esc",
            version="1",
            author="eve",
            language="python",
            folder="",
            manifest={"run": ["x"]},
            state="refused",
            reason="bot 'esc' failed to start: \x1b]0;pwned\x07\x1b[2J",
        )
    finally:
        league.close()
    res = _cli("status", str(tmp_path / "league"))
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert "failed to start: \\x1b]0;pwned\\x07\\x1b[2J" in res.stdout


def test_open_ends_are_strict_json_with_the_interval_spelled_out(tmp_path: Path) -> None:
    """A version rated on one side only has an infinite end: ``league.json`` and the page's
    ``/api/league`` carry it as null (strict JSON: a browser refuses ``Infinity``) and say in
    ``interval`` which end is open; a version not rated has no interval at all."""
    from collections import deque

    from uno_tournament.league.report import json_data, summarize
    from uno_tournament.league.web import _strict, standings_json

    league = _league(tmp_path)
    try:
        ids = {v.key: v.id for v in league.versions()}
        league.add_refit(
            96,
            [
                (ids["a@1"], 800.0, 785.2, math.inf, 48),
                (ids["b@1"], 12.0, -40.0, 64.0, 48),
                (ids["c@1"], -10.0, -70.0, 50.0, 48),
                (ids["d@1"], -800.0, -math.inf, -310.4, 48),
            ],
        )
        want = {"a@1": "[+785, +inf)", "b@1": "[-40, +64]", "c@1": "[-70, +50]"}
        want["d@1"] = "(-inf, -310]"
        report = json.loads(json.dumps(json_data(summarize(league, "L")), allow_nan=False))
        page = json.loads(_strict(standings_json(league, "L", {}, {"x": deque()})))
        for rows, key in ((report["standings"], "version"), (page["versions"], "key")):
            got = {r[key]: r for r in rows}
            assert {k: r["interval"] for k, r in got.items()} == want
            assert got["a@1"]["low"] == 785.2 and got["a@1"]["high"] is None
            assert got["d@1"]["low"] is None and got["d@1"]["high"] == -310.4
        # the tables' rating column gives the limit, not the prior's -800 or +800
        from uno_tournament.league.report import rows

        shown = {r[1]: r[5] for r in rows(summarize(league, "L"))}
        assert shown == {"a@1": "≥ +785", "b@1": "+12", "c@1": "-10", "d@1": "≤ -310"}, shown
        league.record(
            name="e",
            version="1",
            author="eve",
            language="python",
            folder="",
            manifest={"run": ["x"]},
            state="active",
        )
        page = json.loads(_strict(standings_json(league, "L", {}, {})))
        e = next(v for v in page["versions"] if v["key"] == "e@1")
        assert e["interval"] == "" and e["low"] is None and e["rating"] is None
    finally:
        league.close()


def test_report_files_replace_a_link_and_name_a_folder_in_their_place(tmp_path: Path) -> None:
    """As the tournament's reports: a link at a report's name is replaced, not written
    through to its target, and a folder there is one line naming the file."""
    league = _league(tmp_path)
    league.close()
    out = tmp_path / "r"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (out / "league.json").symlink_to(victim)
    (out / ".league.md.tmp").symlink_to(victim)  # the old fixed temporary name, planted
    res = _cli("report", str(tmp_path / "league"), "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == "precious\n"
    assert (out / "league.json").is_file() and not (out / "league.json").is_symlink()
    (out / "league.html").unlink()
    (out / "league.html").mkdir()
    res = _cli("report", str(tmp_path / "league"), "--out", str(out))
    line = res.stderr.strip()
    assert res.returncode == 2 and len(line.splitlines()) == 1, res.stderr
    assert "league.html: a folder is in its place; move it away" in line


def test_a_refusals_html_is_shown_not_rendered_in_the_markdown_report(tmp_path: Path) -> None:
    """A refused bot's log tail is a stranger's text; league.md had it raw, so a markdown
    viewer ran its <script> (league.html already escaped it)."""
    league = _league(tmp_path)
    league.record(
        name="xss",
        version="1",
        author="mallory",
        language="python",
        folder="",
        manifest={},
        state="refused",
        reason="bot 'xss' failed to start; last log lines: <script>alert(1)</script>",
    )
    league.close()
    out = tmp_path / "r"
    res = _cli("report", str(tmp_path / "league"), "--out", str(out))
    assert res.returncode == 0, res.stderr
    md = (out / "league.md").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md and "<script>" not in md
