"""Issue 9, item 7 over the wire: a rule set whose deal could never end is refused at once.

Before the rule set refused it, CreateMatch with 9 seats x 11 cards and ``first_flip = redraw``
(match seed 14515, whose first hand leaves only action and Wild cards undealt) dealt on the event
loop and never returned: every table on the server froze.
"""

from __future__ import annotations

import time

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tests.engine.deadline import deadline
from uno_server.gen.uno.v1 import game_pb2

from .conftest import Live

pytestmark = pytest.mark.asyncio
SEED = 14515
"""A match seed whose first hand, dealt 9 x 11, leaves nine action and Wild cards undealt."""


async def test_create_match_whose_deal_could_never_end_is_invalid_at_once(live: Live) -> None:
    rules = game_pb2.RuleSet(seats=9, hand_size=11, first_flip=game_pb2.FIRST_FLIP_REDRAW)
    start = time.monotonic()
    # the server runs in this process: a deal that loops would hang the test, not fail it
    with deadline(10, "CreateMatch"), pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.create([game_pb2.BUILTIN_BOT_RANDOM] * 9, seed=SEED, rules=rules)
    assert time.monotonic() - start < 5
    err = exc.value
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err
    assert (err.details() or "").startswith("rules.hand_size:"), err.details()
    assert "9 seats x 11 cards = 99 leave 9 undealt" in (err.details() or "")
    status = rpc_status.from_call(err)
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.reason, info.metadata["field"]) == ("INVALID_RULES", "rules.hand_size")
    # and the server still serves: the same table with two decks deals at once
    rules.decks = 2
    match = await live.create([game_pb2.BUILTIN_BOT_RANDOM] * 9, seed=SEED, rules=rules)
    assert match.match_id
