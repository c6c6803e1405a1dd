"""``uno-arena match`` when a seated bot goes away between hands (an examination: the next
hand's CreateMatch was refused, and `match` printed only "FAILED_PRECONDITION: seats[0]: bot
'carol' is not connected; start it first", exit status 2, the hands played and the summary
lost). It waits up to the server's reconnect grace for the bot; one that comes back plays on,
one that does not ends the hands with the summary and the line to play the rest, exit status 1.

Ordered by what the processes print and by the test's bot (it holds the second hand's first
request, then leaves), never by sleeping."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.service.rawbot import RawBot, first_legal
from uno_server.gen.uno.v1 import bot_pb2
from uno_server.service import matchcli

ADMIN = "admin-token-botgone-1"
BOT, BOT_TOKEN = "carol", "carol-token-botgone-1"
HANDS = 4


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("UNO_")}


class HoldSecond:
    """Plays the first match it sees; holds the first required request of any other."""

    def __init__(self) -> None:
        self.first = ""
        self.held: asyncio.Queue[bot_pb2.DecisionRequest] = asyncio.Queue()

    def policy(self, dr: bot_pb2.DecisionRequest) -> int | None:
        self.first = self.first or dr.match_id
        if dr.match_id != self.first and dr.required:
            self.held.put_nowait(dr)
            return None
        return first_legal(dr)


async def _line(stream: asyncio.StreamReader | None) -> str:
    assert stream is not None
    return (await asyncio.wait_for(stream.readline(), 120)).decode().rstrip("\n")


@pytest.mark.asyncio
@pytest.mark.parametrize("comes_back", [True, False])
async def test_a_bot_gone_between_hands_is_waited_for_then_named(
    tmp_path: Path, comes_back: bool
) -> None:
    cfg = tmp_path / "server.toml"
    cfg.write_text(f'[bots]\n{BOT} = "{BOT_TOKEN}"\n')
    server = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"),
        *("--admin-token", ADMIN, "--config", str(cfg), "--log-level", "warning"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=_env(),
    )
    bots: list[RawBot] = []
    match: asyncio.subprocess.Process | None = None
    try:
        first = await _line(server.stdout)
        assert first.startswith("uno-arena: serving on 127.0.0.1:"), first
        addr = first.rsplit(" ", 1)[1]
        port = int(addr.rsplit(":", 1)[1])
        hold = HoldSecond()
        bots.append(RawBot(port, BOT, BOT_TOKEN, policy=hold.policy).start())
        await asyncio.wait_for(bots[0].welcomed.wait(), 60)
        match = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "uno_server.cli", "match", "--server", addr),
            *("--admin-token", ADMIN, "--seats", BOT, "heuristic", "--hands", str(HANDS)),
            *("--decision-ms", "600000"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_env(),
        )
        assert (await _line(match.stdout)).startswith("hand   1  ")
        await asyncio.wait_for(hold.held.get(), 120)  # the bot is in hand 2: it leaves now
        await bots[0].stop()
        # hand 2 ends with the takeover bot in the seat (after the grace); hand 3 must wait
        assert (await _line(match.stdout)).startswith("hand   2  ")
        assert await _line(match.stderr) == (
            f"uno-arena: bot '{BOT}' (seat 0) is not connected; waiting up to 5 s (the "
            "server's reconnect grace) for it to come back"
        )
        if comes_back:
            bots.append(RawBot(port, BOT, BOT_TOKEN).start())
            await asyncio.wait_for(bots[1].welcomed.wait(), 60)
        out_b, err_b = await asyncio.wait_for(match.communicate(), 120)
    finally:
        for b in bots:
            await b.stop()
        for p in (match, server):
            if p is not None and p.returncode is None:
                p.kill()
                await p.wait()
    out, err = out_b.decode(), err_b.decode()
    hands = re.findall(r"^hand +(\d+) ", out, re.M)
    seat0 = out.strip().splitlines()[-2].split()  # seat player wins timeouts faults late takeovers
    assert seat0[:2] == ["0", BOT] and seat0[-1] == "1", out[-2000:]  # hand 2: taken over
    if comes_back:
        assert hands == [str(n) for n in range(3, HANDS + 1)], out[-2000:]
        assert match.returncode == 0, err[-2000:]
        assert err.strip().splitlines() == [], err[-2000:]
        return
    assert hands == [], out[-2000:]  # hands 1 and 2 were read above
    assert err.strip().splitlines() == [
        f"uno-arena: bot '{BOT}' (seat 0) went away and did not come back within the server's "
        f"reconnect grace (5 s): 2 of {HANDS} hands played; to play the other {HANDS - 2}, "
        f"start it again, then run match again with --hands {HANDS - 2} --seed 3"
    ], err[-2000:]
    assert match.returncode == 1


def _refusal(reason: str, **meta: str) -> grpc.aio.AioRpcError:
    from google.protobuf import any_pb2
    from google.rpc import error_details_pb2, status_pb2

    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="uno-arena", metadata=meta))
    status = status_pb2.Status(code=9, message="refused", details=[detail])
    return grpc.aio.AioRpcError(
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(("grpc-status-details-bin", status.SerializeToString())),
        details="refused",
    )


class _Admin:
    """CreateMatch refuses with ``exc``; ListBots fails (the seat comes from the refusal)."""

    def __init__(self, exc: grpc.aio.AioRpcError) -> None:
        self.exc = exc
        self.calls = 0

    async def CreateMatch(self, *a: object, **k: object) -> None:  # noqa: N802
        self.calls += 1
        raise self.exc

    async def ListBots(self, *a: object, **k: object) -> None:  # noqa: N802
        raise self.exc


@pytest.mark.asyncio
async def test_a_later_refusal_stops_the_hands_and_the_first_is_raised() -> None:
    names = ["heuristic", "a", "b", "a"]
    gone = _Admin(_refusal("BOT_NOT_CONNECTED", field="seats[2]"))
    st = await matchcli._begin(gone, None, (), names, 5, grace_ms=0)  # type: ignore[arg-type]
    assert isinstance(st, matchcli.Stopped) and st.failed and gone.calls == 2
    assert st.head.startswith("bot 'b' (seat 2) went away"), st.head
    other = _Admin(_refusal("TOO_MANY_MATCHES"))
    st = await matchcli._begin(other, None, (), names, 5, grace_ms=0)  # type: ignore[arg-type]
    assert isinstance(st, matchcli.Stopped) and st.failed and other.calls == 1
    assert st.head == "the server refused hand 6 (FAILED_PRECONDITION: refused)", st.head
    with pytest.raises(grpc.aio.AioRpcError):  # the first hand: nothing was played, exit 2
        await matchcli._begin(other, None, (), names, 0, grace_ms=0)  # type: ignore[arg-type]
    assert matchcli._seats_of(names, [1, 2, 3]) == "bots 'a' (seats 1, 3) and 'b' (seat 2)"


class _AdminNoneConnected(_Admin):
    """CreateMatch refuses; ListBots says no bot is connected."""

    async def ListBots(self, *a: object, **k: object) -> Any:  # noqa: N802
        from uno_server.gen.uno.v1 import admin_pb2

        return admin_pb2.ListBotsResponse()


@pytest.mark.asyncio
async def test_two_bots_gone_are_named_in_the_plural() -> None:
    """An examination: "bots 'alice' ... and 'bob' ... is not connected; ... for it to come
    back", "start it again"."""
    names = ["heuristic", "a", "b", "a"]
    gone = _AdminNoneConnected(_refusal("BOT_NOT_CONNECTED", field="seats[1]"))
    st = await matchcli._begin(gone, None, (), names, 5, grace_ms=0)  # type: ignore[arg-type]
    assert isinstance(st, matchcli.Stopped)
    assert st.head.startswith("bots 'a' (seats 1, 3) and 'b' (seat 2) went away"), st.head
    assert st.then == "start them again, then ", st.then
    one = _AdminNoneConnected(_refusal("BOT_NOT_CONNECTED", field="seats[1]"))
    st = await matchcli._begin(one, None, (), ["heuristic", "a"], 5, grace_ms=0)  # type: ignore[arg-type]
    assert isinstance(st, matchcli.Stopped)
    assert st.then == "start it again, then ", st.then
