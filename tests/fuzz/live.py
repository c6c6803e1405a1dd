"""A real ``uno-arena serve`` process and real SDK bot processes, for the fuzzers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc

ADMIN = "fuzz-admin-token-0001"


@dataclass
class Served:
    port: int
    proc: subprocess.Popen[str]
    bots: dict[str, str]  # name -> token
    channel: grpc.Channel
    admin: admin_pb2_grpc.AdminServiceStub

    md = (("authorization", f"Bearer {ADMIN}"),)

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def connected(self) -> set[str]:
        res = self.admin.ListBots(admin_pb2.ListBotsRequest(), metadata=self.md, timeout=10)
        return {b.bot_name for b in res.bots if b.connected}


@contextmanager
def serve(tmp: Path, bots: dict[str, str], **server: object) -> Iterator[Served]:
    """``uno-arena serve`` on a free port with a config file: [server] settings and [bots]."""
    lines = ["[server]", f'admin_token = "{ADMIN}"']
    for k, v in server.items():
        lines.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    lines.append("[bots]")
    lines += [f'{name} = "{token}"' for name, token in bots.items()]
    cfg = tmp / "server.toml"
    cfg.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "serve",
            "--config",
            str(cfg),
            "--port",
            "0",
            "--log-level",
            "error",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("uno-arena: serving on"), line
        port = int(line.rsplit(":", 1)[1])
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        yield Served(port, proc, bots, channel, admin_pb2_grpc.AdminServiceStub(channel))
        channel.close()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@contextmanager
def sdk_bots(served: Served, names: list[str], kind: str = "heuristic_bot") -> Iterator[None]:
    """Python SDK example bots, one process each, connected before this returns."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                f"uno_bot.examples.{kind}",
                "--addr",
                served.addr,
                "--token",
                served.bots[name],
                "--name",
                name,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        for name in names
    ]
    try:
        deadline = time.monotonic() + 300  # a hang, not a pace: a busy machine starts slowly
        while not set(names) <= served.connected():
            assert time.monotonic() < deadline, "the SDK bots did not connect"
            assert all(p.poll() is None for p in procs), "an SDK bot exited"
            time.sleep(0.1)
        yield
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
