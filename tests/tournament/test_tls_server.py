"""The organiser's tools against a server that speaks TLS (``serve --tls-cert/--tls-key``):
`uno-arena match` and `tournament run --server` opened plaintext channels only and failed with
gRPC's "Socket closed", never naming TLS (an examination). With ``--tls-ca`` they verify the
server against that CA and play; the launched bots take the SDK's own ``--ca-file``. And a
client that fails its handshake no longer writes a line of gRPC's core to the server's log."""

from __future__ import annotations

import argparse
import socket
import subprocess
import time
from pathlib import Path
from typing import IO

import pytest

from tests.refusal import refused
from tests.service.test_tls import _self_signed
from uno_tournament import cli

from .helpers import bot_entry, write_config
from .test_resume import _cli

ADMIN = "admin-token-for-tls"
BOTS = ["h0", "h1", "h2", "h3"]


def _serve(tmp: Path, cert: Path, key: Path, err: IO[str]) -> tuple[subprocess.Popen[str], str]:
    bots = [a for b in BOTS for a in ("--bot", f"{b}=token-of-{b}")]
    srv = subprocess.Popen(
        _cli(
            "serve",
            "--port",
            "0",
            "--admin-token",
            ADMIN,
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
            *bots,
        ),
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
    )
    assert srv.stdout is not None
    line = srv.stdout.readline().strip()
    assert line.startswith("uno-arena: serving on "), line
    return srv, line.rsplit(" ", 1)[-1]


def test_match_and_a_tournament_reach_a_tls_server_with_its_ca(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    log = tmp_path / "server.err"
    err = log.open("w")
    srv, addr = _serve(tmp_path, cert, key, err)
    try:
        port = int(addr.rsplit(":", 1)[1])
        played = subprocess.run(
            _cli(
                "match",
                "--server",
                f"127.0.0.1:{port}",
                "--admin-token",
                ADMIN,
                "--tls-ca",
                str(cert),
                "--seats",
                "random",
                "heuristic",
                "--hands",
                "2",
            ),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert played.returncode == 0, played.stdout + played.stderr
        bad = refused(
            "match",
            "--server",
            f"127.0.0.1:{port}",
            "--admin-token",
            ADMIN,
            "--tls-ca",
            str(tmp_path / "none.pem"),
            "--seats",
            "random",
            "heuristic",
        )
        assert "--tls-ca" in bad and "not a file" in bad
        bots = [
            f'[[bots]]\nname = "{b}"\ntoken = "token-of-{b}"\ncommand = ["{{python}}", "-m", '
            '"uno_bot.examples.heuristic_bot", "--log-level", "warning", "--addr", "{addr}", '
            f'"--name", "{{name}}", "--ca-file", "{cert}"]\n'
            for b in BOTS
        ]
        cfg = write_config(tmp_path, bots, name="tls", concurrency=4)
        run = subprocess.run(
            _cli(
                "tournament",
                "run",
                str(cfg),
                "--quiet",
                "--server",
                f"127.0.0.1:{port}",
                "--admin-token",
                ADMIN,
                "--tls-ca",
                str(cert),
            ),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert "24 of 24 hands" in run.stdout or "24 hands" in run.stdout, run.stdout[-2000:]
        # handshakes that fail: nothing of gRPC's core in the server's log for them
        before = log.read_text().count("\n")
        for _ in range(50):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"GET / HTTP/1.1\r\n\r\n")
                s.settimeout(2)
                try:
                    s.recv(100)
                except OSError:
                    pass
        time.sleep(0.5)  # the server's log is its own process's: give it a moment to write
        text = log.read_text()
        assert "Handshake failed" not in text, text[-2000:]
        assert text.count("\n") - before < 5, text[-2000:]
    finally:
        srv.terminate()
        srv.wait(timeout=60)
        if srv.stdout is not None:
            srv.stdout.close()
        err.close()


def test_tls_ca_needs_a_server(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)], name="t")
    line = refused("tournament", "run", str(cfg), "--tls-ca", "system")
    assert "--tls-ca is for a running server: give --server too" in line


def test_admin_token_needs_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An admin token given on the command line without --server used to be ignored in
    silence (the run played on an embedded server); the environment's token is not an error."""
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)], name="t")
    line = refused("tournament", "run", str(cfg), "--admin-token", "x" * 32)
    assert "--admin-token is for a running server: give --server too" in line
    line = refused("tournament", "resume", str(tmp_path / "nowhere"), "--admin-token", "x")
    assert "--admin-token is for a running server" in line
    monkeypatch.setenv("UNO_ARENA_ADMIN_TOKEN", "from-the-environment")
    args = argparse.Namespace(admin_token=None, server=None, metrics_port=None)
    cli._check_metrics(args)  # no --server: the environment's token is not an error
    args = argparse.Namespace(admin_token=None, server="127.0.0.1:1", metrics_port=None)
    cli._check_metrics(args)
    assert args.admin_token == "from-the-environment"
