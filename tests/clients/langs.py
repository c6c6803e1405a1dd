"""The example bot of every client language (toolchain, build and start commands), and a live
``uno-arena serve`` process with an admin client to seat bots and play hands.

Used by the live conformance tests, the out-of-tree tests and the cross-language chaos test. A
language whose toolchain is missing is skipped with the reason, except under CI=true, where a
missing toolchain is a failure (:func:`ready`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"


@dataclass(frozen=True)
class Lang:
    name: str
    tools: tuple[str, ...]
    build: tuple[tuple[str, ...], ...]  # commands run in the language folder
    folder: Path
    # What the build makes and what it is made from (globs under the folder): a build whose
    # output is newer than every input is not run again (`make test`'s clients-test has just
    # built it). Cargo and Go know that themselves, in a second.
    output: str = ""
    inputs: tuple[str, ...] = ()

    def up_to_date(self) -> bool:
        """Whether the build's output exists and is newer than every input."""
        outs = [f for f in self.folder.glob(self.output) if f.is_file()] if self.output else []
        if not outs:
            return False
        built = max(f.stat().st_mtime for f in outs)
        for pattern in self.inputs:
            for f in self.folder.glob(pattern):
                if f.is_file() and f.stat().st_mtime > built:
                    return False
        return True

    def missing(self) -> list[str]:
        return [t for t in self.tools if shutil.which(t) is None]

    def command(self, addr: str, token: str, bot_name: str, extra: Sequence[str] = ()) -> list[str]:
        """The example heuristic bot's command line; ``extra`` flags go last (e.g. the chaos
        flags ``--overrun-every N --overrun-ms MS`` every example bot accepts)."""
        args = ["--addr", addr, "--token", token, "--name", bot_name, *extra]
        if self.name == "python":
            return [sys.executable, "-m", "uno_bot.examples.heuristic_bot", *args]
        if self.name == "go":
            return [str(self.folder / "bin" / "heuristic-bot"), *args]
        if self.name == "typescript":
            return ["node", str(self.folder / "dist" / "src" / "bot.js"), *args]
        if self.name == "rust":
            args[1] = addr if "://" in addr else f"http://{addr}"
            return [str(self.folder / "target" / "release" / "heuristic-bot"), *args]
        if self.name == "java":
            jars = sorted((self.folder / "target").glob("*-jar-with-dependencies.jar"))
            jar = str(jars[-1]) if jars else str(self.folder / "target" / "missing.jar")
            return ["java", "-jar", jar, *args]
        raise ValueError(self.name)


LANGS: dict[str, Lang] = {
    "python": Lang("python", (), (), CLIENTS / "python"),
    "go": Lang("go", ("go",), (("go", "build", "-o", "bin/", "./cmd/..."),), CLIENTS / "go"),
    "typescript": Lang(
        "typescript",
        ("node", "npm"),
        (("npm", "ci", "--no-audit", "--no-fund"), ("npm", "run", "build")),
        CLIENTS / "typescript",
        output="dist/src/bot.js",
        inputs=("src/**/*", "package.json", "package-lock.json", "tsconfig.json"),
    ),
    "rust": Lang(
        "rust", ("cargo",), (("cargo", "build", "--release", "--locked"),), CLIENTS / "rust"
    ),
    "java": Lang(
        "java",
        ("java", "mvn"),
        (("mvn", "-q", "-B", "package", "-DskipTests"),),
        CLIENTS / "java",
        output="target/*-jar-with-dependencies.jar",
        inputs=("src/main/**/*", "pom.xml", "../../proto/uno/v1/*.proto"),
    ),
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def build(lang: Lang) -> None:
    if lang.up_to_date():
        print(f"\n{lang.name}: {lang.output} is newer than its sources: not built again")
        return
    for cmd in lang.build:
        res = subprocess.run(cmd, cwd=lang.folder, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-30:])
            raise RuntimeError(f"{lang.name}: `{' '.join(cmd)}` failed:\n{tail}")


_built: dict[str, str | None] = {}


def ready(name: str) -> Lang:
    """Build the language's example bot once per test session, or skip the test with the
    reason. Under CI=true a missing toolchain fails the test instead."""
    lang = LANGS[name]
    if name not in _built:
        missing = lang.missing()
        if missing:
            _built[name] = f"{name}: toolchain not found: {', '.join(missing)}"
        else:
            t0 = time.monotonic()
            build(lang)
            print(f"\n{name}: built in {time.monotonic() - t0:.1f} s")
            _built[name] = None
    reason = _built[name]
    if reason is not None:
        if in_ci():
            pytest.fail(f"{reason} (CI=true: a missing toolchain is a failure)")
        pytest.skip(reason)
    return lang


# ---------------------------------------------------------------------------- a live server

ADMIN = "live-admin-token-0001"


class Serve:
    """``uno-arena serve --port 0`` as a child process, with the given bot tokens."""

    def __init__(self, bots: dict[str, str], *extra: str) -> None:
        cmd = [sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"]
        cmd += ["--admin-token", ADMIN, "--log-level", "warning", *extra]
        for name, token in bots.items():
            cmd += ["--bot", f"{name}={token}"]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("uno-arena: serving on 127.0.0.1:"):
            self.stop()
            raise AssertionError(f"uno-arena serve did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])
        self.addr = f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class Admin:
    """An AdminService client of a live server (use inside a running event loop)."""

    def __init__(self, addr: str) -> None:
        self.channel = grpc.aio.insecure_channel(addr)
        self.stub = admin_pb2_grpc.AdminServiceStub(self.channel)
        self.md = (("authorization", f"Bearer {ADMIN}"),)

    async def close(self) -> None:
        await self.channel.close()

    async def wait_connected(
        self,
        names: Sequence[str],
        procs: Sequence[subprocess.Popen[bytes]] = (),
        timeout: float = 60,
    ) -> None:
        """Wait until every bot in ``names`` has a live session (ListBots)."""
        t0 = time.monotonic()
        while True:
            res = await self.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=self.md)
            live = {b.bot_name for b in res.bots if b.connected}
            if set(names) <= live:
                return
            for proc in procs:
                if proc.poll() is not None:
                    raise AssertionError(f"a bot exited with {proc.returncode}: {proc.args!r}")
            if time.monotonic() - t0 > timeout:
                raise AssertionError(f"bots {sorted(set(names) - live)} did not connect")
            await asyncio.sleep(0.1)

    async def create(
        self, req: admin_pb2.CreateMatchRequest, wait_s: float = 15
    ) -> admin_pb2.CreateMatchResponse:
        """CreateMatch, retried for up to ``wait_s`` while a seated bot is not connected (it
        may be reconnecting)."""
        t0 = time.monotonic()
        while True:
            try:
                res: admin_pb2.CreateMatchResponse = await self.stub.CreateMatch(
                    req, metadata=self.md
                )
                return res
            except grpc.aio.AioRpcError as err:
                retry = err.code() == grpc.StatusCode.FAILED_PRECONDITION and "not connected" in (
                    err.details() or ""
                )
                if not retry or time.monotonic() - t0 > wait_s:
                    raise
            await asyncio.sleep(0.1)

    async def play(
        self,
        seats: Sequence[str | int],
        matches: int,
        *,
        parallel: int = 4,
        seed: int = 1,
        decision_ms: int = 1000,
        reconnect_grace_ms: int = 0,
    ) -> list[admin_pb2.MatchInfo]:
        """Play ``matches`` single-hand matches with these seats (a bot name, or a
        game_pb2.BuiltinBot number) and return their final MatchInfo."""
        sem = asyncio.Semaphore(parallel)

        async def one(i: int) -> admin_pb2.MatchInfo:
            async with sem:
                tc = game_pb2.TimeControl(decision_ms=decision_ms)
                if reconnect_grace_ms:
                    tc.reconnect_grace_ms = reconnect_grace_ms
                req = admin_pb2.CreateMatchRequest(
                    seats=[
                        game_pb2.Player(bot_name=s)
                        if isinstance(s, str)
                        else game_pb2.Player(builtin=s)  # type: ignore[arg-type]
                        for s in seats
                    ],
                    seed=seed * 100_000 + i,
                    rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
                    time_control=tc,
                )
                created = await self.create(req)
                mid = created.match.match_id
                async for _ in self.stub.WatchMatch(
                    admin_pb2.WatchMatchRequest(match_id=mid), metadata=self.md
                ):
                    pass
                res = await self.stub.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=mid), metadata=self.md
                )
                return res.match

        return list(await asyncio.gather(*(one(i) for i in range(matches))))


def seat_totals(infos: Sequence[admin_pb2.MatchInfo], name: str) -> dict[str, int]:
    """Summed figures of the seats ``name`` held in these matches."""
    seats = [s for i in infos for s in i.seats if s.player.bot_name == name]
    return {
        "seats": len(seats),
        "decisions": sum(s.decisions for s in seats),
        "timeouts": sum(s.strikes for s in seats),
        "rejected": sum(s.rejected_actions for s in seats),
        "takeovers": sum(s.taken_over for s in seats),
    }
