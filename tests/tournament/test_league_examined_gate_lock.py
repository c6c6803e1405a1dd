"""``league submit`` builds a version before it takes the league's one submission lock: a build
of ``build_timeout_s = 7200`` (the most a manifest may ask) held that lock two hours, and every
other author's ``submit`` and ``token add`` waited. The per-author limits still hold: one
author's submissions are built one at a time, and the checks are made again, in the lock, with
the record. A SIGTERM during the build is a Ctrl-C: "interrupted; nothing is recorded", and the
copied folder is removed. The gate names the bot as the ladder will (``NAME.ID``), against
opponents named as the ladder's house bots."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.tournament.test_sandbox import _need_sandbox, _processes_with
from uno_tournament.league.ratings import server_name
from uno_tournament.league.store import LeagueStore

HELD = (
    "import os, sys, time\n"
    "open('building', 'w').close()\n"
    "for _ in range(3000):\n"  # at most 300 s: the test releases it long before
    "    if os.path.exists('release'):\n"
    "        break\n"
    "    time.sleep(0.1)\n"
)
SHOW = (
    "import os, runpy, sys\n"
    "print('bot name', os.environ.get('UNO_ARENA_BOT_NAME'), 'argv', sys.argv[1:],\n"
    "      file=sys.stderr, flush=True)\n"
    "sys.argv = ['heuristic_bot', *sys.argv[1:]]\n"
    "runpy.run_module('uno_bot.examples.heuristic_bot', run_name='__main__')\n"
)
RUN = ["{python}", "show.py", "--log-level", "warning", "--addr", "{addr}", "--name", "{name}"]
ENV = {**os.environ, "GRPC_VERBOSITY": "ERROR"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=ENV,
    )


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "league", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def _league(tmp_path: Path, limits: str = "") -> Path:
    league = tmp_path / "league"
    conf = tmp_path / "league.toml"
    conf.write_text(f"[league]\n{limits}\n")
    res = _cli("init", str(league), "--config", str(conf))
    assert res.returncode == 0, res.stderr
    return league


def _bot(folder: Path, name: str, author: str, *, held: str = "") -> Path:
    """A bot of the heuristic SDK bot, whose build (``held``: its marker) waits for a file
    ``release`` in its folder."""
    folder.mkdir(parents=True)
    (folder / "show.py").write_text(SHOW)
    fields: dict[str, object] = {"name": name, "version": "1", "author": author, "run": RUN}
    if held:
        (folder / "build.py").write_text(HELD)
        fields["build"] = ["{python}", "build.py", held]
    (folder / "bot.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()))
    return folder


def _building(league: Path, name: str, proc: subprocess.Popen[str]) -> Path:
    """Wait until the build of ``name`` runs; its folder in the league."""
    dest = league / "bots" / name / "1"
    deadline = time.monotonic() + 300
    while not (dest / "building").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return dest


def _versions(league: Path) -> list[tuple[str, str, str]]:
    store = LeagueStore.open(league)
    try:
        return [(v.name, v.author, v.state) for v in store.versions()]
    finally:
        store.close()


def test_a_long_build_holds_no_other_author_and_the_limits_are_checked_again(
    tmp_path: Path,
) -> None:
    _need_sandbox()
    league = _league(tmp_path, "max_bots_per_author = 1")
    marker = f"held-{uuid.uuid4().hex}"
    slow = _start("submit", str(league), str(_bot(tmp_path / "slow", "slow", "ann", held=marker)))
    dest = _building(league, "slow", slow)
    # while it builds, others are not held: a token of another author, and one of ann's own
    try:
        for name, author in (("bt", "bob"), ("at", "ann")):
            token = _start("token", "add", str(league), name, "--author", author)
            assert token.stderr is not None
            said = token.stderr.readline()  # "waiting: ..." had the build held the gate
            assert said.startswith(f"token for {name} ({author})"), said
            token.communicate(timeout=120)  # (and its pipes closed)
            assert token.returncode == 0
    except BaseException:
        slow.kill()
        raise
    assert slow.poll() is None and _processes_with(marker)  # still building
    (dest / "release").write_text("")
    out, err = slow.communicate(timeout=300)
    # the limit is checked again with the record: ann's token took her one place meanwhile
    assert slow.returncode == 2, (out, err)
    assert (
        err.strip().splitlines()[-1].startswith("uno-arena: ann: 1 bots in the ladder already (at)")
    ), err
    assert _versions(league) == []
    assert not dest.exists()


def test_one_authors_submissions_wait_for_each_other_and_keep_the_limit(tmp_path: Path) -> None:
    _need_sandbox()
    league = _league(tmp_path, "max_bots_per_author = 1")
    marker = f"held-{uuid.uuid4().hex}"
    slow = _start("submit", str(league), str(_bot(tmp_path / "slow", "slow", "ann", held=marker)))
    dest = _building(league, "slow", slow)
    # ann's second bot (no build) waits for her first, whose limit it would break
    quick = _start("submit", str(league), str(_bot(tmp_path / "quick", "quick", "Ann")))
    assert quick.stderr is not None
    first = quick.stderr.readline()
    assert first.startswith("waiting: another submission of Ann is being built or judged"), first
    assert slow.poll() is None and quick.poll() is None
    (dest / "release").write_text("")
    out, err = slow.communicate(timeout=600)
    assert slow.returncode == 0 and out.startswith("slow@1: accepted"), (out, err)
    out, err = quick.communicate(timeout=600)
    assert quick.returncode == 2, (out, err)
    assert "Ann: 1 bots in the ladder already (slow)" in err, err
    assert _versions(league) == [("slow", "ann", "active")]
    assert not (league / "bots" / "quick").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_submit_stopped_during_its_build_records_nothing(tmp_path: Path, sig: int) -> None:
    _need_sandbox()
    league = _league(tmp_path)
    marker = f"held-{uuid.uuid4().hex}"
    slow = _start("submit", str(league), str(_bot(tmp_path / "slow", "slow", "ann", held=marker)))
    dest = _building(league, "slow", slow)
    assert _processes_with(marker)
    slow.send_signal(sig)
    out, err = slow.communicate(timeout=300)
    assert slow.returncode == 130, (out, err)
    assert "slow@1: interrupted; nothing is recorded" in err, err
    assert "refused" not in out and "Traceback" not in err, (out, err)
    assert _versions(league) == []
    assert not dest.exists()
    deadline = time.monotonic() + 30
    while _processes_with(marker):  # the build is killed with it
        assert time.monotonic() < deadline, _processes_with(marker)
        time.sleep(0.1)


def test_the_gate_names_the_bot_and_its_opponents_as_the_ladder_does(tmp_path: Path) -> None:
    _need_sandbox()
    league = _league(tmp_path)
    res = _cli("submit", str(league), str(_bot(tmp_path / "shown", "shown", "ann")))
    assert res.returncode == 0, res.stdout + res.stderr
    store = LeagueStore.open(league)
    try:
        (v,) = store.versions()
    finally:
        store.close()
    ladder = server_name(v)  # NAME.ID, the name it plays under in the ladder
    log = (league / "gates" / "shown@1" / "logs" / f"{ladder}.log").read_text()
    assert f"bot name {ladder} argv" in log, log
    assert f"'--name', '{ladder}'" in log, log
    from uno_tournament.store import Store

    gate = Store.open(league / "gates" / "shown@1")
    try:
        seated = {s.bot for h in gate.hand_rows() for s in h.seats}
    finally:
        gate.close()
    assert seated == {ladder, "house-heuristic", "house-random", "house-blunders"}, seated
