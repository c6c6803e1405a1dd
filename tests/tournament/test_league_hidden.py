"""What a stranger's bot in a league cannot see, even where a folder it may read holds it.

A league's folder holds its records (``league.sqlite`` with its ``-wal`` and ``-shm``, where the
newest rows are until a checkpoint), the gates, the hands and the logs, beside the bots' folders.
The sandbox shows a bot its own folder and the system's; an organiser's ``sandbox.paths`` or a
Python import path can still hold the league. Only ``league.sqlite``, ``gates`` and the running
bots' folders were covered: the ``-wal`` file, the hands, the logs and retired versions were
readable there.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest

from uno_tournament import sandbox
from uno_tournament.config import BotSpec, SandboxSpec
from uno_tournament.league.run import hidden_from_bot

CI = os.environ.get("CI") == "true"


def _league(root: Path) -> Path:
    league = root / "league"
    for rel in (
        "league.sqlite",
        "league.sqlite-wal",
        "league.sqlite-shm",
        "gates/b@1/tournament.sqlite",
        "play/tournament.sqlite-wal",
        "play/logs/other.log",
        "bots/other/1/secret.py",
        "bots/retired/1/secret.py",
        "bots/mine/0.9/secret.py",
        "bots/mine/1/bot.py",
    ):
        (league / rel).parent.mkdir(parents=True, exist_ok=True)
        (league / rel).write_text(f"SECRET {rel}\n" if "mine" not in rel else "mine\n")
    return league


def _bwrap() -> str:
    """bubblewrap's path, where every protection is there (a failure under CI=true)."""
    prot = sandbox.probe()
    missing = prot.missing(SandboxSpec())
    if missing:
        if CI:
            pytest.fail(f"sandbox protections missing under CI=true: {missing}")
        pytest.skip(f"sandbox protections missing on this machine: {missing[0]}")
    return str(prot.bwrap)


def _argv(
    bwrap: str, spec: BotSpec, probe: str, tmp_path: Path, hide: list[str | Path]
) -> list[str]:
    sock = tmp_path / "sock"
    sock.mkdir()
    return sandbox.bwrap_argv(
        bwrap, spec, ["sh", "-c", probe], port=5, socket_dir=str(sock), hide=[str(h) for h in hide]
    )


def test_a_strangers_bot_sees_its_own_folder_and_nothing_else_of_the_league(
    tmp_path: Path,
) -> None:
    bwrap = _bwrap()
    league = _league(tmp_path)
    own = league / "bots" / "mine" / "1"
    (tmp_path / "elsewhere").mkdir()  # another bot's folder outside the league (shared path)
    hide = hidden_from_bot(league, own, [tmp_path / "elsewhere", tmp_path / "gone"])
    assert str(tmp_path / "gone") not in map(str, hide)  # a folder no longer there is skipped
    assert str(tmp_path / "elsewhere") in map(str, hide)
    # the league folder itself holds the bot's own: the sandbox covers it whole and shows the
    # bot's folder again on top (next test); nothing else hidden holds the bot's own
    assert league in hide
    assert not any(own.is_relative_to(h) for h in hide if h != league)
    # the organiser shows the whole league folder (as a runtime path would): the worst case
    box = dataclasses.replace(SandboxSpec(), paths=(str(league),))
    spec = BotSpec(name="mine", command=("sh",), cwd=str(own), sandbox=box)
    probe = f"cat {own}/bot.py; find {league} -type f -exec cat {{}} + 2>/dev/null; true"
    argv = _argv(bwrap, spec, probe, tmp_path, hide)
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert "mine" in res.stdout, res.stdout + res.stderr  # its own folder is there
    assert "SECRET" not in res.stdout, res.stdout


def test_what_appears_in_the_league_while_a_bot_runs_stays_hidden(tmp_path: Path) -> None:
    """An examination submitted a version while a spy bot played, in a league inside a folder
    bots may read: the spy read the new version's files, because the covers were made for what
    existed when the bot started. The league folder is now covered whole. The spy waits for a
    file the test writes into its own folder after the new version is there (causality, not a
    sleep), then looks."""
    bwrap = _bwrap()
    league = _league(tmp_path)
    own = league / "bots" / "mine" / "1"
    hide = hidden_from_bot(league, own, [])
    box = dataclasses.replace(SandboxSpec(), paths=(str(tmp_path),))
    spec = BotSpec(name="mine", command=("sh",), cwd=str(own), sandbox=box)
    probe = (
        f"while [ ! -e {own}/go ]; do sleep 0.05; done; cat {own}/bot.py; "
        f"ls -a {league} {league}/bots {league}/bots/mine; "
        f"find {league} -type f -exec cat {{}} + 2>/dev/null; true"
    )
    argv = _argv(bwrap, spec, probe, tmp_path, hide)
    spy = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for rel in ("bots/victim/1/secret.py", "bots/mine/2/secret.py", "late.sqlite"):
            (league / rel).parent.mkdir(parents=True, exist_ok=True)
            (league / rel).write_text(f"SECRET {rel}\n")
        (own / "go").write_text("")
        out, err = spy.communicate(timeout=60)
    finally:
        spy.kill()
    assert "mine" in out, out + err  # its own folder, and the file written after it started
    assert "SECRET" not in out, out
    listed = out.split()
    for name in ("victim", "late.sqlite", "league.sqlite", "gates", "2", "0.9"):
        assert name not in listed, (name, out)
