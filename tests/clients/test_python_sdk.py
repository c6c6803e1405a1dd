"""The Python bot SDK (clients/python/uno_bot) against an in-process fake BotService.

The fake server implements the server side of ``BotService.Play`` with grpc.aio on
127.0.0.1 port 0; each test scripts what the server sends and checks what the bot answers.
Every test runs inside ``asyncio.run`` with an overall timeout, so none can hang.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any

import grpc
import grpc.aio
import pytest

from uno_bot import Bot, BotClient, ClientConfig, DecisionRequest, MatchState, bot
from uno_bot.convert import to_engine_view, view_to_engine
from uno_bot.examples.heuristic_bot import HeuristicBot as ExampleHeuristicBot
from uno_bot.examples.random_bot import RandomBot as ExampleRandomBot
from uno_bot.sdk import FatalStreamError, fallback_action, parse_args
from uno_server.engine import HeuristicBot, RuleSet, seat_view
from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine.hand import OVER, Hand
from uno_server.engine.views import SeatView as EngineSeatView
from uno_server.gen.uno.v1 import bot_pb2, bot_pb2_grpc, cards_pb2, game_pb2

TOKEN = "s3cret-token"
TEST_TIMEOUT = 12.0

# ---------------------------------------------------------------------------- helpers


def run_async(coro: Coroutine[Any, Any, object], timeout: float = TEST_TIMEOUT) -> None:
    async def guarded() -> None:
        await asyncio.wait_for(coro, timeout)

    asyncio.run(guarded())


def card_msg(code: int) -> cards_pb2.Card:
    return cards_pb2.Card(
        color=(code >> 4) + 1,  # type: ignore[arg-type]
        rank=(code & 15) + 1,  # type: ignore[arg-type]
        code=code,
        name=C.name(code),
    )


def legal_msg(action_id: int) -> game_pb2.LegalAction:
    act = A.decode(action_id)
    msg = game_pb2.LegalAction(
        id=action_id,
        kind=int(act.kind) + 1,  # type: ignore[arg-type]
        uno=act.uno,
        description=act.describe(),
    )
    if act.card >= 0:
        msg.card.CopyFrom(card_msg(act.card))
    if act.color >= 0:
        msg.color = act.color + 1  # type: ignore[assignment]
    if act.target >= 0:
        msg.target_seat = act.target
    return msg


def proto_view(hand: Hand, seat: int) -> game_pb2.SeatView:
    """The protocol SeatView of ``seat``, built by hand from the engine's state."""
    over = hand.phase == OVER
    v = game_pb2.SeatView(
        seat=seat,
        hand=[card_msg(c) for c in sorted(hand.hands[seat])],
        active_color=(hand.color + 1 if hand.phase != 4 else 0),  # type: ignore[arg-type]
        direction=(
            game_pb2.DIRECTION_INCREASING if hand.direction == 1 else game_pb2.DIRECTION_DECREASING
        ),
        seats=[
            game_pb2.SeatState(seat=s, card_count=len(h), uno_called=hand.uno_called[s])
            for s, h in enumerate(hand.hands)
        ],
        draw_pile_size=len(hand.draw_pile),
        discard_pile_size=len(hand.discard),
        dealer=hand.dealer,
        phase=hand.phase + 1,  # type: ignore[arg-type]
        hand_number=hand.hand_number,
        turn=hand.turn,
    )
    if hand.discard:
        v.top_card.CopyFrom(card_msg(hand.discard[-1]))
    if not over:
        v.current_seat = hand.current
    if hand.window >= 0:
        v.uno_window.offender = hand.window
    if hand.drawn >= 0 and hand.current == seat:
        v.drawn_card.CopyFrom(card_msg(hand.drawn))
    if hand.winner >= 0:
        v.winner = hand.winner
    return v


def engine_request(
    hand: Hand, seat: int, *, request_id: str = "r1", match_id: str = "m1"
) -> DecisionRequest:
    return bot_pb2.DecisionRequest(
        request_id=request_id,
        match_id=match_id,
        seat=seat,
        hand_number=hand.hand_number,
        turn=hand.turn,
        prompt=bot_pb2.PROMPT_TURN,
        required=True,
        time_left_ms=1000,
        decision_ms=1000,
        view=proto_view(hand, seat),
        legal_actions=[legal_msg(a) for a in hand.legal_actions(seat)],
    )


def simple_request(
    request_id: str,
    match_id: str = "m1",
    seat: int = 0,
    *,
    legal: tuple[int, ...] = (0, 1070, 1230),
    default: int | None = 0,
    time_left_ms: int = 2000,
    required: bool = True,
    sequence: int = 0,
) -> bot_pb2.PlayResponse:
    req = bot_pb2.DecisionRequest(
        request_id=request_id,
        match_id=match_id,
        seat=seat,
        hand_number=1,
        prompt=bot_pb2.PROMPT_TURN if required else bot_pb2.PROMPT_UNO_WINDOW,
        required=required,
        time_left_ms=time_left_ms,
        legal_actions=[legal_msg(a) for a in legal],
    )
    if default is not None:
        req.default_action_id = default
    if sequence:
        req.events.add(sequence=sequence, hand_number=1).passed.seat = seat
    return bot_pb2.PlayResponse(decision_request=req)


def welcome(session_id: str = "sess-1", *seats: tuple[str, int]) -> bot_pb2.PlayResponse:
    return bot_pb2.PlayResponse(
        welcome=bot_pb2.Welcome(
            session_id=session_id,
            server_version="fake",
            protocol_version=1,
            bot_name="tester",
            seats=[bot_pb2.SeatRef(match_id=m, seat=s) for m, s in seats],
        )
    )


class FakeStream:
    """The server side of one Play call."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.metadata = {k: v for k, v in context.invocation_metadata()}

    async def recv(self, timeout: float = 5.0) -> bot_pb2.PlayRequest:
        msg = await asyncio.wait_for(self.context.read(), timeout)
        assert msg is not grpc.aio.EOF, "the bot closed its side"
        assert isinstance(msg, bot_pb2.PlayRequest)
        return msg

    async def recv_action(self, timeout: float = 5.0) -> bot_pb2.Action:
        msg = await self.recv(timeout)
        assert msg.WhichOneof("kind") == "action", msg
        return msg.action

    async def send(self, resp: bot_pb2.PlayResponse) -> None:
        await self.context.write(resp)

    async def accept(self, action: bot_pb2.Action, match_id: str = "m1", seat: int = 0) -> None:
        await self.send(
            bot_pb2.PlayResponse(
                action_result=bot_pb2.ActionResult(
                    request_id=action.request_id,
                    match_id=match_id,
                    seat=seat,
                    action_id=action.action_id,
                    accepted=True,
                )
            )
        )

    async def handshake(self, session_id: str = "sess-1") -> bot_pb2.Hello:
        first = await self.recv()
        assert first.WhichOneof("kind") == "hello"
        await self.send(welcome(session_id))
        return first.hello


Script = Callable[[FakeStream, int], Awaitable[bool]]
"""Plays one stream (its 1-based index given); returns True when the test is complete."""


class FakeBotService(bot_pb2_grpc.BotServiceServicer):
    def __init__(self, script: Script) -> None:
        self.script = script
        self.streams: list[FakeStream] = []
        self.done = asyncio.Event()
        self.error: BaseException | None = None

    async def Play(self, request_iterator: Any, context: Any) -> None:  # noqa: N802
        stream = FakeStream(context)
        self.streams.append(stream)
        try:
            finished = await self.script(stream, len(self.streams))
        except grpc.aio.AbortError:
            raise  # the script ended the call with a status on purpose
        except Exception as exc:
            self.error = exc
            self.done.set()
            return
        if finished:
            self.done.set()
            # wait for the bot to leave (it half-closes on stop)
            while True:
                try:
                    msg = await asyncio.wait_for(context.read(), 5)
                except TimeoutError:
                    return
                if msg is grpc.aio.EOF:
                    return


async def play_against(script: Script, bot_: Bot, **config: Any) -> BotClient:
    """Start the fake server and a BotClient, run ``script`` to completion, stop the client."""
    server = grpc.aio.server()
    service = FakeBotService(script)
    bot_pb2_grpc.add_BotServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    cfg = ClientConfig(
        addr=f"127.0.0.1:{port}",
        token=TOKEN,
        name="tester",
        backoff_initial=0.02,
        backoff_max=0.1,
        stop_grace=1.0,
        **config,
    )
    client = BotClient(bot_, cfg)
    task = asyncio.create_task(client.run())
    try:
        done = asyncio.create_task(service.done.wait())
        await asyncio.wait({done, task}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            done.cancel()
            task.result()  # raises the client's error
            raise AssertionError("client returned before the script finished")
        assert done.done(), "script did not finish in time"
        if service.error is not None:
            raise service.error
    finally:
        client.stop()
        await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 5)
        await server.stop(None)
    return client


class RecordingBot(Bot):
    """Answers the first play (else the first id), records each call with the seat's state."""

    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int, int]] = []
        self.ended: list[tuple[str, int, int]] = []

    def decide(self, request: DecisionRequest, state: MatchState) -> int:
        state.data["n"] = state.data.get("n", 0) + 1
        self.calls.append((request.request_id, state.match_id, state.seat, state.data["n"]))
        plays = [a.id for a in request.legal_actions if a.kind == game_pb2.ACTION_KIND_PLAY]
        return plays[0] if plays else request.legal_actions[0].id

    def on_match_ended(self, state: MatchState, ended: bot_pb2.MatchEnded) -> None:
        self.ended.append((state.match_id, state.seat, state.data.get("n", 0)))


# ---------------------------------------------------------------------------- stream tests


def test_hello_with_bearer_token_and_legal_answer() -> None:
    seen: dict[str, Any] = {}

    async def script(stream: FakeStream, index: int) -> bool:
        seen["metadata"] = stream.metadata
        hello = await stream.handshake()
        seen["hello"] = hello
        await stream.send(simple_request("r1"))
        action = await stream.recv_action()
        seen["action"] = action
        await stream.accept(action)
        return True

    async def main() -> None:
        b = RecordingBot()
        b.version = "9.9"
        client = await play_against(script, b)
        assert client.session_id == "sess-1"

    run_async(main())
    assert seen["metadata"]["authorization"] == f"Bearer {TOKEN}"
    hello = seen["hello"]
    assert hello.bot_name == "tester"
    assert hello.bot_version == "9.9"
    assert hello.protocol_version == 1
    assert not hello.HasField("resume")
    action = seen["action"]
    assert action.request_id == "r1"
    assert action.HasField("action_id")
    assert action.action_id == 1070  # legal, and a play preferred to drawing


def test_two_matches_interleave_with_separate_state() -> None:
    answers: list[str] = []
    order: list[str] = []

    states: dict[str, MatchState] = {}

    class SlowOnA(Bot):
        name = "interleaver"

        def on_match_started(self, state: MatchState) -> None:
            states[state.match_id] = state

        async def decide(self, request: DecisionRequest, state: MatchState) -> int:
            state.data.setdefault("ids", []).append(request.request_id)
            order.append(f"start {request.request_id}")
            if state.match_id == "A":
                await asyncio.sleep(0.3)  # A thinks long; B must not wait for it
            order.append(f"end {request.request_id}")
            return request.legal_actions[-1].id

    bot_ = SlowOnA()

    async def script(stream: FakeStream, index: int) -> bool:
        await stream.handshake()
        for match_id, seat in (("A", 0), ("B", 2)):
            await stream.send(
                bot_pb2.PlayResponse(
                    match_started=bot_pb2.MatchStarted(match_id=match_id, seat=seat)
                )
            )
        await stream.send(simple_request("a1", "A", 0))
        await stream.send(simple_request("b1", "B", 2))
        for _ in range(2):
            answers.append((await stream.recv_action()).request_id)
        await stream.send(simple_request("b2", "B", 2))
        await stream.send(simple_request("a2", "A", 0))
        for _ in range(2):
            answers.append((await stream.recv_action()).request_id)
        await stream.send(
            bot_pb2.PlayResponse(match_ended=bot_pb2.MatchEnded(match_id="B", seat=2, won=True))
        )
        await asyncio.sleep(0.05)
        return True

    async def main() -> None:
        client = await play_against(script, bot_)
        # B ended and was dropped, A is still live
        assert set(client.states) == {("A", 0)}

    run_async(main())
    assert answers == ["b1", "a1", "b2", "a2"]
    assert order.index("end b1") < order.index("end a1")
    assert states["A"].data["ids"] == ["a1", "a2"]
    assert states["B"].data["ids"] == ["b1", "b2"]
    assert states["A"] is not states["B"]
    assert states["A"].seat == 0 and states["B"].seat == 2
    assert states["A"].decisions == 2


def test_fallback_on_exception_timeout_and_illegal_id() -> None:
    results: dict[str, tuple[int, float]] = {}

    class Faulty(Bot):
        name = "faulty"

        async def decide(self, request: DecisionRequest, state: MatchState) -> int | None:
            if request.request_id == "raise":
                raise RuntimeError("boom")
            if request.request_id.startswith("slow"):
                await asyncio.sleep(30)
            if request.request_id == "optional-none":
                return None
            return 4242  # not legal

    async def script(stream: FakeStream, index: int) -> bool:
        await stream.handshake()
        cases = [
            simple_request("raise", legal=(0, 1070), default=0),
            simple_request("slow", legal=(0, 1070), default=0, time_left_ms=200),
            simple_request("slow-nodefault", legal=(1, 1070), default=None, time_left_ms=200),
            simple_request("illegal", legal=(2, 3), default=2),
        ]
        for case in cases:
            t0 = time.monotonic()
            await stream.send(case)
            action = await stream.recv_action(timeout=3)
            results[action.request_id] = (action.action_id, time.monotonic() - t0)
        # an optional request whose decide returns None stays unanswered; the next required
        # request is answered (so nothing was queued in between)
        await stream.send(simple_request("optional-none", legal=(5, 11), required=False))
        await stream.send(simple_request("raise", legal=(0, 1070), default=0))
        action = await stream.recv_action(timeout=3)
        assert action.request_id == "raise"
        return True

    run_async(play_against(script, Faulty()))
    assert results["raise"][0] == 0
    assert results["slow"][0] == 0
    assert results["slow"][1] < 1.0  # answered at the deadline, not after the 30 s sleep
    assert results["slow-nodefault"][0] == 1  # first legal id without a default
    assert results["illegal"][0] == 2


def test_sync_decide_in_thread_times_out() -> None:
    got: list[int] = []

    @bot(name="sleepy")
    def sleepy(request: DecisionRequest) -> int:
        time.sleep(0.6)
        return request.legal_actions[-1].id

    async def script(stream: FakeStream, index: int) -> bool:
        await stream.handshake()
        await stream.send(simple_request("r1", legal=(0, 1070), default=0, time_left_ms=100))
        got.append((await stream.recv_action(timeout=0.5)).action_id)
        return True

    run_async(play_against(script, sleepy))
    assert got == [0]


def test_rejection_is_retried_once_with_the_fallback() -> None:
    got: list[int] = []

    @bot(name="stubborn")
    async def stubborn(request: DecisionRequest, state: MatchState) -> int:
        return 1070

    async def script(stream: FakeStream, index: int) -> bool:
        await stream.handshake()
        await stream.send(simple_request("r1", legal=(0, 1070), default=0))
        first = await stream.recv_action()
        got.append(first.action_id)
        await stream.send(
            bot_pb2.PlayResponse(
                action_result=bot_pb2.ActionResult(
                    request_id="r1",
                    match_id="m1",
                    action_id=first.action_id,
                    accepted=False,
                    code=9,
                    message="no",
                    request_open=True,
                )
            )
        )
        got.append((await stream.recv_action()).action_id)
        return True

    run_async(play_against(script, stubborn))
    assert got == [1070, 0]


def test_reconnects_and_resumes_after_the_server_drops_the_stream() -> None:
    hellos: list[bot_pb2.Hello] = []
    answered: list[str] = []

    async def script(stream: FakeStream, index: int) -> bool:
        assert stream.metadata["authorization"] == f"Bearer {TOKEN}"
        first = await stream.recv()
        hellos.append(first.hello)
        if index == 1:
            await stream.send(welcome("sess-A", ("m1", 1)))
            await stream.send(
                bot_pb2.PlayResponse(match_started=bot_pb2.MatchStarted(match_id="m1", seat=1))
            )
            await stream.send(simple_request("r1", "m1", 1, sequence=7))
            answered.append((await stream.recv_action()).request_id)
            await stream.context.abort(grpc.StatusCode.UNAVAILABLE, "server restarting")
        await stream.send(welcome("sess-A", ("m1", 1)))
        await stream.send(simple_request("r2", "m1", 1, sequence=9))
        answered.append((await stream.recv_action()).request_id)
        return True

    bot_ = RecordingBot()

    async def main() -> None:
        client = await play_against(script, bot_)
        assert client.connections == 2

    run_async(main())
    assert len(hellos) == 2
    assert not hellos[0].HasField("resume")
    resume = hellos[1].resume
    assert resume.session_id == "sess-A"
    assert [(c.match_id, c.seat, c.last_sequence) for c in resume.cursors] == [("m1", 1, 7)]
    assert answered == ["r1", "r2"]
    # the match state survived the reconnect
    assert [(m, s, n) for _, m, s, n in bot_.calls] == [("m1", 1, 1), ("m1", 1, 2)]


def test_reconnects_when_the_server_is_not_up_yet_and_refuses_bad_tokens() -> None:
    async def main() -> None:
        # nothing listens on this port: the client keeps retrying, then gives up when told to
        cfg = ClientConfig(
            addr=f"127.0.0.1:{free_port()}",
            token=TOKEN,
            backoff_initial=0.01,
            backoff_max=0.02,
            max_reconnects=3,
        )
        with pytest.raises(ConnectionError):
            await BotClient(RecordingBot(), cfg).run()

        async def refuse(stream: FakeStream, index: int) -> bool:
            await stream.context.abort(grpc.StatusCode.UNAUTHENTICATED, "INVALID_TOKEN")
            return False

        with pytest.raises(FatalStreamError) as err:
            await play_against(refuse, RecordingBot())
        assert err.value.code == grpc.StatusCode.UNAUTHENTICATED

    run_async(main())


def free_port() -> int:
    """A free TCP port on 127.0.0.1 nobody listens on (bound then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_stop_returns_promptly_and_half_closes() -> None:
    seen_eof: list[bool] = []

    async def main() -> None:
        server = grpc.aio.server()

        class Service(bot_pb2_grpc.BotServiceServicer):
            async def Play(self, request_iterator: Any, context: Any) -> None:  # noqa: N802
                stream = FakeStream(context)
                await stream.handshake()
                msg = await asyncio.wait_for(context.read(), 5)
                seen_eof.append(msg is grpc.aio.EOF)

        bot_pb2_grpc.add_BotServiceServicer_to_server(Service(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        client = BotClient(RecordingBot(), ClientConfig(addr=f"127.0.0.1:{port}", token=TOKEN))
        task = asyncio.create_task(client.run())
        while client.connections == 0:
            await asyncio.sleep(0.01)
        t0 = time.monotonic()
        client.stop()
        await asyncio.wait_for(task, 3)
        assert time.monotonic() - t0 < 2.5
        await server.stop(None)

    run_async(main())
    assert seen_eof == [True]


# ---------------------------------------------------------------------------- pure tests


def test_fallback_action_rules() -> None:
    req = simple_request("r", legal=(0, 1070), default=0).decision_request
    assert fallback_action(req) == 0
    req = simple_request("r", legal=(1, 1070), default=None).decision_request
    assert fallback_action(req) == 1
    req = simple_request("r", legal=(5, 11), default=None, required=False).decision_request
    assert fallback_action(req) == 5
    req = simple_request("r", legal=(1070,), default=None, required=False).decision_request
    assert fallback_action(req) is None


def test_backoff_is_capped_exponential_with_jitter() -> None:
    client = BotClient(RecordingBot(), ClientConfig(backoff_initial=0.5, backoff_max=8.0))
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (40, 8.0)]:
        delays = [client.backoff_delay(attempt) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1


def test_command_line_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNO_ARENA_ADDR", "example:1234")
    monkeypatch.setenv("UNO_ARENA_TOKEN", "envtok")
    monkeypatch.setenv("UNO_ARENA_BOT_NAME", "envname")
    _, cfg = parse_args([])
    assert (cfg.addr, cfg.token, cfg.name) == ("example:1234", "envtok", "envname")
    _, cfg = parse_args(["--addr", "h:1", "--token", "T", "--name", "py-heuristic"])
    assert (cfg.addr, cfg.token, cfg.name) == ("h:1", "T", "py-heuristic")
    monkeypatch.delenv("UNO_ARENA_TOKEN")
    with pytest.raises(SystemExit):
        parse_args([])


def test_decorated_function_is_callable() -> None:
    @bot(name="first")
    def first(request: DecisionRequest) -> int:
        return request.legal_actions[0].id

    assert first.name == "first"
    assert first(simple_request("r").decision_request) == 0


# ---------------------------------------------------------------------------- convert


def _positions(rules: RuleSet, seed: int, steps: int) -> Iterator[tuple[Hand, int]]:
    """(hand, seat) for every seat at every step of a random game; the hand moves on when the
    consumer asks for the next pair, so look at it before that."""
    rng = random.Random(seed)
    hand = Hand.deal(rules, seed=seed, dealer=seed % rules.seats)
    for _ in range(steps):
        for s in range(rules.seats):
            yield hand, s
        actors = [s for s in range(rules.seats) if hand.legal_actions(s)]
        if hand.phase == OVER or not actors:
            break
        seat = rng.choice(actors)
        legal = hand.legal_actions(seat)
        plays = [a for a in legal if a >= A.PLAY_BASE]
        hand.apply(seat, rng.choice(plays) if plays and rng.random() < 0.97 else legal[0])


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet(),
        RuleSet(seats=2),
        RuleSet(seats=5, stacking=True, stacking_wd4=True, jump_in=True, seven_o=True),
        RuleSet(seats=3, draw_until_playable=True, first_flip="redraw"),
    ],
    ids=["default", "two", "house", "redraw"],
)
def test_convert_round_trip_matches_engine_views(rules: RuleSet) -> None:
    phases: set[str] = set()
    windows = drawn = 0
    for seed in range(3):
        for hand, seat in _positions(rules, seed, 600):
            expected = seat_view(hand, seat)
            got = view_to_engine(proto_view(hand, seat), hand.legal_actions(seat))
            assert got == expected, (seed, hand.turn, seat)
            phases.add(expected.phase)
            windows += expected.uno_window >= 0
            drawn += expected.drawn_card >= 0
    assert {"turn", "drawn", "over"} <= phases
    assert drawn > 0 and windows > 0


def test_convert_fields_by_hand() -> None:
    view = game_pb2.SeatView(
        seat=1,
        hand=[card_msg(C.WILD), card_msg(7), card_msg(58)],
        active_color=cards_pb2.COLOR_BLUE,
        direction=game_pb2.DIRECTION_DECREASING,
        seats=[game_pb2.SeatState(seat=s, card_count=n) for s, n in enumerate((5, 3, 1))],
        phase=game_pb2.PHASE_DRAWN,
        dealer=2,
        hand_number=3,
        turn=17,
    )
    view.top_card.CopyFrom(card_msg(52))
    view.current_seat = 1
    view.drawn_card.CopyFrom(card_msg(58))
    view.uno_window.offender = 2
    got = view_to_engine(view, [1, 1580])
    assert got == EngineSeatView(
        seat=1,
        hand_number=3,
        turn=17,
        phase="drawn",
        hand=(7, 58, 77),
        top_card=52,
        active_color=3,
        direction=-1,
        dealer=2,
        current=1,
        card_counts=(5, 3, 1),
        uno_called=(False, False, False),
        draw_pile=0,
        discard_pile=0,
        uno_window=2,
        drawn_card=58,
        legal_actions=(1, 1580),
        over=False,
        winner=-1,
    )
    # unset optional messages and fields map to the engine's -1
    bare = game_pb2.SeatView(phase=game_pb2.PHASE_CHOOSE_COLOR)
    got = view_to_engine(bare, [20, 21, 22, 23])
    assert (got.top_card, got.active_color, got.current, got.uno_window, got.drawn_card) == (
        -1,
        -1,
        -1,
        -1,
        -1,
    )
    assert got.winner == -1 and got.direction == 1 and got.phase == "choose_color"


def test_example_bots_answer_legal_ids_like_the_engine() -> None:
    rules = RuleSet()
    heuristic = ExampleHeuristicBot()
    rnd = ExampleRandomBot(seed=3)
    checked = 0
    for seed in range(4):
        for hand, seat in _positions(rules, seed, 150):
            legal = hand.legal_actions(seat)
            if not legal:
                continue
            req = engine_request(hand, seat, match_id=f"m{seed}")
            st = MatchState(match_id=f"m{seed}", seat=seat)
            got = heuristic.decide(req, st)
            assert got in legal
            assert got == HeuristicBot().choose(seat_view(hand, seat))
            assert rnd.decide(req, st) in legal
            assert to_engine_view(req).legal_actions == tuple(legal)
            checked += 1
    assert checked > 100
