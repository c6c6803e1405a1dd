"""A TOML file nested too deeply for Python's stack (``z = [[[...]]]`` 1,000 deep, 2 KiB, under
every size limit) was a RecursionError traceback with exit status 1 from every command that
reads one; 1 means "refused" for ``league submit``. Each is now one plain line naming the file,
exit status 2, and nothing is recorded or made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from uno_tournament.fileread import loads_toml

DEEP = "[" * 1000 + "]" * 1000


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )


def _one_line(res: subprocess.CompletedProcess[str], path: Path) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert str(path) in lines[0] and "nested too deeply" in lines[0], lines


def test_the_helper_makes_it_bad_toml() -> None:
    with pytest.raises(tomllib.TOMLDecodeError, match="nested too deeply"):
        loads_toml(f"z = {DEEP}\n")
    assert loads_toml("\ufeffa = [[1]]\n") == {"a": [[1]]}


def test_a_deep_manifest_is_one_line_and_nothing_is_recorded(tmp_path: Path) -> None:
    league = tmp_path / "league"
    assert _run("league", "init", str(league)).returncode == 0
    bot = tmp_path / "bot"
    bot.mkdir()
    fields = {"name": "deep", "version": "1", "author": "mallory", "run": ["{python}", "x.py"]}
    text = "\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items())
    (bot / "bot.toml").write_text(f"{text}\nz = {DEEP}\n")
    res = _run("league", "submit", str(league), str(bot))
    _one_line(res, bot / "bot.toml")
    assert not (league / "bots" / "deep").exists()
    from uno_tournament.league.store import LeagueStore

    store = LeagueStore.open(league)
    try:
        assert store.versions() == []
    finally:
        store.close()


def test_a_deep_league_config_makes_no_league(tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text(f"[league]\nz = {DEEP}\n")
    res = _run("league", "init", str(tmp_path / "L"), "--config", str(deep))
    _one_line(res, deep)
    assert not (tmp_path / "L").exists()


def test_a_deep_tournament_or_sandbox_config_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text(f"z = {DEEP}\n")
    _one_line(_run("sandbox", "check", "--config", str(deep)), deep)
    _one_line(_run("tournament", "run", str(deep), "--out", str(tmp_path / "out")), deep)
    assert not (tmp_path / "out").exists()


def test_a_deep_server_config_is_one_line(tmp_path: Path) -> None:
    from uno_server.service.main import ConfigError, load_config

    deep = tmp_path / "server.toml"
    deep.write_text(f"z = {DEEP}\n")
    with pytest.raises(ConfigError, match="nested too deeply") as err:
        load_config(str(deep))
    assert str(deep) in str(err.value) and len(str(err.value).splitlines()) == 1
    res = _run("serve", "--config", str(deep))
    _one_line(res, deep)
