"""An examination of operating the service (session 51): a retired bot's Prometheus series go
with it (``ServiceMetrics.remove_bot``); a Unix socket another server listens on is refused
before the start, and the start names the socket; ``uno-arena match`` keeps the hands and the
summary when the server shuts down under it; a second Ctrl-C during the drain stops the server
now, and says so.

The processes are ordered by what they print and by the server's own state (its watchers gauge,
a request the test's bot holds), never by sleeping."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.service.rawbot import RawBot, first_legal
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, game_pb2
from uno_server.service import matchcli
from uno_server.service.main import ConfigError, _check_unix_socket
from uno_server.service.metrics import ServiceMetrics

ADMIN = "admin-token-s51-1234"
BOT, BOT_TOKEN = "slow", "slow-bot-token-s51"


def _env() -> dict[str, str]:
    """This environment without UNO_* variables (no admin token from outside)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("UNO_")}


# ---- 1. a retired bot's series go with it


def _series(m: ServiceMetrics) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    """Every sample of the exposition (what Prometheus scrapes), in order."""
    text = generate_latest(m.registry).decode()
    return [
        (s.name, tuple(sorted(s.labels.items())), s.value)
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    ]


def _of(m: ServiceMetrics, bot: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    return [s for s in _series(m) if ("bot", bot) in s[1]]


def _play(m: ServiceMetrics, bot: str) -> None:
    """Some samples of every kind a bot gets, beyond the zeros add_bot creates."""
    m.decision_latency.labels(bot).observe(0.02)
    m.timeouts.labels(bot).inc()
    m.illegal.labels(bot, "illegal_action").inc()
    m.late.labels(bot, "stale_request").inc(2)
    m.count_stream_error(bot, "transport")
    m.disconnects.labels(bot).inc()
    m.takeovers.labels(bot, "strikes").inc()


def test_remove_bot_removes_every_series_of_the_bot_and_no_other() -> None:
    m = ServiceMetrics(process=False)
    m.add_bot("stay")
    m.add_bot("gone")
    _play(m, "stay")
    _play(m, "gone")
    stay = _of(m, "stay")
    families = {name for name, _, _ in _of(m, "gone")}
    assert len(families) >= 8, families  # every per-bot metric has series of it
    m.remove_bot("gone")
    assert _of(m, "gone") == []
    assert _of(m, "stay") == stay  # the other bot's series, values and all
    m.remove_bot("gone")  # again, and a bot that never had a series: nothing happens
    m.remove_bot("never-registered")
    assert _of(m, "stay") == stay


def test_a_removed_bots_late_counts_do_not_bring_its_series_back() -> None:
    """Its stream may end after it was retired: the disconnect and a transport error it counts
    then were a few series born again per retired bot, as unbounded as before."""
    m = ServiceMetrics(process=False)
    m.add_bot("gone")
    m.remove_bot("gone")
    _play(m, "gone")
    assert _of(m, "gone") == []
    m.add_bot("gone")  # registered again: its series are back, at zero
    back = _of(m, "gone")
    assert back and all(value == 0 for name, _, value in back if not name.endswith("_created"))


def test_register_retire_cycles_leave_the_page_as_it_was() -> None:
    """``league run`` registers and retires bots on a standing server: 1000 cycles made a
    742-line page 201,742 lines long (15.8 MB)."""
    m = ServiceMetrics(process=False)
    m.add_bot("house")
    _play(m, "house")
    start = generate_latest(m.registry)
    for i in range(200):
        name = f"v{i}"
        m.add_bot(name)
        _play(m, name)
        m.remove_bot(name)
    end = generate_latest(m.registry)
    assert len(end) == len(start)
    assert end == start


# ---- 2. a Unix socket a server listens on is not taken over


def test_a_listening_unix_socket_is_refused_and_a_stale_one_is_replaced(tmp_path: Path) -> None:
    path = str(tmp_path / "server.sock")
    _check_unix_socket(path)  # no file: free
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(1)
        with pytest.raises(ConfigError) as info:
            _check_unix_socket(path)
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith("server.unix_socket: another server listens on "), line
    assert "--unix-socket" in line
    assert os.path.exists(path)  # closed without unlinking: a stale file, as a killed server's
    _check_unix_socket(path)  # refuses connections: replaced, as before


def _serve(*extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"),
            *("--admin-token", ADMIN, "--log-level", "warning", *extra),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )


@pytest.fixture
def first_server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path, list[str]]]:
    sock = tmp_path / "server.sock"
    proc = _serve("--unix-socket", str(sock), "--metrics-port", "0")
    assert proc.stdout is not None
    lines = [proc.stdout.readline().strip()]
    while "metrics on" not in lines[-1]:  # the start's last line
        lines.append(proc.stdout.readline().strip())
        assert lines[-1], lines  # not the end of its output
    try:
        yield proc, sock, lines
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def _list_bots(sock: Path) -> list[str]:
    with grpc.insecure_channel(f"unix:{sock}") as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)
        res = admin.ListBots(
            admin_pb2.ListBotsRequest(),
            metadata=(("authorization", f"Bearer {ADMIN}"),),
            timeout=30,
        )
        return list(res.bots)


def test_a_second_server_on_a_running_servers_unix_socket_is_refused(
    first_server: tuple[subprocess.Popen[str], Path, list[str]],
) -> None:
    proc, sock, lines = first_server
    # the start names the socket, in a line of its own: the first still ends with the port,
    # as the tools that read it expect
    assert re.fullmatch(r"uno-arena: serving on 127\.0\.0\.1:\d+", lines[0]), lines
    assert lines[1] == f"uno-arena: also serving on the Unix socket {sock}", lines
    assert len(lines) == 3, lines
    assert _list_bots(sock) == []
    second = subprocess.run(
        [
            *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"),
            *("--admin-token", ADMIN, "--unix-socket", str(sock)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(),
    )
    errs = second.stderr.strip().splitlines()
    assert second.returncode == 2 and len(errs) == 1, (second.stdout, second.stderr[-2000:])
    assert errs[0] == (
        f"uno-arena: --unix-socket: another server listens on {sock}; stop it, or give another path"
    )
    assert "serving on" not in second.stdout
    assert proc.poll() is None
    assert sock.exists() and _list_bots(sock) == []  # the first still serves there


# ---- 3. and 4. `match` when the server shuts down; a second Ctrl-C during the drain


@dataclass
class Gate:
    """The policy of the test's bot: answers every required request (the last legal id) while
    open; while shut, holds them, so the hand in play waits for the test."""

    shut: bool = False
    held: asyncio.Queue[bot_pb2.DecisionRequest] = field(default_factory=asyncio.Queue)

    def policy(self, dr: bot_pb2.DecisionRequest) -> int | None:
        if not dr.required:
            return None
        if self.shut:
            self.held.put_nowait(dr)
            return None
        return first_legal(dr)


@dataclass
class Stage:
    server: asyncio.subprocess.Process
    addr: str
    metrics_url: str
    bot: RawBot
    gate: Gate

    async def line(self) -> str:
        assert self.server.stdout is not None
        return (await asyncio.wait_for(self.server.stdout.readline(), 120)).decode().strip()

    async def watchers(self) -> float:
        def read() -> float:
            with urllib.request.urlopen(self.metrics_url, timeout=30) as res:
                text = res.read().decode()
            found = re.search(r"^uno_watchers (\S+)$", text, re.M)
            assert found is not None
            return float(found[1])

        return await asyncio.to_thread(read)


@contextlib.asynccontextmanager
async def stage(tmp_path: Path, drain_timeout_s: int) -> AsyncIterator[Stage]:
    """A server (its drain ``drain_timeout_s``) with the test's bot connected."""
    cfg = tmp_path / "server.toml"
    cfg.write_text(
        f'[server]\ndrain_timeout_s = {drain_timeout_s}\n[bots]\n{BOT} = "{BOT_TOKEN}"\n'
    )
    server = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0", "--metrics-port", "0"),
        *("--admin-token", ADMIN, "--config", str(cfg), "--log-level", "warning"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=_env(),
    )
    gate = Gate()
    bot: RawBot | None = None
    try:
        assert server.stdout is not None
        first = (await asyncio.wait_for(server.stdout.readline(), 120)).decode().strip()
        assert first.startswith("uno-arena: serving on 127.0.0.1:"), first
        addr = first.rsplit(" ", 1)[1]
        second = (await asyncio.wait_for(server.stdout.readline(), 120)).decode().strip()
        found = re.search(r"metrics on (http://\S+)", second)
        assert found is not None, second
        bot = RawBot(int(addr.rsplit(":", 1)[1]), BOT, BOT_TOKEN, policy=gate.policy).start()
        await asyncio.wait_for(bot.welcomed.wait(), 60)
        yield Stage(server, addr, found[1], bot, gate)
    finally:
        if bot is not None:
            await bot.stop()
        if server.returncode is None:
            server.kill()
        await server.wait()


async def _match(st: Stage) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "uno_server.cli", "match", "--server", st.addr),
        *("--admin-token", ADMIN, "--seats", BOT, "heuristic", "--hands", "1000"),
        *("--decision-ms", "600000"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(),
    )


async def _hold_a_hand(st: Stage, match: asyncio.subprocess.Process) -> tuple[str, str]:
    """Once a hand has been played: hold the bot's next required request, and wait until
    `match` watches that hand. The first hand's line (read from `match`) and the held hand's
    match id."""
    assert match.stdout is not None
    first = (await asyncio.wait_for(match.stdout.readline(), 120)).decode()
    assert first.startswith("hand   1  "), first
    st.gate.shut = True
    held = await asyncio.wait_for(st.gate.held.get(), 120)

    async def watched() -> None:
        # `match` created this hand's match, then calls WatchMatch: the gauge went to 0 when
        # the previous hand's stream ended (before `match` created this one)
        while await st.watchers() != 1:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(watched(), 120)
    st.gate.held.put_nowait(held)
    return first.rstrip("\n"), str(held.match_id)


def _hands(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith("hand ")]


def _wins(out: str) -> int:
    rows = out.strip().splitlines()[-2:]  # the summary's seat rows, the output's last lines
    return sum(int(row.split()[2]) for row in rows)


@pytest.mark.asyncio
async def test_match_keeps_the_hand_the_server_finished_in_its_drain(tmp_path: Path) -> None:
    """SIGTERM with a hand in play: the server finishes the hand and exits. `match` fetched
    the result with a second call, to a server gone by then: "UNAVAILABLE ... Connection
    refused", exit 2, and no summary."""
    async with stage(tmp_path, drain_timeout_s=600) as st:
        match = await _match(st)
        try:
            first, held_match = await _hold_a_hand(st, match)
            st.server.send_signal(signal.SIGTERM)
            assert (await st.line()).startswith("uno-arena: stopping: no new matches")
            held = st.gate.held.get_nowait()
            st.gate.shut = False  # the hand goes on, in the drain, to its end
            st.bot.answer(held.request_id, first_legal(held))
            out_b, err_b = await asyncio.wait_for(match.communicate(), 120)
            assert await asyncio.wait_for(st.server.wait(), 120) == 0
        finally:
            if match.returncode is None:
                match.kill()
                await match.wait()
    out, err = out_b.decode(), err_b.decode()
    hands = [first, *_hands(out)]
    assert hands and held_match in hands[-1] and "winner: seat" in hands[-1], out[-2000:]
    assert _wins(out) == len(hands)  # the summary counts every hand, the last one too
    n, rest = len(hands), 1000 - len(hands)
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(
        r"uno-arena: the server (shut down|shut down or went away \(connections to it are "
        r"refused\)): "
        rf"{n} of 1000 hands played; to play the other {rest}, run match again with "
        rf"--hands {rest} --seed {1 + n}",
        last,
    ), err[-2000:]
    assert match.returncode == 0, err[-2000:]  # no hand was lost


@pytest.mark.asyncio
async def test_a_second_ctrl_c_stops_now_and_match_says_the_last_hand_ended_by_it(
    tmp_path: Path,
) -> None:
    """Ctrl-C twice: the second stops the server without waiting for the drain (here an hour,
    and the bot holds its answer): the hand in play ends as shut down, at once. It was
    ignored, silently."""
    async with stage(tmp_path, drain_timeout_s=3600) as st:
        match = await _match(st)
        try:
            first, held_match = await _hold_a_hand(st, match)
            st.server.send_signal(signal.SIGINT)
            stopping = await st.line()
            assert stopping == (
                "uno-arena: stopping: no new matches; finishing hands in play "
                "(Ctrl-C again: stop now)"
            ), stopping
            st.server.send_signal(signal.SIGINT)
            assert await st.line() == "uno-arena: stopping now: the hands in play end as shut down"
            assert await asyncio.wait_for(st.server.wait(), 120) == 0
            out_b, err_b = await asyncio.wait_for(match.communicate(), 120)
        finally:
            if match.returncode is None:
                match.kill()
                await match.wait()
    assert st.gate.held.qsize() == 1  # the bot never answered: the shutdown ended the hand
    out, err = out_b.decode(), err_b.decode()
    hands = [first, *_hands(out)]
    assert hands[-1].endswith(f"{held_match}  ended by the server's shutdown"), out[-2000:]
    n = len(hands) - 1  # hands played to their end
    assert _wins(out) == n
    rest = 1000 - n
    assert err.strip().splitlines()[-1] == (
        f"uno-arena: the server shut down: {n} of 1000 hands played; the last, hand {n + 1}, "
        f"ended by the shutdown; to play the other {rest}, run match again with --hands {rest} "
        f"--seed {1 + n}"
    ), err[-2000:]
    assert match.returncode == 1  # a hand was lost to the shutdown


# ---- 3. `match` reads the end from the stream it already has


def _unavailable() -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(),
        details="failed to connect to all addresses; Connection refused",
    )


class _Admin:
    """WatchMatch answers the snapshot, one event and the final MatchInfo; the server is gone
    for every other call."""

    def __init__(self, final: admin_pb2.MatchInfo) -> None:
        self.final = final
        self.calls: list[str] = []

    def WatchMatch(self, req: admin_pb2.WatchMatchRequest, **_: object) -> AsyncIterator[object]:  # noqa: N802
        self.calls.append("WatchMatch")

        async def stream() -> AsyncIterator[admin_pb2.WatchMatchResponse]:
            running = admin_pb2.MatchInfo(
                match_id=req.match_id, state=admin_pb2.MATCH_STATE_RUNNING
            )
            yield admin_pb2.WatchMatchResponse(match=running)
            yield admin_pb2.WatchMatchResponse(event=game_pb2.Event(sequence=1))
            yield admin_pb2.WatchMatchResponse(match=self.final)

        return stream()

    async def GetMatch(self, req: object, **_: object) -> admin_pb2.GetMatchResponse:  # noqa: N802
        self.calls.append("GetMatch")
        raise _unavailable()


@pytest.mark.asyncio
async def test_the_end_comes_from_the_watch_stream_not_a_second_call() -> None:
    final = admin_pb2.MatchInfo(
        match_id="m-1",
        state=admin_pb2.MATCH_STATE_FINISHED,
        end_cause=game_pb2.END_CAUSE_COMPLETED,
        winners=[1],
        totals=[0, 57],
    )
    admin = _Admin(final)
    got = await matchcli._follow(admin, "m-1", ())  # type: ignore[arg-type]
    assert got == final
    assert admin.calls == ["WatchMatch"]


class _BrokenAdmin(_Admin):
    """The stream breaks off after the snapshot: the server went away with the hand."""

    def WatchMatch(self, req: admin_pb2.WatchMatchRequest, **_: object) -> AsyncIterator[object]:  # noqa: N802
        self.calls.append("WatchMatch")

        async def stream() -> AsyncIterator[admin_pb2.WatchMatchResponse]:
            yield admin_pb2.WatchMatchResponse(
                match=admin_pb2.MatchInfo(
                    match_id=req.match_id, state=admin_pb2.MATCH_STATE_RUNNING
                )
            )
            raise _unavailable()

        return stream()


@pytest.mark.asyncio
async def test_a_hand_whose_end_never_came_is_lost_and_said_so() -> None:
    admin = _BrokenAdmin(admin_pb2.MatchInfo())
    with pytest.raises(matchcli.ServerGoneError) as info:
        await matchcli._follow(admin, "m-7", ())  # type: ignore[arg-type]
    assert admin.calls == ["WatchMatch", "GetMatch"]  # asked once more, to no one
    assert not info.value.shut_down
    stopped = matchcli.Stopped(6, str(info.value), info.value.shut_down, lost=True)
    assert matchcli.stopped_line(stopped, 10, 1) == (
        "the server shut down or went away (connections to it are refused): 6 of 10 hands "
        "played; the result of hand 7 is lost; to play the other 4, run match again with "
        "--hands 4 --seed 7"
    )


@pytest.mark.asyncio
async def test_register_and_retire_through_the_admin_api_leave_the_page_as_it_was() -> None:
    """What the examination did: 1,000 RegisterBot/RetireBot cycles on a standing server (a
    league's remote bots) took /metrics from 742 lines to 201,742. Through the API, on a live
    server, with no match in play: the page is back to its size after each retirement."""
    from uno_server.service.server import ArenaServer, ServerConfig

    server = ArenaServer(ServerConfig(port=0, admin_token=ADMIN))
    port = await server.start()
    md = (("authorization", f"Bearer {ADMIN}"),)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = admin_pb2_grpc.AdminServiceStub(ch)
            m = server.arena.metrics
            before = len(_series(m))
            for i in range(30):
                name = f"churn-{i}"
                await stub.RegisterBot(
                    admin_pb2.RegisterBotRequest(bot_name=name, token=f"churn-token-{i:04d}"),
                    metadata=md,
                )
                assert _of(m, name), name  # registered: its series are on the page
                await stub.RetireBot(admin_pb2.RetireBotRequest(bot_name=name), metadata=md)
                assert _of(m, name) == [], name
            assert len(_series(m)) == before
    finally:
        await server.stop(drain_timeout_s=0.2)
