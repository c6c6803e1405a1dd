"""What the server tells its operator: series that exist before their first increment,
timeouts in the latency histogram, process metrics, and rejected RPCs in the log (rate-limited),
with match, hand and seat on every table line."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

import grpc
import pytest
import structlog

from uno_server.gen.uno.v1 import bot_pb2, game_pb2
from uno_server.service import ratelog, rejections
from uno_server.service.metrics import (
    ERROR_CODES,
    FAULT_REASONS,
    LATE_REASONS,
    MATCH_OUTCOMES,
    REASONS,
    STREAM_REASONS,
    TAKEOVER_CAUSES,
)
from uno_server.service.ratelog import RateLimitedLog

from .conftest import BOTS, Live
from .rawbot import RawBot

pytestmark = pytest.mark.asyncio
HEUR = game_pb2.BUILTIN_BOT_HEURISTIC


async def test_every_known_label_set_starts_at_zero(live: Live) -> None:
    """A counter born at its first increment has no sample to rise from: rate() misses it."""
    reg = live.server.arena.metrics.registry
    for bot in BOTS:
        assert reg.get_sample_value("uno_timeouts_total", {"bot": bot}) == 0, bot
        assert reg.get_sample_value("uno_disconnects_total", {"bot": bot}) == 0, bot
        assert reg.get_sample_value("uno_decision_latency_seconds_count", {"bot": bot}) == 0
        for reason in FAULT_REASONS:
            labels = {"bot": bot, "reason": reason}
            assert reg.get_sample_value("uno_illegal_actions_total", labels) == 0, labels
        for reason in LATE_REASONS:
            labels = {"bot": bot, "reason": reason}
            assert reg.get_sample_value("uno_late_actions_total", labels) == 0, labels
        for reason in STREAM_REASONS:
            labels = {"bot": bot, "reason": reason}
            assert reg.get_sample_value("uno_stream_errors_total", labels) == 0, labels
        for cause in TAKEOVER_CAUSES:
            labels = {"bot": bot, "cause": cause}
            assert reg.get_sample_value("uno_takeovers_total", labels) == 0, labels
    for outcome in MATCH_OUTCOMES:
        assert reg.get_sample_value("uno_matches_total", {"outcome": outcome}) == 0, outcome
    for code in ERROR_CODES:
        assert reg.get_sample_value("uno_server_errors_total", {"code": code}) == 0, code
    # the enums' names are what the counting code uses
    assert "not_your_turn" in REASONS and "invalid_token" in REASONS
    assert set(LATE_REASONS) <= set(REASONS) and not set(LATE_REASONS) & set(FAULT_REASONS)
    assert set(TAKEOVER_CAUSES) == {"strikes", "disconnected"}
    assert "completed" in MATCH_OUTCOMES


async def test_process_and_python_series_are_served(live: Live) -> None:
    reg = live.server.arena.metrics.registry
    assert (reg.get_sample_value("process_resident_memory_bytes", {"process": "server"}) or 0) > 0
    assert reg.get_sample_value("process_cpu_seconds_total", {"process": "server"}) is not None
    names = {m.name for m in reg.collect()}
    assert "python_info" in names and "python_gc_objects_collected" in names


async def test_a_timed_out_decision_counts_at_its_deadline_in_the_latency(live: Live) -> None:
    bot = RawBot(live.port, "b0", BOTS["b0"], policy=None).start()
    await asyncio.wait_for(bot.welcomed.wait(), 30)
    info = await live.create(
        ["b0", HEUR, HEUR, HEUR],
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        tc=game_pb2.TimeControl(decision_ms=50, strikes_before_takeover=3),
    )
    await asyncio.wait_for(live.watch(info.match_id), 30)
    await bot.stop()
    reg = live.server.arena.metrics.registry
    assert reg.get_sample_value("uno_timeouts_total", {"bot": "b0"}) == 3
    # three decisions, none answered: all three at their 50 ms deadline (bucket 0.05)
    assert reg.get_sample_value("uno_decision_latency_seconds_count", {"bot": "b0"}) == 3
    le_50ms = {"bot": "b0", "le": "0.05"}
    assert reg.get_sample_value("uno_decision_latency_seconds_bucket", le_50ms) == 3
    total = reg.get_sample_value("uno_decision_latency_seconds_sum", {"bot": "b0"}) or 0
    assert total == pytest.approx(0.15, abs=0.01)


def rejected(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e["event"] == "rpc rejected"]


async def test_rejected_rpcs_are_logged(live: Live) -> None:
    with structlog.testing.capture_logs() as logs:
        bad = RawBot(live.port, "b0", "not-a-real-token").start()
        await asyncio.wait_for(bad.task, 30)  # type: ignore[arg-type]
        nohello = RawBot(live.port, "b1", BOTS["b1"], send_hello=False)
        nohello.outbox.put_nowait(bot_pb2.PlayRequest(ping=bot_pb2.Ping()))
        nohello.start()
        await asyncio.wait_for(nohello.task, 30)  # type: ignore[arg-type]
        with pytest.raises(grpc.aio.AioRpcError):  # the runner retries these while a bot
            await live.create(["b2", HEUR, HEUR, HEUR])  # reconnects
    seen = {(e["code"], e["reason"]): e for e in rejected(logs)}
    assert ("UNAUTHENTICATED", "INVALID_TOKEN") in seen, logs
    assert seen[("FAILED_PRECONDITION", "HELLO_REQUIRED")]["bot"] == "b1"
    assert ("FAILED_PRECONDITION", "BOT_NOT_CONNECTED") in seen, seen
    for e in seen.values():
        assert e["peer"] and e["detail"], e


async def test_a_flood_of_rejections_is_rate_limited(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rejections, "REJECTIONS", RateLimitedLog(burst=5, window_s=3600))
    with structlog.testing.capture_logs() as logs:
        for _ in range(12):
            bad = RawBot(live.port, "b0", "not-a-real-token").start()
            await asyncio.wait_for(bad.task, 30)  # type: ignore[arg-type]
    assert len(rejected(logs)) == 5
    reg = live.server.arena.metrics.registry
    assert reg.get_sample_value("uno_server_errors_total", {"code": "UNAUTHENTICATED"}) == 12


async def test_a_bot_reconnecting_in_a_loop_writes_a_bounded_number_of_lines(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 section 5: connect and disconnect lines are rate-limited per bot like
    rejections. A bot with a seat in a running match reconnects 13 times within one window of
    a limit of 3: each kind of line (connected, disconnected, its seat's bot gone) is written 3
    times, and the first of each kind after the window says that 10 were left out."""
    now = [0.0]
    monkeypatch.setattr(
        ratelog, "CONNECTIONS", RateLimitedLog(burst=3, window_s=60, clock=lambda: now[0])
    )
    arena = live.server.arena

    async def cycle() -> None:
        bot = RawBot(live.port, "b0", BOTS["b0"], policy=None).start()
        await asyncio.wait_for(bot.welcomed.wait(), 10)
        if not arena.bot_tables.get("b0"):
            await live.create(
                ["b0", HEUR, HEUR, HEUR],
                tc=game_pb2.TimeControl(decision_ms=600_000, reconnect_grace_ms=600_000),
            )
        await bot.stop()
        for _ in range(6000):  # until the server has ended the stream (and logged so)
            if not any(s.bot_name == "b0" for s in arena.live):
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the stream did not end")

    def lines(logs: list[MutableMapping[str, Any]], event: str, seat: bool) -> list[Any]:
        return [
            e
            for e in logs
            if e["event"] == event and e.get("bot") in ("b0", None) and ("seat" in e) == seat
        ]

    with structlog.testing.capture_logs() as logs:
        for _ in range(13):
            await cycle()
        assert len(lines(logs, "bot connected", False)) == 3
        assert len(lines(logs, "bot disconnected", False)) == 3
        assert len(lines(logs, "bot disconnected", True)) == 3  # its seat, from the table
        noted = {"bot connected", "bot disconnected"}
        assert all("suppressed" not in e for e in logs if e["event"] in noted)
        now[0] += 61  # the next window
        await cycle()
    for event, seat in (
        ("bot connected", False),
        ("bot disconnected", False),
        ("bot disconnected", True),
    ):
        written = lines(logs, event, seat)
        assert len(written) == 4, (event, seat, written)
        assert written[-1]["suppressed"] == 10, written[-1]
    assert arena.bot_tables.get("b0"), "the seat was kept through every reconnect"


async def test_rate_limited_log_says_how_many_it_left_out() -> None:
    now = [0.0]
    lim = RateLimitedLog(burst=2, window_s=10, clock=lambda: now[0])
    out: list[dict[str, Any]] = []

    def emit(event: str, **kw: Any) -> None:
        out.append({"event": event, **kw})

    written = [lim.log("k", emit, "x", n=i) for i in range(5)]
    assert written == [True, True, False, False, False]
    assert lim.log("other", emit, "y")  # keys are limited apart
    now[0] = 11.0
    assert lim.log("k", emit, "x", n=5)
    assert out[-1] == {"event": "x", "n": 5, "suppressed": 3}


async def test_every_table_line_names_match_hand_and_seat(live: Live) -> None:
    with structlog.testing.capture_logs() as logs:
        bot = RawBot(live.port, "b0", BOTS["b0"], policy=None).start()
        await asyncio.wait_for(bot.welcomed.wait(), 30)
        info = await live.create(
            ["b0", HEUR, HEUR, HEUR],
            rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
            tc=game_pb2.TimeControl(decision_ms=50, strikes_before_takeover=2),
        )
        await asyncio.wait_for(live.watch(info.match_id), 30)
        await bot.stop()
    table = [e for e in logs if e.get("match_id") == info.match_id]
    events = {e["event"] for e in table}
    assert {"match started", "decision timed out", "match ended"} <= events, events
    assert "seat taken over by the built-in AI" in events
    for e in table:
        assert e["hand"] == 1, e
        assert "seat" in e, e
    assert all(e["seat"] == 0 for e in table if e["event"] == "decision timed out")
