"""Examined: an event sequence a client names is >= 0 and at most 2^62; the refusal of a larger
one states that range (it said "out of range (>= 0)" of 2^62 + 1)."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.message import Message

from uno_server.gen.uno.v1 import admin_pb2, bot_pb2
from uno_server.service import limits

from .conftest import Live

TOP = 2**62


@pytest.mark.parametrize(
    "msg",
    [
        admin_pb2.WatchMatchRequest(match_id="m1", after_sequence=TOP + 1),
        admin_pb2.AwaitMatchRequest(match_id="m1", after_sequence=TOP + 1),
        bot_pb2.EventCursor(match_id="m1", last_sequence=TOP + 1),
    ],
)
def test_a_sequence_over_two_to_the_62_names_the_range(msg: Message) -> None:
    bad = limits.check(msg)
    assert bad is not None
    assert f"{TOP + 1} is out of range (0 to 2^62 = {TOP})" in bad.message, bad
    at_top = type(msg)()
    at_top.CopyFrom(msg)
    for name in ("after_sequence", "last_sequence"):
        if name in msg.DESCRIPTOR.fields_by_name:
            setattr(at_top, name, TOP)
    assert limits.check(at_top) is None


@pytest.mark.asyncio
async def test_the_refusal_on_the_wire_states_the_range(live: Live) -> None:
    call = live.admin.WatchMatch(
        admin_pb2.WatchMatchRequest(match_id="m1", after_sequence=TOP + 1), metadata=live.md
    )
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in call:
            pass
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"0 to 2^62 = {TOP}" in (err.value.details() or ""), err.value.details()
