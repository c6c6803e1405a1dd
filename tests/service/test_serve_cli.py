"""``uno-arena serve`` as a process: the bound port, config errors, SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

ADMIN = "admin-token-1234"


def _serve(*extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "serve",
            "--port",
            "0",
            "--admin-token",
            ADMIN,
            "--log-level",
            "warning",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _port(proc: subprocess.Popen[str]) -> int:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("uno-arena: serving on 127.0.0.1:"), line
    return int(line.rsplit(":", 1)[1])


def test_port_zero_prints_the_bound_port_and_sigterm_exits_cleanly() -> None:
    proc = _serve()
    try:
        port = _port(proc)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            admin = admin_pb2_grpc.AdminServiceStub(ch)
            md = (("authorization", f"Bearer {ADMIN}"),)
            req = admin_pb2.CreateMatchRequest(
                seats=[game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_RANDOM)] * 4,
                rules=game_pb2.RuleSet(target_score=100_000),  # runs until stopped
            )
            created = admin.CreateMatch(req, metadata=md)
            time.sleep(0.5)
            assert (
                admin.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=created.match.match_id), metadata=md
                ).match.state
                == admin_pb2.MATCH_STATE_RUNNING
            )
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopping" in out
        assert time.monotonic() - t0 < 20
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("[server]\nport = 'x'\n", "server.port: must be int"),
        ("[server]\nbogus = 1\n", "server.bogus: unknown setting"),
        ("[bots]\nalice = 'short'\n", "bots.alice"),
        ("[nope]\n", "unknown table [nope]"),
        ("not toml [", "not valid TOML"),
    ],
)
def test_bad_config_is_one_plain_line_and_a_nonzero_exit(
    tmp_path: Path, config: str, message: str
) -> None:
    path = tmp_path / "server.toml"
    path.write_text(config)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "serve",
            "--config",
            str(path),
            "--admin-token",
            ADMIN,
        ],
        capture_output=True,
        check=False,
        text=True,
        timeout=30,
        env={**os.environ},
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr


def test_match_command_seats_a_connected_bot_and_reports_the_hands() -> None:
    proc = _serve("--bot", "py-heuristic=py-secret-token")
    bot = None
    try:
        port = _port(proc)
        bot = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uno_bot.examples.heuristic_bot",
                "--addr",
                f"127.0.0.1:{port}",
                "--token",
                "py-secret-token",
                "--name",
                "py-heuristic",
                "--log-level",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        cmd = [
            sys.executable,
            "-m",
            "uno_server.cli",
            "match",
            "--server",
            f"127.0.0.1:{port}",
            "--admin-token",
            ADMIN,
            "--seats",
            "py-heuristic",
            "heuristic",
            "random",
            "heuristic",
            "--hands",
            "3",
        ]
        for _ in range(50):  # wait for the bot to connect
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
            if "not connected" not in res.stderr:
                break
            time.sleep(0.2)
        assert res.returncode == 0, res.stderr
        assert res.stdout.count("winner: seat") == 3
        assert "py-heuristic" in res.stdout.splitlines()[-4]
        bad = subprocess.run(
            [*cmd[:9], "nobody", "heuristic", "--hands", "1"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert bad.returncode == 2
        assert bad.stderr.count("\n") == 1 and "nobody" in bad.stderr
    finally:
        if bot is not None and bot.poll() is None:
            bot.terminate()
            bot.wait(timeout=10)
        if proc.poll() is None:
            proc.terminate()
        proc.communicate(timeout=30)  # also closes the pipes
