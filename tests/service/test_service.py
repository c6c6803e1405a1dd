"""The game service over the wire: auth, errors, hidden information, deadlines, takeovers."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from uno_server.engine import Hand, RuleSet
from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2
from uno_server.service.convert import rules_from_proto

from .conftest import BOTS, Live
from .rawbot import Outcome, RawBot

pytestmark = pytest.mark.asyncio
HEUR = game_pb2.BUILTIN_BOT_HEURISTIC
RAND = game_pb2.BUILTIN_BOT_RANDOM


def reason_of(err: grpc.aio.AioRpcError) -> str:
    status = rpc_status.from_call(err)
    assert status is not None, "the error carries no google.rpc.Status"
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.domain == "uno-arena"
    return str(info.reason)


async def connected(live: Live, name: str, **kw: object) -> RawBot:
    bot = RawBot(live.port, name, BOTS[name], **kw).start()  # type: ignore[arg-type]
    await asyncio.wait_for(bot.welcomed.wait(), 30)
    return bot


# ---------------------------------------------------------------- authentication and hello


# A client write that meets the server's early end makes grpc.aio report INTERNAL ("Failed
# execute_batch") in place of the status the server sent (grpc/grpc#36066), a client-side race
# that a busy machine wins now and then. So the server reads a refused stream's first message
# (its Hello) before it ends the call, and names the bot that Hello gives: a bot that writes its
# Hello as it opens the stream, as every SDK does, gets the status.
async def test_missing_token_is_unauthenticated(live: Live) -> None:
    bot = RawBot(live.port, "b0", "").start()
    await asyncio.wait_for(bot.task, 30)  # type: ignore[arg-type]
    assert bot.error is not None and bot.error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert reason_of(bot.error) == "MISSING_TOKEN"
    assert "(the Hello names bot 'b0')" in (bot.error.details() or "")


async def test_wrong_token_is_unauthenticated(live: Live) -> None:
    bot = RawBot(live.port, "b0", "not-a-real-token").start()
    await asyncio.wait_for(bot.task, 30)  # type: ignore[arg-type]
    assert bot.error is not None and bot.error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert reason_of(bot.error) == "INVALID_TOKEN"
    assert "(the Hello names bot 'b0')" in (bot.error.details() or "")


async def test_wrong_token_without_a_hello_is_refused_all_the_same(live: Live) -> None:
    # no message at all: refused once the wait for one ends; a name no bot may have: not echoed
    silent = RawBot(live.port, "b0", "not-a-real-token", send_hello=False).start()
    odd = RawBot(live.port, "b0", "not-a-real-token", hello_name="no spaces\n").start()
    for bot in (silent, odd):
        await asyncio.wait_for(bot.task, 30)  # type: ignore[arg-type]
        assert bot.error is not None and bot.error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert reason_of(bot.error) == "INVALID_TOKEN"
        assert "the Hello names" not in (bot.error.details() or "")
    assert live.server.arena.waiting_unauthenticated == 0


async def test_first_message_must_be_hello(live: Live) -> None:
    bot = RawBot(live.port, "b0", BOTS["b0"], send_hello=False)
    bot.outbox.put_nowait(bot_pb2.PlayRequest(ping=bot_pb2.Ping(nonce=1)))
    bot.start()
    await asyncio.wait_for(bot.task, 30)  # type: ignore[arg-type]
    assert bot.error is not None and bot.error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason_of(bot.error) == "HELLO_REQUIRED"


async def test_hello_with_another_bots_name_is_refused(live: Live) -> None:
    bot = RawBot(live.port, "b0", BOTS["b0"], hello_name="b1").start()
    await asyncio.wait_for(bot.task, 30)  # type: ignore[arg-type]
    assert bot.error is not None and bot.error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason_of(bot.error) == "BOT_NAME_MISMATCH"
    # the message names the token's bot, never repeats the string the client sent
    assert "'b0'" in bot.error.details() and "b1" not in bot.error.details(), bot.error.details()


async def test_admin_needs_the_admin_token(live: Live) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.admin.ListMatches(
            admin_pb2.ListMatchesRequest(), metadata=(("authorization", f"Bearer {BOTS['b0']}"),)
        )
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason_of(exc.value) == "ADMIN_REQUIRED"


async def test_health_and_reflection_are_served(live: Live) -> None:
    stub = health_pb2_grpc.HealthStub(live.channel)
    res = await stub.Check(health_pb2.HealthCheckRequest(service="uno.v1.BotService"))
    assert res.status == health_pb2.HealthCheckResponse.SERVING


# ---------------------------------------------------------------- admin validation


async def test_create_match_with_bad_rules_names_the_field(live: Live) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.create([HEUR] * 4, rules=game_pb2.RuleSet(uno_penalty=3))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "rules.uno_penalty" in (exc.value.details() or "")
    assert reason_of(exc.value) == "INVALID_RULES"


async def test_create_match_with_unknown_bot_is_invalid(live: Live) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.create(["nobody", HEUR, HEUR, HEUR])
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "seats[0]" in (exc.value.details() or "")


async def test_create_match_with_disconnected_bot_fails_precondition(live: Live) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.create(["b0", HEUR, HEUR, HEUR])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason_of(exc.value) == "BOT_NOT_CONNECTED"


async def test_bad_time_control_names_the_field(live: Live) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.create([HEUR] * 4, tc=game_pb2.TimeControl(decision_ms=0))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "time_control.decision_ms" in (exc.value.details() or "")


async def test_unknown_match_is_not_found(live: Live) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.info("m-none")
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    assert reason_of(exc.value) == "MATCH_NOT_FOUND"


async def test_idempotency_key_returns_the_same_match(live: Live) -> None:
    req = admin_pb2.CreateMatchRequest(
        seats=[game_pb2.Player(builtin=HEUR)] * 4,
        seed=3,
        idempotency_key="hand-42",
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
    )
    a = await live.admin.CreateMatch(req, metadata=live.md)
    b = await live.admin.CreateMatch(req, metadata=live.md)
    assert a.created and not b.created
    assert a.match.match_id == b.match.match_id


# ---------------------------------------------------------------- bad actions keep the table going


async def test_bad_actions_get_their_codes_and_the_table_goes_on(live: Live) -> None:
    bot = await connected(live, "b0", policy=None)
    info = await live.create(
        ["b0", HEUR, HEUR, HEUR], rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND)
    )
    dr = await asyncio.wait_for(bot.requests.get(), 30)
    while not dr.required:
        dr = await asyncio.wait_for(bot.requests.get(), 30)
    legal = {a.id for a in dr.legal_actions}

    async def result() -> Outcome:
        n = len(bot.results)
        while len(bot.results) == n:
            await asyncio.sleep(0.005)
        return bot.results[-1]

    bot.answer(dr.request_id, 999_999)  # names no action
    r = await asyncio.wait_for(result(), 30)
    assert (r.accepted, r.code, r.reason) == (False, 3, errors_pb2.ERROR_REASON_MALFORMED_ACTION)
    assert r.request_open

    illegal = next(i for i in (1000 + 10 * c for c in range(0, 61)) if i not in legal)
    bot.answer(dr.request_id, illegal)  # a card play that is not legal now
    r = await asyncio.wait_for(result(), 30)
    assert not r.accepted and r.code == 9 and r.request_open
    assert r.message

    bot.answer(dr.request_id, None)  # action id missing
    r = await asyncio.wait_for(result(), 30)
    assert (r.accepted, r.code) == (False, 3)

    bot.answer("nomatch-1", 0)  # a request id this server never issued
    r = await asyncio.wait_for(result(), 30)
    assert (r.accepted, r.code, r.reason) == (False, 5, errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND)

    bot.answer(dr.request_id, dr.legal_actions[0].id)  # finally a legal answer
    r = await asyncio.wait_for(result(), 30)
    assert r.accepted

    bot.answer(dr.request_id, dr.legal_actions[0].id)  # the same request again
    r = await asyncio.wait_for(result(), 30)
    assert (r.accepted, r.code, r.reason) == (False, 10, errors_pb2.ERROR_REASON_ALREADY_ANSWERED)

    # the table goes on: answer everything from now on and the match ends normally
    while not bot.requests.empty():  # requests that arrived meanwhile
        d = bot.requests.get_nowait()
        if d.required and d.request_id != dr.request_id:
            bot.answer(d.request_id, d.legal_actions[-1].id)
    bot.policy = lambda d: d.legal_actions[-1].id if d.required else None
    await bot.wait_ended(1, timeout=60)
    assert bot.ended[0].cause == game_pb2.END_CAUSE_COMPLETED
    final = await live.info(info.match_id)
    assert final.state == admin_pb2.MATCH_STATE_FINISHED
    # every rejection of an answer to the seat's requests counts, the late one apart from the
    # faults; the unknown id named no match
    assert (final.seats[0].rejected_actions, final.seats[0].stale_actions) == (3, 1)
    await bot.stop()


async def test_a_bot_cannot_act_for_another_bots_seat(live: Live) -> None:
    b0 = await connected(live, "b0", policy=None)
    b1 = await connected(live, "b1", policy=None)
    await live.create(
        ["b0", "b1", HEUR, HEUR], rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND)
    )
    # whoever is asked first: the other bot tries to answer it
    asked, thief = None, None
    while asked is None:
        for me, other in ((b0, b1), (b1, b0)):
            if not me.requests.empty():
                dr = me.requests.get_nowait()
                if dr.required:
                    asked, thief = (me, dr), other
        await asyncio.sleep(0.01)
    assert thief is not None
    me, dr = asked
    thief.answer(dr.request_id, dr.legal_actions[0].id)
    for _ in range(6000):
        if thief.results:
            break
        await asyncio.sleep(0.01)
    r = thief.results[-1]
    # as if the request did not exist (tests/service/test_examined_request_ids.py)
    assert (r.accepted, r.code, r.reason) == (False, 5, errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND)
    me.answer(dr.request_id, dr.legal_actions[0].id)  # still open for its owner
    for _ in range(6000):
        if me.results:
            break
        await asyncio.sleep(0.01)
    assert me.results[-1].accepted
    await b0.stop()
    await b1.stop()


# ---------------------------------------------------------------- deadlines and takeovers


async def test_a_silent_bot_gets_defaults_and_strikes_then_the_ai_takes_over(live: Live) -> None:
    bot = await connected(live, "b0", policy=None)
    info = await live.create(
        ["b0", HEUR, HEUR, HEUR],
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        tc=game_pb2.TimeControl(decision_ms=50, strikes_before_takeover=3),
    )
    events = await asyncio.wait_for(live.watch(info.match_id), 30)
    final = await live.info(info.match_id)
    seat = final.seats[0]
    assert final.state == admin_pb2.MATCH_STATE_FINISHED
    assert seat.strikes == 3 and seat.taken_over
    assert seat.takeover_cause == game_pb2.END_CAUSE_STRIKES
    timeouts = [e.timed_out for e in events if e.WhichOneof("kind") == "timed_out"]
    assert [t.strikes for t in timeouts] == [1, 2, 3]
    assert all(t.action_id in (0, 2, 5) for t in timeouts)  # draw / accept / no catch
    takeovers = [e.taken_over for e in events if e.WhichOneof("kind") == "taken_over"]
    assert len(takeovers) == 1 and takeovers[0].seat == 0
    closed = [m.request_closed for m in bot.received if m.WhichOneof("kind") == "request_closed"]
    assert sum(c.reason == bot_pb2.CLOSE_REASON_TIMED_OUT for c in closed) == 3
    await bot.stop()


async def test_a_disconnected_bot_is_replaced_after_the_grace(live: Live) -> None:
    bot = await connected(live, "b0", policy=None)
    info = await live.create(
        ["b0", HEUR, HEUR, HEUR],
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        tc=game_pb2.TimeControl(decision_ms=5000, reconnect_grace_ms=200),
    )
    await asyncio.wait_for(bot.requests.get(), 30)
    await bot.stop()
    events = await asyncio.wait_for(live.watch(info.match_id), 30)
    final = await live.info(info.match_id)
    assert final.seats[0].taken_over
    assert final.seats[0].takeover_cause == game_pb2.END_CAUSE_DISCONNECTED
    conn = [e.connection for e in events if e.WhichOneof("kind") == "connection"]
    assert conn and not conn[0].connected


async def test_a_reconnecting_bot_gets_its_open_request_again(live: Live) -> None:
    bot = await connected(live, "b0", policy=None)
    await live.create(
        ["b0", HEUR, HEUR, HEUR],
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        tc=game_pb2.TimeControl(decision_ms=5000, reconnect_grace_ms=5000),
    )
    first = await asyncio.wait_for(bot.requests.get(), 30)
    while not first.required:
        first = await asyncio.wait_for(bot.requests.get(), 30)
    await bot.stop()
    again = await connected(live, "b0", policy=None)
    dr = await asyncio.wait_for(again.requests.get(), 30)
    while not dr.required:
        dr = await asyncio.wait_for(again.requests.get(), 30)
    assert dr.request_id == first.request_id and dr.resent
    await again.stop()


async def test_a_newer_stream_replaces_the_older(live: Live) -> None:
    old = await connected(live, "b0", policy=None)
    new = await connected(live, "b0", policy=None)
    await asyncio.wait_for(old.task, 30)  # type: ignore[arg-type]
    assert old.error is not None and old.error.code() == grpc.StatusCode.ABORTED
    assert reason_of(old.error) == "SESSION_REPLACED"
    await new.stop()


# ---------------------------------------------------------------- hidden information on the wire


def _cards_of_others(seat: int, ev: game_pb2.Event) -> int:
    kind = ev.WhichOneof("kind")
    if kind == "drew" and ev.drew.seat != seat:
        return len(ev.drew.cards)
    if kind == "dealt" and ev.dealt.seat != seat:
        return len(ev.dealt.cards)
    if kind == "challenge_evidence" and ev.challenge_evidence.challenger != seat:
        return len(ev.challenge_evidence.hand)
    return 0


async def test_no_message_ever_shows_another_seats_cards(live: Live) -> None:
    rng = random.Random(7)

    def chaotic(dr: bot_pb2.DecisionRequest) -> int | None:
        ids = [a.id for a in dr.legal_actions]
        if 3 in ids:  # challenge Wild Draw Fours often, so evidence is exercised
            return 3
        if not dr.required:
            return rng.choice(ids)
        plays = [i for i in ids if i >= 1000]
        return rng.choice(plays or ids)

    bots = [await connected(live, f"b{i}", policy=chaotic) for i in range(4)]
    matches = []
    for m in range(3):
        info = await live.create(
            ["b0", "b1", "b2", "b3"],
            seed=100 + m,
            rules=game_pb2.RuleSet(target_score=150),
            tc=game_pb2.TimeControl(decision_ms=5000),
        )
        matches.append(info.match_id)
    for b in bots:
        await b.wait_ended(3, timeout=120)
    evidence_seen = 0
    for i, b in enumerate(bots):
        for msg in b.received:
            kind = msg.WhichOneof("kind")
            if kind == "decision_request":
                dr = msg.decision_request
                assert dr.seat == i
                evs = list(dr.events)
                assert len(dr.view.hand) == dr.view.seats[i].card_count
            elif kind == "match_ended":
                evs = list(msg.match_ended.events)
            else:
                continue
            for ev in evs:
                assert _cards_of_others(i, ev) == 0, f"seat {i} saw another seat's cards: {ev}"
                if ev.WhichOneof("kind") == "challenge_evidence":
                    evidence_seen += 1
                    assert ev.challenge_evidence.challenger == i
                if ev.WhichOneof("kind") == "hand_started":
                    assert ev.hand_started.seat_count == 4
    assert evidence_seen > 0, "no challenge happened; the test did not exercise evidence"
    # the spectator stream reveals hands only in hand_ended, and never evidence
    events = await live.watch(matches[0])
    for ev in events:
        assert ev.WhichOneof("kind") != "challenge_evidence"
        assert _cards_of_others(-1, ev) == 0
    for b in bots:
        await b.stop()


# ---------------------------------------------------------------- results match the engine


async def test_hands_replay_through_the_engine_to_the_same_result(live: Live) -> None:
    info = await live.create([HEUR, RAND, HEUR, RAND], seed=9)
    events = await asyncio.wait_for(live.watch(info.match_id), 60)
    rules = rules_from_proto(info.rules)
    ended = [e.hand_ended for e in events if e.WhichOneof("kind") == "hand_ended"]
    assert ended
    for he in ended:
        hand = Hand.replay(rules, he.seed, he.dealer, [(a.seat, a.action_id) for a in he.actions])
        assert hand.over and hand.winner == he.winner
        assert [hand.points_held(s) for s in range(4)] == list(he.points_held)
    assert isinstance(rules, RuleSet)


async def test_metrics_count_hands_and_moves(live: Live) -> None:
    info = await live.create(
        [HEUR] * 4, seed=4, rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND)
    )
    await asyncio.wait_for(live.watch(info.match_id), 30)
    reg = live.server.arena.metrics.registry
    assert reg.get_sample_value("uno_hands_total") == 1.0
    assert (reg.get_sample_value("uno_moves_total", {"source": "builtin"}) or 0) > 10
    assert reg.get_sample_value("uno_active_matches") == 0.0


async def test_metrics_are_served_over_http() -> None:
    import urllib.request

    from uno_server.service.server import ArenaServer, ServerConfig

    server = ArenaServer(ServerConfig(port=0, metrics_port=0, admin_token="admin-token-1234"))
    await server.start()
    try:
        assert server.metrics_port
        url = f"http://127.0.0.1:{server.metrics_port}/metrics"
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
        text = body.decode()
        for name in ("uno_hands_total", "uno_active_matches", "uno_connected_bots"):
            assert name in text
    finally:
        await server.stop(drain_timeout_s=0)


async def test_a_late_answer_to_a_window_someone_closed_is_stale_not_illegal(live: Live) -> None:
    """Regression: after a catch closed a UNO window, the window requests of seats that were not
    due to act stayed open, so a bot answering a moment later was charged an illegal action
    (NOT_YOUR_TURN). They must be closed at once; the late answer is merely stale (ABORTED)."""

    def no_uno_call(dr: bot_pb2.DecisionRequest) -> int:
        plays = [a.id for a in dr.legal_actions if a.id >= 1000 and not a.uno]
        return plays[-1] if plays else dr.legal_actions[0].id

    def drive(
        bot: RawBot, turn_delay: float, window: int | None, window_delay: float
    ) -> asyncio.Task[None]:
        async def loop() -> None:
            while True:
                dr = await bot.requests.get()
                ids = {a.id for a in dr.legal_actions}
                if dr.required:
                    await asyncio.sleep(turn_delay)
                    bot.answer(dr.request_id, no_uno_call(dr))
                elif window is not None and 5 in ids:  # a window on another seat
                    catch = [i for i in ids if 10 <= i < 20]
                    await asyncio.sleep(window_delay)
                    bot.answer(dr.request_id, catch[0] if window == 10 and catch else 5)

        return asyncio.get_running_loop().create_task(loop())

    bots = [await connected(live, f"b{i}", policy=None) for i in range(4)]
    drivers = [
        drive(bots[0], 0.0, None, 0.0),  # goes down to one card without calling UNO
        drive(bots[1], 0.08, 10, 0.0),  # catches at once, then thinks before its turns
        drive(bots[2], 0.08, None, 0.0),  # never answers windows
        drive(bots[3], 0.0, 5, 0.02),  # declines windows, a little late
    ]
    infos = [
        await live.create(
            ["b0", "b1", "b2", "b3"],
            seed=50 + i,
            rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND, uno_window_ms=2000),
            tc=game_pb2.TimeControl(decision_ms=5000),
        )
        for i in range(3)
    ]
    for info in infos:
        await asyncio.wait_for(live.watch(info.match_id), 90)
    for d in drivers:
        d.cancel()
    late = bots[3].results
    stale = [r for r in late if r.reason == errors_pb2.ERROR_REASON_STALE_REQUEST]
    assert stale, "no late answer raced a catch; the test exercised nothing"
    for info in infos:
        final = await live.info(info.match_id)
        # the late answers count only as stale: no seat made a real fault
        assert [s.rejected_actions for s in final.seats] == [0, 0, 0, 0], [
            (i, r.reason, r.message)
            for i, b in enumerate(bots)
            for r in b.results
            if not r.accepted and r.reason != errors_pb2.ERROR_REASON_STALE_REQUEST
        ]
    for b in bots:
        await b.stop()


async def test_an_accepted_answer_is_never_closed_even_when_it_ends_the_hand(live: Live) -> None:
    """bot.proto: a request is answered (no RequestClosed) or closed without an accepted answer
    (RequestClosed). The winning play's request got a RequestClosed(HAND_ENDED) all the same: an
    examination's raw bot read its winning move as dropped. The other seats' open requests (a
    UNO window the last play opened, say) are still closed, as the hand ended."""
    bots = [await connected(live, f"b{i}") for i in range(4)]
    infos = [
        await live.create(
            ["b0", "b1", "b2", "b3"],
            seed=70 + i,
            rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
            tc=game_pb2.TimeControl(decision_ms=5000),
        )
        for i in range(3)
    ]
    for info in infos:
        await asyncio.wait_for(live.watch(info.match_id), 90)
    for b in bots:
        await b.wait_ended(3, timeout=60)
    winners = 0
    for b in bots:
        accepted = {r.request_id for r in b.results if r.accepted}
        closed = {
            m.request_closed.request_id: m.request_closed.reason
            for m in b.received
            if m.WhichOneof("kind") == "request_closed"
        }
        assert not accepted & set(closed), (b.name, {k: closed[k] for k in accepted & set(closed)})
        winners += sum(1 for e in b.ended if e.won)
    assert winners == 3, "every hand is won by a bot's own play: each is a case"
    for b in bots:
        await b.stop()
