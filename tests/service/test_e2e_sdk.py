"""End to end in process: four SDK bots play 200 hands on a server on port 0, and every hand's
served result is what the engine computes when it replays the hand."""

from __future__ import annotations

import asyncio

import pytest

from uno_bot import BotClient, ClientConfig
from uno_bot.examples.heuristic_bot import HeuristicBot as HeuristicExample
from uno_bot.examples.random_bot import RandomBot as RandomExample
from uno_server.engine import Hand
from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.service.convert import rules_from_proto

from .conftest import BOTS, Live

pytestmark = pytest.mark.asyncio
HANDS = 200


async def test_four_sdk_bots_play_200_hands_matching_the_engine(live: Live) -> None:
    bots = [HeuristicExample(), RandomExample(1), HeuristicExample(), RandomExample(2)]
    clients = [
        BotClient(b, ClientConfig(addr=f"127.0.0.1:{live.port}", token=BOTS[f"b{i}"], name=f"b{i}"))
        for i, b in enumerate(bots)
    ]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        for _ in range(200):
            if all(f"b{i}" in live.server.arena.sessions for i in range(4)):
                break
            await asyncio.sleep(0.05)
        sem = asyncio.Semaphore(16)

        async def one(i: int) -> tuple[admin_pb2.MatchInfo, list[game_pb2.Event]]:
            async with sem:
                info = await live.create(
                    ["b0", "b1", "b2", "b3"],
                    seed=1000 + i,
                    rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
                    tc=game_pb2.TimeControl(decision_ms=10_000),
                )
                events = await live.watch(info.match_id)
                return await live.info(info.match_id), events

        results = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(HANDS))), 300)
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
    rules = rules_from_proto(results[0][0].rules)
    wins = [0, 0, 0, 0]
    for info, events in results:
        assert info.state == admin_pb2.MATCH_STATE_FINISHED
        assert all(s.rejected_actions == 0 and s.strikes == 0 for s in info.seats)
        ended = [e.hand_ended for e in events if e.WhichOneof("kind") == "hand_ended"]
        assert len(ended) == 1
        he = ended[0]
        hand = Hand.replay(rules, he.seed, he.dealer, [(a.seat, a.action_id) for a in he.actions])
        assert hand.winner == he.winner == info.winners[0]
        assert [hand.points_held(s) for s in range(4)] == list(he.points_held)
        assert list(info.totals) == [sum(he.points_held) if s == he.winner else 0 for s in range(4)]
        wins[he.winner] += 1
    assert sum(wins) == HANDS
    # the heuristic seats (0 and 2) beat the random seats (1 and 3): they win 0.667 of the hands
    # (534 of 800 measured here), so over 200 hands their share is 0.667 +- 0.033. At least 0.55
    # fails a correct pair once in about 4,000 runs (3.5 sd) and a heuristic that plays at random
    # (share 0.5) nine times in ten; the old bar, 1.5 times the random seats' wins (share 0.6),
    # failed a correct pair in one run in 40 (seen in CI: 119 of 200).
    assert wins[0] + wins[2] >= 0.55 * HANDS, wins
