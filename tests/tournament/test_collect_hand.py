"""The runner collects each finished hand with one AwaitMatch call; against a server without it
(UNIMPLEMENTED) it follows the match with WatchMatch. Both make the same hand record, replay
included, so no stored hand depends on the way it was collected."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.service.conftest import serving
from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_tournament.bench import bench_config
from uno_tournament.eventjson import event_dicts
from uno_tournament.player import Player
from uno_tournament.store import HandRecord

pytestmark = pytest.mark.asyncio


class _Counting:
    """The admin stub, counting calls; ``old`` answers AwaitMatch as an older server does."""

    def __init__(self, stub: Any, old: bool) -> None:
        self.stub = stub
        self.old = old
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        self.calls[name] = self.calls.get(name, 0) + 1
        if name == "AwaitMatch" and self.old:

            async def unimplemented(*_a: Any, **_k: Any) -> None:
                raise grpc.aio.AioRpcError(
                    grpc.StatusCode.UNIMPLEMENTED,
                    grpc.aio.Metadata(),
                    grpc.aio.Metadata(),
                    details="Method not found!",
                )

            return unimplemented
        return getattr(self.stub, name)


async def test_await_and_watch_make_the_same_record(tmp_path: Path) -> None:
    config = bench_config(4, blocks=1, sandboxed=False)
    spec = config.plan("t-collect")[0]
    async with serving() as live:
        seats = [game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_HEURISTIC)] * 4
        rules = game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND, uno_window_ms=300)
        info = (
            await live.admin.CreateMatch(
                admin_pb2.CreateMatchRequest(seats=seats, rules=rules, seed=spec.seed, dealer=0),
                metadata=live.md,
            )
        ).match
        records = {}
        for old in (False, True, False):
            player = Player(tmp_path / str(old), config, "t-collect", stream=io.StringIO())
            player.admin_token = "admin-token-1234"
            admin = player.admin = _Counting(live.admin, old)
            try:
                rec = await player._follow(spec, info, set(), time.monotonic())
            finally:
                player.log.close()
                player._writer.shutdown()
            assert isinstance(rec, HandRecord), rec
            records[old] = rec
            if old:
                assert admin.calls.get("WatchMatch", 0) == 1 and not player._await_match
            else:
                assert admin.calls == {"AwaitMatch": 1} and player._await_match
    new, watched = records[False], records[True]
    assert len(new.replay["events"]) > 20
    assert event_dicts(new.replay["events"]) == event_dicts(watched.replay["events"])
    new.duration_s = watched.duration_s = 0.0
    new.replay["events"] = watched.replay["events"] = []
    assert new == watched


class _Calls:
    """A raw call, counted."""

    def __init__(self, call: Any, counts: dict[str, int], name: str) -> None:
        self.call, self.counts, self.name = call, counts, name

    def __call__(self, *a: Any, **k: Any) -> Any:
        self.counts[self.name] += 1
        return self.call(*a, **k)


async def test_one_play_match_call_a_hand_makes_the_same_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner creates and collects a hand with one PlayMatch call; a match cut in pieces is
    finished with AwaitMatch, and a server without PlayMatch (UNIMPLEMENTED) gets CreateMatch
    and AwaitMatch. Every way makes the same record (the same idempotency key: the same
    match)."""
    from uno_server.service import admin as admin_mod

    config = bench_config(4, blocks=1, sandboxed=False)
    spec = config.plan("t-play")[0]
    records = {}
    async with serving() as live:
        for way in ("play", "two calls", "old server", "play in pieces"):
            if way == "play in pieces":
                monkeypatch.setattr(admin_mod, "AWAIT_EVENT_BYTES", 500)
            player = Player(
                tmp_path / way.replace(" ", "-"), config, "t-play", stream=io.StringIO()
            )
            player.admin_token = "admin-token-1234"
            admin = player.admin = _Counting(live.admin, False)
            player.channel = live.channel
            player.given_up = dict.fromkeys(spec.bots, "test")  # built-in seats, no processes
            assert player._raw_calls()
            raw = {"PlayMatch": 0, "AwaitMatch": 0}
            play_call = player._raw_play_call
            if way == "old server":
                play_call = live.channel.unary_unary(
                    "/uno.v1.AdminService/NoSuchCall",
                    request_serializer=admin_pb2.PlayMatchRequest.SerializeToString,
                    response_deserializer=None,
                )
            player._raw_play_call = _Calls(play_call, raw, "PlayMatch")
            player._raw_await_call = _Calls(player._raw_await_call, raw, "AwaitMatch")
            player._play_match = way != "two calls"
            try:
                # a hand it cannot read whole is played again and again: fail, not hang
                rec = await asyncio.wait_for(player.play(spec), 60)
            finally:
                player.log.close()
                player._writer.shutdown()
            records[way] = rec
            if way == "play":
                assert raw == {"PlayMatch": 1, "AwaitMatch": 0} and admin.calls == {}
            elif way == "play in pieces":
                assert raw["PlayMatch"] == 1 and raw["AwaitMatch"] > 2 and admin.calls == {}
            elif way == "two calls":
                assert raw == {"PlayMatch": 0, "AwaitMatch": 1}
                assert admin.calls == {"CreateMatch": 1}
            else:  # asked once, then two calls a hand from then on
                assert raw == {"PlayMatch": 1, "AwaitMatch": 1} and not player._play_match
                assert admin.calls == {"CreateMatch": 1}
    first = records["play"]
    assert len(first.replay["events"].parts) > 20
    texts = {way: rec.replay["events"].json() for way, rec in records.items()}
    assert all(text == texts["play"] for text in texts.values()), texts.keys()
    for rec in records.values():
        rec.duration_s = 0.0
        rec.replay["events"] = None
    assert all(rec == first for rec in records.values())
