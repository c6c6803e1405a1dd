"""A live ``uno-arena serve`` in a subprocess, and hands played there with an external bot.

Used by the out-of-tree SDK tests (tests/clients/test_out_of_tree_<lang>.py): they build a bot
outside the repository exactly as an SDK README says, start it against this server and check
the hands it played.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "out-of-tree-admin-token"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need_tools(*tools: str) -> None:
    """Skip when a tool is missing; under CI=true a missing tool is a failure instead."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        reason = f"toolchain not found: {', '.join(missing)}"
        if in_ci():
            pytest.fail(f"{reason} (CI=true: a missing toolchain is a failure)")
        pytest.skip(reason)


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 900) -> None:
    """Runs a build step; on failure the assertion shows the command and its last output."""
    res = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-40:])
    assert res.returncode == 0, f"`{' '.join(cmd)}` in {cwd} failed ({res.returncode}):\n{tail}"


def readme_files(readme: Path, folder: str) -> dict[str, str]:
    """The code blocks of a README whose first line names a file under ``folder/``.

    A block starting with ``# my-bot/Cargo.toml``, ``// my-bot/src/main.rs`` or
    ``<!-- my-bot/pom.xml -->`` is that file, exactly as a reader would copy it.
    """
    files: dict[str, str] = {}
    for body in re.findall(r"```[\w-]*\n(.*?)```", readme.read_text(), re.S):
        first = body.split("\n", 1)[0]
        m = re.match(rf"^(?:#|//|<!--)\s*{re.escape(folder)}/(\S+)", first)
        if m:
            files[m.group(1)] = body
    return files


def write_files(dest: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def outside_repo(path: Path) -> Path:
    assert not path.resolve().is_relative_to(ROOT), f"{path} must be outside the repository"
    return path


@dataclass
class LiveServer:
    proc: subprocess.Popen[str]
    port: int

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"


@contextmanager
def serve(bots: dict[str, str]) -> Iterator[LiveServer]:
    """``uno-arena serve --port 0`` with these bots (name: token); stopped with SIGTERM."""
    exe = Path(sys.executable).parent / "uno-arena"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "uno_server.cli"]
    cmd += ["serve", "--host", "127.0.0.1", "--port", "0", "--admin-token", ADMIN]
    cmd += ["--log-level", "warning", *(f"--bot={n}={t}" for n, t in bots.items())]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            port = 0
            deadline = time.monotonic() + 60
            while not port and time.monotonic() < deadline:
                if not sel.select(timeout=1):
                    continue
                line = proc.stdout.readline()
                if not line:
                    break
                if m := re.search(r"serving on [\d.]+:(\d+)", line):
                    port = int(m.group(1))
        assert port, f"uno-arena serve did not start (exit {proc.poll()})"
        yield LiveServer(proc, port)
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=15)  # drains and closes its output
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@contextmanager
def bot_process(cmd: list[str], cwd: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Starts a bot, logging to ``log``; SIGTERM at the end, and it must then exit 0."""
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("the bot did not stop within 15 s of SIGTERM") from None
        assert code == 0, f"the bot exited with {code} after SIGTERM:\n{log.read_text()[-3000:]}"


def play(
    server: LiveServer,
    bot_name: str,
    bot: subprocess.Popen[bytes],
    log: Path,
    hands: int = 20,
    parallel: int = 4,
) -> list[admin_pb2.MatchInfo]:
    """Plays ``hands`` single-hand matches, the bot in seat 0 against three built-in bots."""
    md = (("authorization", f"Bearer {ADMIN}"),)
    with grpc.insecure_channel(server.addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)

        def request(i: int) -> admin_pb2.CreateMatchRequest:
            return admin_pb2.CreateMatchRequest(
                seats=[
                    game_pb2.Player(bot_name=bot_name),
                    game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_HEURISTIC),
                    game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_RANDOM),
                    game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_HEURISTIC),
                ],
                seed=1000 + i,
                rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
                # far beyond a README bot's milliseconds: only a starved machine comes near
                # it, and the check is still 0 timeouts
                time_control=game_pb2.TimeControl(decision_ms=30_000),
            )

        def one(i: int, first: admin_pb2.CreateMatchResponse | None = None) -> admin_pb2.MatchInfo:
            created = first or admin.CreateMatch(request(i), metadata=md, timeout=10)
            mid = created.match.match_id
            for _ in admin.WatchMatch(
                admin_pb2.WatchMatchRequest(match_id=mid), metadata=md, timeout=300
            ):
                pass
            got = admin.GetMatch(admin_pb2.GetMatchRequest(match_id=mid), metadata=md, timeout=10)
            return got.match

        # The first match waits for the bot to connect (FAILED_PRECONDITION until it has).
        deadline = time.monotonic() + 60
        while True:
            if bot.poll() is not None:
                tail = log.read_text()[-3000:]
                raise AssertionError(f"the bot exited ({bot.returncode}):\n{tail}")
            try:
                first = admin.CreateMatch(request(0), metadata=md, timeout=10)
                break
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                assert time.monotonic() < deadline, "the bot did not connect within 60 s"
                time.sleep(0.2)
        with ThreadPoolExecutor(parallel) as pool:
            futures = [pool.submit(one, 0, first)]
            futures += [pool.submit(one, i) for i in range(1, hands)]
            return [f.result() for f in futures]


def check(infos: list[admin_pb2.MatchInfo], bot_name: str, hands: int = 20) -> None:
    """All hands finished; the bot in seat 0 had 0 timeouts, 0 rejections, no takeover."""
    finished = admin_pb2.MATCH_STATE_FINISHED
    unfinished = [(i.match_id, i.end_cause, i.end_message) for i in infos if i.state != finished]
    assert not unfinished, unfinished
    assert sum(i.hand_number for i in infos) == hands
    seats = [i.seats[0] for i in infos]
    assert all(s.player.bot_name == bot_name for s in seats)
    timeouts = sum(s.strikes for s in seats)
    rejected = sum(s.rejected_actions for s in seats)
    taken = sum(s.taken_over for s in seats)
    assert (timeouts, rejected, taken) == (0, 0, 0), (
        f"{bot_name}: {timeouts} timeouts, {rejected} rejected actions, {taken} takeovers"
    )
    assert sum(s.decisions for s in seats) > hands
