"""What proto/README.md §3 says of answers after MatchEnded: each is answered and counted, in
BotInfo (ListBots); the match's own counts (GetMatch's MatchSeat) stay those MatchEnded gave."""

from __future__ import annotations

import asyncio

import pytest

from uno_server.gen.uno.v1 import admin_pb2, game_pb2

from .conftest import BOTS, Live
from .rawbot import RawBot


async def _bot_info(live: Live, name: str) -> admin_pb2.BotInfo:
    res = await live.admin.ListBots(admin_pb2.ListBotsRequest(), metadata=live.md)
    return next(b for b in res.bots if b.bot_name == name)


@pytest.mark.asyncio
async def test_answers_after_match_ended_count_in_bot_info_not_in_the_match(live: Live) -> None:
    bot = RawBot(live.port, "b0", BOTS["b0"]).start()
    try:
        await asyncio.wait_for(bot.welcomed.wait(), 30)
        h = game_pb2.BUILTIN_BOT_HEURISTIC
        info = await live.create(
            ["b0", h, h, h], rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND)
        )
        await bot.wait_ended()
        ended = bot.ended[0]
        before = await _bot_info(live, "b0")
        last = next(
            m.decision_request.request_id
            for m in reversed(bot.received)
            if m.WhichOneof("kind") == "decision_request"
        )
        sent = len(bot.results)
        bot.answer(last, 0)  # late: the match is over (STALE_REQUEST)
        bot.answer(last, None)  # a fault: no action_id
        while len(bot.results) < sent + 2:
            await asyncio.sleep(0.01)
        got = [r.result for r in bot.results[sent:]]
        assert all(r is not None for r in got)  # each one answered
        after = await _bot_info(live, "b0")
        seat = (await live.info(info.match_id)).seats[0]
    finally:
        await bot.stop()
    assert after.stale_actions + after.rejected_actions == (
        before.stale_actions + before.rejected_actions + 2
    )
    assert (seat.stale_actions, seat.rejected_actions) == (
        ended.stale_actions,
        ended.rejected_actions,
    )
