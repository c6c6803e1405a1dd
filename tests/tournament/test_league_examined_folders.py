"""A folder league found its bots' folders relative to the folder `league submit` ran in: a
`league run` started anywhere else (cron, a service, `cd /`) found none, and gave every
version up after its restarts (status 127), for good; a folder the organiser moved away did the
same. Now a folder league keeps ``bots/NAME/VERSION`` and finds it in the league folder, and a
missing folder stops the run with one line, the version left active (an examination)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.refusal import refused
from uno_tournament.league.cli import settings_from
from uno_tournament.league.run import built_folder
from uno_tournament.league.store import LeagueStore

from .test_league_run import RUN, _hands


def _league(tmp_path: Path) -> Path:
    league = tmp_path / "here" / "L"
    LeagueStore.create(league, settings_from(None)).close()
    for name, author in (("a", "ann"), ("b", "bob"), ("c", "cat"), ("d", "dan")):
        (league / "bots" / name / "1").mkdir(parents=True)
        store = LeagueStore.open(league)
        try:  # as the old `league submit L ...` run in tmp_path/here recorded it
            store.record(
                name=name,
                version="1",
                author=author,
                language="python",
                folder=f"L/bots/{name}/1",
                manifest={"run": RUN},
                state="active",
            )
        finally:
            store.close()
    return league


def _run(league: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", "run", str(league), "--hands", "24"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )


def _states(league: Path) -> dict[str, tuple[str, str]]:
    store = LeagueStore.open(league)
    try:
        return {v.key: (v.state, v.reason) for v in store.versions()}
    finally:
        store.close()


def test_built_folders_are_found_in_the_league_folder() -> None:
    league = Path("/srv/league")
    assert built_folder(league, "bots/a/1") == league / "bots/a/1"  # what submit keeps now
    assert built_folder(league, "my-league/bots/a/1") == league / "bots/a/1"  # as typed before
    assert built_folder(league, "/shared/L/bots/a/1") == Path("/shared/L/bots/a/1")  # PostgreSQL


def test_a_league_runs_from_any_folder_and_a_missing_bot_folder_gives_no_one_up(
    tmp_path: Path,
) -> None:
    league = _league(tmp_path)
    res = _run(league, Path("/"))  # not where the versions were submitted
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(_hands(league)) == 24
    assert {s for s, _ in _states(league).values()} == {"active"}, _states(league)
    # its play folder is a league's: verify failed every hand against a tournament's schedule,
    # and report and resume wrote a tournament's files into it
    for cmd in ("verify", "report", "resume"):
        line = refused("tournament", cmd, str(league / "play"))
        assert f"is the play folder of the league {league}, not a tournament" in line, line
    assert not (league / "play" / "results.json").exists()
    shutil.move(str(league / "bots" / "d" / "1"), str(tmp_path / "moved"))
    res = _run(league, Path("/"))
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "d@1: its built folder" in lines[0], res.stderr[-3000:]
    assert "is missing; put it back" in lines[0] and "league retire" in lines[0]
    assert _states(league)["d@1"] == ("active", ""), _states(league)
