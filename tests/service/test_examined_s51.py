"""Examined (session 51): the TypeScript and Go quick-start bots of clients/*/README.md played a
card whenever they could but took the first PLAY action, never the variant that calls UNO with
it: every time they played down to one card a UNO window opened on them, the built-in bots
caught them at once, and they lost to ``random``. The quick starts now prefer the play that
calls UNO (as the Python quick start does).

Each test follows its README's quick start as tests/clients/test_out_of_tree_*.py do (its setup,
its bot, its build, in a folder outside the repository), plays single-hand matches against the
built-in bots with ``uno-arena match``, and reads every match's events as a spectator: the bot
called UNO with a play at least once, and no UNO window ever opened on it (it never played down
to one card without the call). A missing toolchain skips the test, except under CI=true.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import grpc

from tests.clients.test_out_of_tree_go import (
    ADMIN,
    ROOT,
    LiveServer,
    go_env,
    live_server,
    need,
    outside_repo,
    quick_start,
    readme_block,
    running,
    sh,
)
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc

HANDS = 12
BOT = "my-bot"


def check_calls_uno(server: LiveServer, bot_log: Path) -> None:
    """Play HANDS hands with the bot in seat 0 and check every one's events."""
    cli = Path(sys.executable).parent / "uno-arena"
    with grpc.insecure_channel(server.addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)
        md = (("authorization", f"Bearer {ADMIN}"),)
        res = subprocess.run(
            [str(cli), "match", "--server", server.addr, "--admin-token", ADMIN, "--seats", BOT,
             "heuristic", "random", "heuristic", "--hands", str(HANDS), "--seed", "5"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr + bot_log.read_text()[-3000:]
        infos = admin.ListMatches(
            admin_pb2.ListMatchesRequest(page_size=100, bot_name=BOT), metadata=md, timeout=10
        ).matches
        assert len(infos) == HANDS, infos
        called = opened = 0
        for info in infos:
            (seat,) = [s.seat for s in info.seats if s.player.bot_name == BOT]
            got = admin.AwaitMatch(
                admin_pb2.AwaitMatchRequest(match_id=info.match_id), metadata=md, timeout=30
            )
            assert not got.truncated
            for ev in got.events:
                kind = ev.WhichOneof("kind")
                if kind == "played" and ev.played.seat == seat and ev.played.uno:
                    called += 1
                if kind == "uno_window_opened" and ev.uno_window_opened.seat == seat:
                    opened += 1
    print(f"\n{BOT}: {HANDS} hands, UNO called with a play {called} times, missed {opened}")
    assert opened == 0, f"a UNO window opened on the bot {opened} times: it did not call UNO"
    assert called >= 1, "the bot never played down to one card: no hand tested the call"


def test_the_go_quick_start_bot_calls_uno(tmp_path: Path) -> None:
    need("go", "bash")
    tmp = outside_repo(tmp_path)
    env = go_env()
    env["GOWORK"] = "off"
    bot_dir = quick_start(tmp, env, go_work=False)
    token = "examined-go-token-1"
    with live_server(tmp, {BOT: token}) as server:
        bot_env = {**env, "UNO_ARENA_ADDR": server.addr, "UNO_ARENA_TOKEN": token}
        bot_log = tmp / "bot.log"
        with running([str(bot_dir / "my-bot")], bot_dir, bot_env, bot_log):
            wait_connected(server, bot_log)
            check_calls_uno(server, bot_log)


def test_the_typescript_quick_start_bot_calls_uno(tmp_path: Path) -> None:
    need("node", "npm", "bash")
    sdk = ROOT / "clients" / "typescript"
    readme = sdk / "README.md"
    tmp = outside_repo(tmp_path)
    clone = tmp / "clone"
    shutil.copytree(
        sdk,
        clone / "clients" / "typescript",
        ignore=shutil.ignore_patterns("node_modules", "dist", "*.tgz"),
    )
    setup = readme_block(readme, "setup")
    setup = re.sub(r"^UNO_ARENA=\S+", f"UNO_ARENA={clone}", setup, count=1, flags=re.M)
    env = {**os.environ, "npm_config_audit": "false", "npm_config_fund": "false"}
    work = tmp / "work"
    work.mkdir()
    sh(setup, work, env, "the README's setup")
    bot_dir = work / "my-bot"
    (bot_dir / "bot.ts").write_text(readme_block(readme, "bot.ts"))
    sh(readme_block(readme, "build"), bot_dir, env, "the README's compile")
    token = "examined-ts-token-1"
    with live_server(tmp, {BOT: token}) as server:
        bot_env = {**env, "UNO_ARENA_ADDR": server.addr, "UNO_ARENA_TOKEN": token}
        bot_log = tmp / "bot.log"
        with running(["node", "bot.js"], bot_dir, bot_env, bot_log):
            wait_connected(server, bot_log)
            check_calls_uno(server, bot_log)


def wait_connected(server: LiveServer, bot_log: Path) -> None:
    """Until the server lists the bot as connected (the bot's log is said if it never is)."""
    with grpc.insecure_channel(server.addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)
        md = (("authorization", f"Bearer {ADMIN}"),)
        deadline = time.monotonic() + 60  # only turns a bot that never connects into a failure
        while True:
            bots = admin.ListBots(admin_pb2.ListBotsRequest(), metadata=md, timeout=10).bots
            if any(b.bot_name == BOT and b.connected for b in bots):
                return
            assert time.monotonic() < deadline, f"{BOT} did not connect:\n{bot_log.read_text()}"
            time.sleep(0.2)
