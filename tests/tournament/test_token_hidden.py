"""A launched bot's token is never on a command line.

Every user of a machine can read every process's command line (``ps aux``, ``/proc/PID/cmdline``);
only the process's own user and root can read its environment. With another bot's token a
stranger on a shared class server takes that bot's seats and sees its hands. So the example
configs, the league's house bots and the docs give the token in ``UNO_ARENA_TOKEN`` only, a run
warns about a command that still names ``{token}``, and a league refuses a manifest that does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets
import socket
import time
from pathlib import Path

import pytest

from uno_tournament import procs
from uno_tournament.cli import example_config
from uno_tournament.config import BotSpec, load
from uno_tournament.league import submit

REPO = Path(__file__).resolve().parents[2]


def _with_token(pid: str, token: str) -> tuple[bool, bool]:
    """Whether process ``pid`` has ``token`` in its command line, and in its environment."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False, False
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        environ = b""
    return token.encode() in cmdline, f"UNO_ARENA_TOKEN={token}".encode() in environ


def _launch_and_look(spec: BotSpec, tmp_path: Path) -> tuple[list[str], list[str]]:
    """Launch ``spec`` against a listener that never answers; the pids whose command line holds
    the token, and the pids whose environment does (once the bot's own process is up)."""
    token = secrets.token_hex(24)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    addr = f"127.0.0.1:{listener.getsockname()[1]}"

    async def go() -> tuple[list[str], list[str]]:
        proc = procs.BotProcess(
            spec, token, addr, tmp_path / "logs", max_restarts=0, on_incident=lambda *a: None
        )
        await proc.start()
        try:
            deadline = time.monotonic() + 60
            while True:
                shown: list[str] = []
                given: list[str] = []
                for pid in (p for p in os.listdir("/proc") if p.isdigit()):
                    in_cmd, in_env = _with_token(pid, token)
                    if in_cmd:
                        shown.append(pid)
                    if in_env:
                        given.append(pid)
                # the bot itself (a Python interpreter running the example) has the token
                bot_up = any(
                    b"uno_bot.examples" in Path(f"/proc/{p}/cmdline").read_bytes()
                    for p in given
                    if Path(f"/proc/{p}").exists()
                )
                if bot_up or time.monotonic() > deadline:
                    return shown, given
                await asyncio.sleep(0.1)
        finally:
            await proc.stop(grace_s=1.0)
            listener.close()

    return asyncio.run(go())


def _example(name: str) -> BotSpec:
    cfg = load(example_config(), warn=lambda m: None)
    return next(b for b in cfg.bots if b.name == name)


def test_no_example_or_deployed_bot_command_names_the_token() -> None:
    cfg = load(example_config(), warn=lambda m: None)
    assert cfg.bots and procs.token_on_command_line(cfg.bots) == ""
    assert all(b.command for b in cfg.bots if b.name.startswith("py-"))
    assert "{token}" not in " ".join(submit.SDK_ARGS)
    for path in [
        REPO / "deploy" / "tournament" / "arena.toml",
        REPO / "deploy" / "k8s" / "config.yaml",
        REPO / "deploy" / "k8s" / "shards" / "tournament-shards.yaml",
        *(REPO / "tournament" / "uno_tournament" / "league" / "examples").glob("*/bot.toml"),
    ]:
        assert '"{token}"' not in path.read_text(), path


def test_a_command_naming_the_token_is_warned_about_by_name() -> None:
    spec = _example("py-random-card")
    named = dataclasses.replace(spec, command=(*spec.command, "--token", "{token}"))
    line = procs.token_on_command_line([spec, named, dataclasses.replace(named, name="other")])
    assert line.startswith("warning: py-random-card, other: the command names {token}")
    assert 'drop "--token", "{token}"' in line and "UNO_ARENA_TOKEN" in line


def test_a_launched_example_bot_gets_its_token_in_its_environment_only(tmp_path: Path) -> None:
    """The example bot, launched as a tournament launches it (sandbox as configured), is up with
    ``UNO_ARENA_TOKEN`` in its environment, and no process on the machine shows the token on
    its command line. The same bot given ``--token {token}`` shows it: the look is real."""
    spec = _example("py-random-card")
    shown, given = _launch_and_look(spec, tmp_path / "env")
    assert given, "the bot never came up with UNO_ARENA_TOKEN in its environment"
    assert shown == []
    named = dataclasses.replace(spec, command=(*spec.command, "--token", "{token}"))
    shown, given = _launch_and_look(named, tmp_path / "argv")
    assert given and shown, (given, shown)


@pytest.mark.parametrize("word", ["{token}", "--token={token}"])
def test_a_league_manifest_naming_the_token_is_refused(tmp_path: Path, word: str) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "b"\nversion = "1"\nauthor = "a"\n'
        f'run = ["{{python}}", "bot.py", "--addr", "{{addr}}", "{word}"]\n'
    )
    from uno_tournament.league.manifest import ManifestError, read_manifest

    with pytest.raises(ManifestError, match=r"run: names \{token\}, which would show"):
        read_manifest(folder)
