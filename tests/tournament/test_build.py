"""A bot's build step (``build = [...]``): confined as the bot is, with its own folder
writable, no network unless ``build_network``, a time limit, and a failure that stops the run
before any hand with one line naming the bot and its log's tail."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.tournament.test_sandbox import _need_sandbox, _processes_with
from uno_tournament.build import BuildError, build_bot
from uno_tournament.config import BotSpec, ConfigError, parse

GOOD = ["{python}", "-m", "uno_bot.examples.heuristic_bot", "--log-level", "warning"]
SDK = ["--addr", "{addr}", "--name", "{name}"]


def _spec(folder: Path, build: list[str], **extra: object) -> BotSpec:
    bot: dict[str, object] = {"name": "builder", "command": [*GOOD, *SDK], "cwd": str(folder)}
    bot["build"] = build
    bot.update(extra)
    fillers = [{"name": f"f{i}", "token": f"filler-token-{i}"} for i in range(3)]
    cfg = parse({"tournament": {"hands": 24}, "bots": [bot, *fillers]}, folder)
    return cfg.bots[0]


def _py(code: str) -> list[str]:
    return ["{python}", "-c", code]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"build": "make"}, "bots[0].build: must be a list of strings"),
        ({"build": []}, "bots[0].build: must be a list of strings"),
        ({"build": ["x", "{token}"]}, "bots[0].build: {token} is not known at build time"),
        ({"build": ["x"], "build_timeout_s": 0}, "bots[0].build_timeout_s: must be a number"),
        ({"build": ["x"], "build_timeout_s": 9000}, "from 1 to 7200"),
        ({"build": ["x"], "build_timeout_s": "10"}, "bots[0].build_timeout_s"),
        ({"build": ["x"], "build_network": "yes"}, "bots[0].build_network"),
    ],
)
def test_build_settings_are_validated_by_name(
    tmp_path: Path, extra: dict[str, object], message: str
) -> None:
    bot = {"name": "b", "command": ["x"], "cwd": str(tmp_path), **extra}
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse({"tournament": {"hands": 24}, "bots": [bot]}, tmp_path)


def test_a_build_needs_a_launched_bot(tmp_path: Path) -> None:
    bot = {"name": "b", "token": "external-token-1", "build": ["make"]}
    with pytest.raises(ConfigError, match=r"bots\[0\].build: only for a bot with a command"):
        parse({"tournament": {"hands": 24}, "bots": [bot]}, tmp_path)


def test_the_build_writes_its_own_folder_and_nothing_else(tmp_path: Path) -> None:
    _need_sandbox()
    own = tmp_path / "bot"
    own.mkdir()
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "secret.txt").write_text("other's strategy\n")
    run = own / "run"  # a run folder inside the bot's folder stays hidden
    run.mkdir()
    (run / "tournament.sqlite").write_text("results\n")
    code = (
        "import os, pathlib\n"
        "pathlib.Path('built.txt').write_text('ok')\n"
        "out = []\n"
        f"for p in ({str(other / 'secret.txt')!r}, {str(run / 'tournament.sqlite')!r}):\n"
        "    try:\n"
        "        open(p).read(); out.append('read ' + p)\n"
        "    except OSError: pass\n"
        f"for p in ({str(other / 'x')!r}, {str(run / 'x')!r}):\n"
        "    try:\n"
        "        open(p, 'w').write('x'); out.append('wrote ' + p)\n"
        "    except OSError: pass\n"
        "print('ESCAPES', out)\n"
        f"open({str(tmp_path / 'x')!r}, 'w').write('x')\n"
    )
    spec = _spec(own, _py(code))
    took = asyncio.run(build_bot(spec, tmp_path / "logs", hide=[run, other]))
    assert took > 0
    assert (own / "built.txt").read_text() == "ok"
    log = (tmp_path / "logs" / "builder.build.log").read_text()
    assert "ESCAPES []" in log, log
    assert not (other / "x").exists() and not (run / "x").exists()
    # the folder above is not the bot's: what the build writes there lands in its private /tmp
    assert not (tmp_path / "x").exists()


def test_the_build_has_no_network_unless_allowed(tmp_path: Path) -> None:
    _need_sandbox()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=5); print('NET', 'yes')\n"
        "except OSError as e:\n"
        "    print('NET', 'no', e)\n"
    )
    try:
        for allowed in (False, True):
            folder = tmp_path / f"net-{allowed}"
            folder.mkdir()
            spec = _spec(folder, _py(code), build_network=allowed)
            asyncio.run(build_bot(spec, folder / "logs"))
            log = (folder / "logs" / "builder.build.log").read_text()
            assert ("NET yes" in log) is allowed, (allowed, log)
    finally:
        listener.close()


def test_a_failing_build_names_the_bot_why_and_its_last_lines(tmp_path: Path) -> None:
    _need_sandbox()
    spec = _spec(tmp_path, _py("print('compiling'); print('error: no such crate'); exit(3)"))
    with pytest.raises(BuildError) as err:
        asyncio.run(build_bot(spec, tmp_path / "logs"))
    msg = str(err.value)
    assert msg.startswith("bot 'builder': its build failed (exited with status 3)"), msg
    assert "last lines: compiling | error: no such crate" in msg
    assert "builder.build.log" in msg


def test_a_build_that_hangs_is_killed_at_its_time_limit_with_all_it_started(
    tmp_path: Path,
) -> None:
    _need_sandbox()
    tag = f"uno-build-{uuid.uuid4().hex}"
    code = (
        "import os, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " start_new_session=True)\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    spec = _spec(tmp_path, _py(code), build_timeout_s=2, env={"UNO_TEST_TAG": tag})
    t0 = time.monotonic()
    with pytest.raises(
        BuildError, match=r"did not finish within 2 s \(bots\[\]\.build_timeout_s\)"
    ):
        asyncio.run(build_bot(spec, tmp_path / "logs"))
    assert time.monotonic() - t0 >= 2  # causality: not before its limit
    deadline = time.monotonic() + 30
    while _processes_with(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_with(tag) == []


def test_a_build_that_fills_the_disk_through_its_folder_is_stopped(tmp_path: Path) -> None:
    """The one folder a build may write is on the organiser's disk: an examination's build
    wrote 600 MiB there in 7 s, file by file under the file size limit, and was accepted. Past
    ``sandbox.build_disk_mb`` it is stopped, named, and the writing ends there."""
    _need_sandbox()
    code = (
        "import time\n"
        "for i in range(400):\n"
        "    with open(f'out{i}', 'wb') as f: f.write(b'x' * (1 << 20))\n"
        "    time.sleep(0.01)\n"
        "time.sleep(600)\n"
    )
    spec = _spec(tmp_path, _py(code), sandbox={"build_disk_mb": 20}, build_timeout_s=300)
    with pytest.raises(BuildError) as err:
        asyncio.run(build_bot(spec, tmp_path / "logs"))
    assert "its build wrote more than 20 MiB into the bot's folder" in str(err.value)
    assert "sandbox.build_disk_mb" in str(err.value)
    written = len(list(tmp_path.glob("out*")))
    # stopped at the limit, long before the build's end: 20 files of 1 MiB and their folder's
    # own blocks are already over 20 MiB (CI on a busy machine saw 20)
    assert 20 <= written < 400, written
    time.sleep(1.0)
    assert len(list(tmp_path.glob("out*"))) == written  # and nothing of it writes on


def test_a_build_within_its_disk_limit_is_not_stopped(tmp_path: Path) -> None:
    _need_sandbox()
    code = "open('out', 'wb').write(b'x' * (8 << 20))"
    spec = _spec(tmp_path, _py(code), sandbox={"build_disk_mb": 20})
    asyncio.run(build_bot(spec, tmp_path / "logs"))
    assert (tmp_path / "out").stat().st_size == 8 << 20


DEEP = (
    "import os\n"
    "for i in range(20):\n"
    "    os.mkdir('d' * 250)\n"
    "    os.chdir('d' * 250)\n"  # a path of 5,000 characters: past PATH_MAX by name
    "for i in range(6):\n"
    "    with open(f'out{i}', 'wb') as f: f.write(b'x' * (8 << 20))\n"
)


def test_a_build_writing_where_no_path_reaches_is_measured(tmp_path: Path) -> None:
    """An examination wrote 6 x 40 MiB at the bottom of 20 nested 250-character folders: the
    measure scanned by path, failed there (ENAMETOOLONG), skipped it, and the build passed a
    16 MiB limit with 241 MiB. Here 48 MiB below a 20 MiB limit: the build is refused, by the
    watch or by the measure at its end (it writes faster than one look)."""
    _need_sandbox()
    spec = _spec(tmp_path, _py(DEEP), sandbox={"build_disk_mb": 20}, build_timeout_s=300)
    with pytest.raises(BuildError) as err:
        asyncio.run(build_bot(spec, tmp_path / "logs"))
    assert "its build wrote more than 20 MiB into the bot's folder" in str(err.value), err.value


def test_a_build_that_writes_between_two_looks_is_measured_at_its_end(tmp_path: Path) -> None:
    """A build that writes past the limit and ends before the watch looks again (it looks every
    0.2 s) passed: the folder is measured once more when the build ends."""
    _need_sandbox()
    from uno_tournament import build as build_mod

    code = "open('out', 'wb').write(b'x' * (40 << 20))"
    spec = _spec(tmp_path, _py(code), sandbox={"build_disk_mb": 20})
    old = build_mod.DISK_POLL_S
    build_mod.DISK_POLL_S = 3600.0  # the watch never looks: only the end's measure can
    try:
        with pytest.raises(BuildError) as err:
            asyncio.run(build_bot(spec, tmp_path / "logs"))
    finally:
        build_mod.DISK_POLL_S = old
    assert "wrote more than 20 MiB" in str(err.value), err.value


def test_a_folder_that_cannot_be_read_stops_the_measure(tmp_path: Path) -> None:
    """A folder the walk cannot open is not skipped (the measure would pass what it holds)."""
    from uno_tournament.build import UnmeasuredError, folder_bytes

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_bytes(b"x" * 100_000)
    assert folder_bytes(tmp_path, None) >= 100_000
    deep = tmp_path / "deep"
    os.makedirs(deep)
    fd = os.open(deep, os.O_RDONLY)
    try:  # build the long path relative to descriptors, as the build above does
        for _ in range(20):
            os.mkdir("d" * 250, dir_fd=fd)
            nfd = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        wfd = os.open("big", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(wfd, b"y" * (1 << 20))
        os.close(wfd)
    finally:
        os.close(fd)
    assert folder_bytes(tmp_path, None) >= (1 << 20) + 100_000  # found at 5,000 characters
    if os.geteuid() != 0:  # root reads any folder: the refusal needs another user
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o000)
        try:
            with pytest.raises(UnmeasuredError):
                folder_bytes(tmp_path, None)
        finally:
            locked.chmod(0o755)


def _run_with_builds(
    tmp_path: Path, builds: list[list[str]], commands: list[list[str]] | None = None
) -> subprocess.CompletedProcess[str]:
    """``tournament run`` of four bots in ``tmp_path`` with these build commands."""
    bots = ""
    for i, build in enumerate(builds):
        command = commands[i] if commands else [*GOOD, *SDK]
        bots += (
            f'[[bots]]\nname = "b{i}"\ncommand = {json.dumps(command)}\n'
            f"cwd = {json.dumps(str(tmp_path))}\nbuild = {json.dumps(build)}\n"
        )
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        f'[tournament]\nname = "b"\nhands = 24\noutput = {json.dumps(str(tmp_path / "run"))}\n'
        + bots
    )
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "tournament", "run", str(cfg)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
        cwd=tmp_path,
    )


def test_a_failed_build_stops_the_run_before_any_hand(tmp_path: Path) -> None:
    """Through ``tournament run``: one line naming the bot, exit status non-zero, no hand."""
    _need_sandbox()
    builds = [_py("print('missing compiler'); exit(1)")] + [_py("exit(0)")] * 3
    res = _run_with_builds(tmp_path, builds)
    assert res.returncode != 0
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("uno-arena:")]
    assert len(errors) == 1, res.stderr[-3000:]
    assert (
        "bot 'b0': its build failed (exited with status 1); last lines: missing compiler"
        in errors[0]
    )
    db = sqlite3.connect(tmp_path / "run" / "tournament.sqlite")
    try:
        assert db.execute("SELECT count(*) FROM hands").fetchone()[0] == 0
    finally:
        db.close()


def test_builds_run_before_the_first_hand_and_say_so(tmp_path: Path) -> None:
    """Each bot starts only if its build's output is there (a bot started before its build
    would exit at once, and the run would fail)."""
    _need_sandbox()
    builds = [_py(f"open('stamp-{i}', 'w').write('{i}')") for i in range(4)]
    commands = [["sh", "-c", f'test -f stamp-{i} && exec "$0" "$@"', *GOOD, *SDK] for i in range(4)]
    res = _run_with_builds(tmp_path, builds, commands)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    for i in range(4):
        assert (tmp_path / f"stamp-{i}").read_text() == str(i)
        assert f"built b{i} in" in out


def test_a_build_logs_escape_sequences_are_spelled_out(tmp_path: Path) -> None:
    """A stranger's build writes the log whose last lines reach the organiser's terminal."""
    from uno_tournament.build import _tail

    log = tmp_path / "build.log"
    log.write_bytes(b"compiling\n\x1b]0;pwned\x07error: no such crate\n")
    assert _tail(log) == (
        f"last lines: compiling | \\x1b]0;pwned\\x07error: no such crate (log: {log})"
    )
