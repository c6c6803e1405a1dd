"""A spectator who leaves affects only that spectator.

Every watcher of a table awaited one shared future (``SeatLog.changed``). A watcher whose call
ended (a closed browser tab, a killed ``curl``, Esc in ``uno-arena watch``) cancelled that future,
and with it every other watcher's wait: their calls ended with status OK as if the match had,
and a watcher that joined before the next event was cut off at once (an examination: the
``watch`` screen froze and read "ended" while the match went on). AwaitMatch waited the same
way."""

from __future__ import annotations

import asyncio

import pytest

from uno_server.gen.uno.v1 import admin_pb2, game_pb2

from .conftest import Live
from .rawbot import RawBot
from .test_service import HEUR, connected

pytestmark = pytest.mark.asyncio


async def _until(cond: object, what: str) -> None:
    for _ in range(3000):
        if cond():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


def _waiting(log: object) -> int:
    """How many calls wait on the table's next event (the shared future's callbacks)."""
    fut = log._changed  # type: ignore[attr-defined]
    return 0 if fut is None or fut.done() else len(fut._callbacks)


async def _follow(
    live: Live, match_id: str, seen: asyncio.Event
) -> list[admin_pb2.WatchMatchResponse]:
    out = []
    call = live.admin.WatchMatch(admin_pb2.WatchMatchRequest(match_id=match_id), metadata=live.md)
    async for msg in call:
        out.append(msg)
        seen.set()
    return out


async def waiting_match(live: Live) -> tuple[RawBot, str]:
    """A one-hand match that waits for its first seat's bot, which never answers (its
    deadline is 10 minutes away): spectators stay in it until the test cancels it."""
    bot = await connected(live, "b0", policy=None)
    info = await live.create(
        ["b0", HEUR, HEUR, HEUR],
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        tc=game_pb2.TimeControl(decision_ms=600_000),
    )
    return bot, info.match_id


async def test_one_spectator_leaving_does_not_end_the_others(live: Live) -> None:
    bot, mid = await waiting_match(live)
    await _until(lambda: mid in live.server.arena.running, "the table")
    watchers = live.server.arena.watchers
    seen_a, seen_b = asyncio.Event(), asyncio.Event()
    a = asyncio.ensure_future(_follow(live, mid, seen_a))
    b = asyncio.ensure_future(_follow(live, mid, seen_b))
    await asyncio.wait_for(asyncio.gather(seen_a.wait(), seen_b.wait()), 60)
    await _until(lambda: len(watchers) == 2, "two watchers")
    log = live.server.arena.running[mid].seat_log
    # both have written what there is and wait for the next event (the table waits for b0)
    await _until(lambda: _waiting(log) == 2, "both watchers waiting")
    a.cancel()  # the first spectator leaves
    await _until(lambda: len(watchers) <= 1, "the first watcher's call to end")
    for _ in range(20):  # let whatever its leaving woke run
        await asyncio.sleep(0)
    assert not b.done(), "the other spectator's call ended with the first's"
    assert len(watchers) == 1
    # one who joins now, and an AwaitMatch, wait for the real end as well
    seen_c = asyncio.Event()
    c = asyncio.ensure_future(_follow(live, mid, seen_c))
    awaited = asyncio.ensure_future(
        live.admin.AwaitMatch(admin_pb2.AwaitMatchRequest(match_id=mid), metadata=live.md)
    )
    await asyncio.wait_for(seen_c.wait(), 60)
    await _until(lambda: len(watchers) == 2, "the new watcher")
    await _until(lambda: _waiting(log) == 2, "both watchers waiting")  # AwaitMatch: the task
    for _ in range(20):
        await asyncio.sleep(0)
    assert not c.done() and not awaited.done()
    await live.admin.CancelMatch(
        admin_pb2.CancelMatchRequest(match_id=mid, reason="test"), metadata=live.md
    )
    for got in (await asyncio.wait_for(b, 60), await asyncio.wait_for(c, 60)):
        kinds = [m.event.WhichOneof("kind") for m in got if m.WhichOneof("kind") == "event"]
        assert kinds[-1] == "match_cancelled", kinds[-5:]
        assert got[-1].match.state == admin_pb2.MATCH_STATE_CANCELLED
    res = await asyncio.wait_for(awaited, 60)
    assert res.match.state == admin_pb2.MATCH_STATE_CANCELLED
    await bot.stop()
