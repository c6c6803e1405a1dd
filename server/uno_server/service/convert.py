"""Engine values to ``uno.v1`` messages and back. The only place that knows both.

Protocol enums are the engine numbers plus one (zero is ``*_UNSPECIFIED``). Card and legal-action
messages never change, so they are built once and copied into each request.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final, NamedTuple

from google.protobuf.timestamp_pb2 import Timestamp

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.errors import InvalidRulesError
from uno_server.engine.hand import PHASE_NAMES, Hand
from uno_server.engine.rules import FIRST_FLIP, SCORING, RuleSet
from uno_server.gen.uno.v1 import cards_pb2, game_pb2

CARDS: Final[dict[int, cards_pb2.Card]] = {
    code: cards_pb2.Card(color=(code >> 4) + 1, rank=(code & 15) + 1, code=code, name=C.name(code))
    for code in C.ALL_CODES
}

_DRAW_REASONS: Final = {
    "draw": game_pb2.DRAW_REASON_DRAW,
    "draw_two": game_pb2.DRAW_REASON_DRAW_TWO,
    "wild_draw_four": game_pb2.DRAW_REASON_WILD_DRAW_FOUR,
    "stack": game_pb2.DRAW_REASON_STACK,
    "bluff_caught": game_pb2.DRAW_REASON_BLUFF_CAUGHT,
    "challenge_failed": game_pb2.DRAW_REASON_CHALLENGE_FAILED,
    "uno_caught": game_pb2.DRAW_REASON_UNO_CAUGHT,
}
_KINDS: Final = {
    A.Kind.DRAW: game_pb2.ACTION_KIND_DRAW,
    A.Kind.PASS: game_pb2.ACTION_KIND_PASS,
    A.Kind.ACCEPT: game_pb2.ACTION_KIND_ACCEPT,
    A.Kind.CHALLENGE: game_pb2.ACTION_KIND_CHALLENGE,
    A.Kind.CALL_UNO: game_pb2.ACTION_KIND_CALL_UNO,
    A.Kind.NO_CATCH: game_pb2.ACTION_KIND_NO_CATCH,
    A.Kind.CATCH: game_pb2.ACTION_KIND_CATCH,
    A.Kind.CHOOSE_COLOR: game_pb2.ACTION_KIND_CHOOSE_COLOR,
    A.Kind.PLAY: game_pb2.ACTION_KIND_PLAY,
}
_LEGAL_CACHE: dict[int, game_pb2.LegalAction] = {}


class TimedOut(NamedTuple):
    """Service event: the seat did not answer in time; ``action_id`` was played for it."""

    seat: int
    action_id: int
    strikes: int


class TakenOver(NamedTuple):
    """Service event: the built-in ``bot`` (BuiltinBot number) plays the seat from now on."""

    seat: int
    bot: int
    cause: int


class Connection(NamedTuple):
    """Service event: the bot holding ``seat`` connected or disconnected."""

    seat: int
    connected: bool


class MatchCancelled(NamedTuple):
    """Service event: the match was stopped before its end (``cause`` is an EndCause number)."""

    cause: int
    message: str


ServiceEvent = TimedOut | TakenOver | Connection | MatchCancelled


def direction(d: int) -> int:
    return game_pb2.DIRECTION_INCREASING if d > 0 else game_pb2.DIRECTION_DECREASING


def legal_action(action_id: int) -> game_pb2.LegalAction:
    """The structural description of an action id (cached: ids are stable)."""
    msg = _LEGAL_CACHE.get(action_id)
    if msg is None:
        act = A.decode(action_id)
        msg = game_pb2.LegalAction(id=action_id, kind=_KINDS[act.kind], description=act.describe())
        if act.card >= 0:
            msg.card.CopyFrom(CARDS[act.card])
        if act.color >= 0:
            msg.color = act.color + 1
        msg.uno = act.uno
        if act.target >= 0:
            msg.target_seat = act.target
        _LEGAL_CACHE[action_id] = msg
    return msg


def timestamp(seconds: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(seconds * 1e9))
    return ts


def rules_to_proto(rules: RuleSet) -> game_pb2.RuleSet:
    d = rules.to_dict()
    d["first_flip"] = FIRST_FLIP.index(rules.first_flip) + 1
    d["scoring"] = SCORING.index(rules.scoring) + 1
    return game_pb2.RuleSet(**d)


def rules_from_proto(msg: game_pb2.RuleSet, *, default_seats: int = 4) -> RuleSet:
    """A validated rule set; unset fields take the engine defaults (4 seats for the service)."""
    data: dict[str, Any] = {}
    for f in dataclasses.fields(RuleSet):
        if f.name in ("first_flip", "scoring"):
            continue
        if msg.HasField(f.name):
            data[f.name] = getattr(msg, f.name)
    if msg.first_flip:
        if not 1 <= msg.first_flip <= len(FIRST_FLIP):
            raise InvalidRulesError(f"rules.first_flip: unknown value {msg.first_flip}")
        data["first_flip"] = FIRST_FLIP[msg.first_flip - 1]
    if msg.scoring:
        if not 1 <= msg.scoring <= len(SCORING):
            raise InvalidRulesError(f"rules.scoring: unknown value {msg.scoring}")
        data["scoring"] = SCORING[msg.scoring - 1]
    data.setdefault("seats", default_seats)
    return RuleSet.from_dict(data)


def event_to_proto(
    event: E.Event | ServiceEvent, sequence: int, hand_number: int, at: Timestamp
) -> game_pb2.Event:
    """One already-redacted event (seats already in match numbering). The seed, dealer and
    actions of HandEnded, the seeds of MatchEnded and the seats of HandStarted are not in the
    engine's events: the table adds them."""
    msg = game_pb2.Event(sequence=sequence, hand_number=hand_number)
    msg.time.CopyFrom(at)
    t = type(event)
    if t is E.Played:
        assert isinstance(event, E.Played)
        p = msg.played
        p.seat = event.seat
        p.card.CopyFrom(CARDS[event.card])
        p.color = event.color + 1
        p.uno = event.uno
        p.out_of_turn = event.out_of_turn
    elif isinstance(event, E.Drew):
        dr = msg.drew
        dr.seat = event.seat
        dr.amount = event.amount
        dr.cards.extend(CARDS[c] for c in event.cards)
        dr.reason = _DRAW_REASONS[event.reason]
    elif isinstance(event, E.Passed):
        msg.passed.seat = event.seat
    elif isinstance(event, E.Skipped):
        msg.skipped.seat = event.seat
    elif isinstance(event, E.NoCatch):
        msg.no_catch.seat = event.seat
    elif isinstance(event, E.UnoWindowOpened):
        msg.uno_window_opened.seat = event.seat
    elif isinstance(event, E.UnoWindowClosed):
        msg.uno_window_closed.seat = event.seat
        msg.uno_window_closed.caught = event.caught
    elif isinstance(event, E.UnoCalled):
        msg.uno_called.seat = event.seat
        msg.uno_called.late = event.late
    elif isinstance(event, E.Reversed):
        msg.reversed.direction = direction(event.direction)
    elif isinstance(event, E.Reshuffled):
        msg.reshuffled.amount = event.amount
    elif isinstance(event, E.Accepted):
        msg.accepted.seat = event.seat
    elif isinstance(event, E.Challenged):
        msg.challenged.challenger = event.challenger
        msg.challenged.offender = event.offender
        msg.challenged.bluff = event.bluff
    elif isinstance(event, E.ChallengeEvidence):
        ev = msg.challenge_evidence
        ev.challenger = event.challenger
        ev.offender = event.offender
        ev.hand.extend(CARDS[c] for c in sorted(event.hand))
    elif isinstance(event, E.Caught):
        msg.caught.catcher = event.catcher
        msg.caught.offender = event.offender
        msg.caught.penalty = event.penalty
    elif isinstance(event, E.ColorChosen):
        msg.color_chosen.seat = event.seat
        msg.color_chosen.color = event.color + 1
    elif isinstance(event, E.HandStarted):
        msg.hand_started.hand_number = event.hand_number
        msg.hand_started.dealer = event.dealer
        msg.hand_started.seat_count = event.seats
    elif isinstance(event, E.Dealt):
        msg.dealt.seat = event.seat
        msg.dealt.amount = len(event.cards) if event.cards else 0
        msg.dealt.cards.extend(CARDS[c] for c in event.cards)
    elif isinstance(event, E.FirstCard):
        msg.first_card.card.CopyFrom(CARDS[event.card])
        msg.first_card.returned = event.returned
    elif isinstance(event, E.HandsSwapped):
        msg.hands_swapped.seat = event.seat
        msg.hands_swapped.target = event.target
    elif isinstance(event, E.HandsRotated):
        msg.hands_rotated.direction = direction(event.direction)
    elif isinstance(event, E.HandEnded):
        he = msg.hand_ended
        he.winner = event.winner
        he.points_held.extend(event.points_held)
        for h in event.hands:
            he.hands.add().cards.extend(CARDS[c] for c in sorted(h))
    elif isinstance(event, E.HandScored):
        msg.hand_scored.hand_number = event.hand_number
        msg.hand_scored.gained.extend(event.gained)
        msg.hand_scored.totals.extend(event.totals)
    elif isinstance(event, E.DealerDraw):
        msg.dealer_draw.seat = event.seat
        msg.dealer_draw.card.CopyFrom(CARDS[event.card])
    elif isinstance(event, E.DealerChosen):
        msg.dealer_chosen.seat = event.seat
    elif isinstance(event, E.SeatEliminated):
        msg.seat_eliminated.seat = event.seat
        msg.seat_eliminated.total = event.total
    elif isinstance(event, E.MatchEnded):
        msg.match_ended.winners.extend(event.winners)
        msg.match_ended.totals.extend(event.totals)
    elif isinstance(event, TimedOut):
        msg.timed_out.seat = event.seat
        msg.timed_out.action_id = event.action_id
        msg.timed_out.strikes = event.strikes
    elif isinstance(event, TakenOver):
        msg.taken_over.seat = event.seat
        msg.taken_over.bot = event.bot
        msg.taken_over.cause = event.cause
    elif isinstance(event, Connection):
        msg.connection.seat = event.seat
        msg.connection.connected = event.connected
    elif isinstance(event, MatchCancelled):
        msg.match_cancelled.cause = event.cause
        msg.match_cancelled.message = event.message
    else:  # pragma: no cover - every engine event is mapped above
        raise TypeError(f"no protocol mapping for {type(event).__name__}")
    return msg


_PHASES: Final = {name: i + 1 for i, name in enumerate(PHASE_NAMES)}


def seat_view(
    hand: Hand,
    seat: int,
    totals: list[int],
    taken_over: list[bool],
    window_closes_at: Timestamp | None,
    window_opened_at: Timestamp | None = None,
) -> game_pb2.SeatView:
    """The protocol view of ``seat`` when every match seat plays the hand (hand seats and match
    seats are the same numbers); :func:`seat_view_mapped` is the general case."""
    v = game_pb2.SeatView(
        seat=seat,
        draw_pile_size=len(hand.draw_pile),
        discard_pile_size=len(hand.discard),
        dealer=hand.dealer,
        phase=_PHASES[PHASE_NAMES[hand.phase]],
        hand_number=hand.hand_number,
        turn=hand.public_turn,
        direction=direction(hand.direction),
    )
    v.hand.extend(CARDS[c] for c in sorted(hand.hands[seat]))
    if hand.discard:
        v.top_card.CopyFrom(CARDS[hand.discard[-1]])
    if hand.color >= 0:
        v.active_color = hand.color + 1
    if not hand.over:
        v.current_seat = hand.current
    n = hand.n
    d = hand.direction
    v.play_order.extend((hand.current + d * k) % n for k in range(n))
    partners = hand.rules.partners
    for i in range(n):
        s = v.seats.add(
            seat=i,
            card_count=len(hand.hands[i]),
            score=totals[i],
            uno_called=hand.uno_called[i],
            taken_over=taken_over[i],
        )
        if partners:
            s.team = i % 2
    if hand.drawn >= 0 and hand.current == seat:
        v.drawn_card.CopyFrom(CARDS[hand.drawn])
    if hand.window >= 0:
        w = v.uno_window
        w.offender = hand.window
        if window_closes_at is not None:
            w.closes_at.CopyFrom(window_closes_at)
        if window_opened_at is not None:
            w.opened_at.CopyFrom(window_opened_at)
        w.awaiting.extend(hand.window_awaiting())
    owed = hand.penalty_owed
    if owed:
        pp = v.pending_penalty
        pp.cards = owed
        off = hand.wd4_offender
        if off >= 0:
            pp.kind = game_pb2.PENALTY_KIND_WILD_DRAW_FOUR
            pp.offender = off
        else:
            pp.kind = game_pb2.PENALTY_KIND_DRAW_TWO_STACK
    if hand.over:
        v.winner = hand.winner
    return v


def seat_view_mapped(
    hand: Hand,
    seat: int,
    totals: list[int],
    taken_over: list[bool],
    window_closes_at: Timestamp | None,
    h2m: list[int],
    window_opened_at: Timestamp | None = None,
) -> game_pb2.SeatView:
    """The protocol view of hand seat ``seat`` in a hand that only match seats ``h2m`` play
    (Challenge UNO): every seat number is a match seat, eliminated seats are listed as such."""
    v = game_pb2.SeatView(
        seat=h2m[seat],
        draw_pile_size=len(hand.draw_pile),
        discard_pile_size=len(hand.discard),
        dealer=h2m[hand.dealer],
        phase=_PHASES[PHASE_NAMES[hand.phase]],
        hand_number=hand.hand_number,
        turn=hand.public_turn,
        direction=direction(hand.direction),
    )
    v.hand.extend(CARDS[c] for c in sorted(hand.hands[seat]))
    if hand.discard:
        v.top_card.CopyFrom(CARDS[hand.discard[-1]])
    if hand.color >= 0:
        v.active_color = hand.color + 1
    if not hand.over:
        v.current_seat = h2m[hand.current]
    n = hand.n
    d = hand.direction
    v.play_order.extend(h2m[(hand.current + d * k) % n] for k in range(n))
    m2h = {m: h for h, m in enumerate(h2m)}
    for i in range(len(totals)):
        h = m2h.get(i)
        if h is None:
            v.seats.add(seat=i, score=totals[i], eliminated=True, taken_over=taken_over[i])
        else:
            v.seats.add(
                seat=i,
                card_count=len(hand.hands[h]),
                score=totals[i],
                uno_called=hand.uno_called[h],
                taken_over=taken_over[i],
            )
    if hand.drawn >= 0 and hand.current == seat:
        v.drawn_card.CopyFrom(CARDS[hand.drawn])
    if hand.window >= 0:
        w = v.uno_window
        w.offender = h2m[hand.window]
        if window_closes_at is not None:
            w.closes_at.CopyFrom(window_closes_at)
        if window_opened_at is not None:
            w.opened_at.CopyFrom(window_opened_at)
        w.awaiting.extend(h2m[s] for s in hand.window_awaiting())
    owed = hand.penalty_owed
    if owed:
        pp = v.pending_penalty
        pp.cards = owed
        off = hand.wd4_offender
        if off >= 0:
            pp.kind = game_pb2.PENALTY_KIND_WILD_DRAW_FOUR
            pp.offender = h2m[off]
        else:
            pp.kind = game_pb2.PENALTY_KIND_DRAW_TWO_STACK
    if hand.over:
        v.winner = h2m[hand.winner]
    return v


# ---------------------------------------------------------------- hand seats -> match seats


def id_to_wire(action_id: int, h2m: list[int]) -> int:
    """An engine action id of a hand with seats ``h2m`` as the protocol writes it: the seat
    inside a catch or a seven-o swap becomes a match seat."""
    if A.CATCH_BASE <= action_id < A.CATCH_BASE + 10:
        return A.CATCH_BASE + h2m[action_id - A.CATCH_BASE]
    if action_id >= A.SWAP_BASE:
        code, target = divmod(action_id - A.SWAP_BASE, 10)
        return A.SWAP_BASE + code * 10 + h2m[target]
    return action_id


def id_from_wire(action_id: int, m2h: dict[int, int]) -> int | None:
    """The engine id of a protocol action id, or None if it names a seat not in the hand."""
    if A.CATCH_BASE <= action_id < A.CATCH_BASE + 10:
        h = m2h.get(action_id - A.CATCH_BASE)
        return None if h is None else A.CATCH_BASE + h
    if A.SWAP_BASE <= action_id < A.SWAP_BASE + 800:
        code, target = divmod(action_id - A.SWAP_BASE, 10)
        h = m2h.get(target)
        return None if h is None else A.SWAP_BASE + code * 10 + h
    return action_id


def remap_event(event: E.Event, h2m: list[int], seats: int) -> E.Event:
    """A hand event with hand seats replaced by the match seats ``h2m`` (``seats`` of them).
    Match-level events (scoring, eliminations, the dealer draw) already use match seats."""
    t = type(event)
    ev: Any = event
    if t in _SEAT_EVENTS:
        return ev._replace(seat=h2m[ev.seat])  # type: ignore[no-any-return]
    if t is E.Challenged or t is E.ChallengeEvidence:
        return ev._replace(  # type: ignore[no-any-return]
            challenger=h2m[ev.challenger], offender=h2m[ev.offender]
        )
    if t is E.Caught:
        assert isinstance(event, E.Caught)
        return event._replace(catcher=h2m[event.catcher], offender=h2m[event.offender])
    if t is E.HandsSwapped:
        assert isinstance(event, E.HandsSwapped)
        return event._replace(seat=h2m[event.seat], target=h2m[event.target])
    if t is E.HandStarted:
        assert isinstance(event, E.HandStarted)
        return event._replace(dealer=h2m[event.dealer])
    if t is E.HandEnded:
        assert isinstance(event, E.HandEnded)
        points = [0] * seats
        hands: list[tuple[int, ...]] = [()] * seats
        for h, m in enumerate(h2m):
            points[m] = event.points_held[h]
            hands[m] = event.hands[h]
        return E.HandEnded(h2m[event.winner], tuple(points), tuple(hands))
    return event


_SEAT_EVENTS: Final = frozenset(
    {
        E.Dealt,
        E.Played,
        E.ColorChosen,
        E.Drew,
        E.Passed,
        E.Skipped,
        E.Accepted,
        E.UnoCalled,
        E.UnoWindowOpened,
        E.UnoWindowClosed,
        E.NoCatch,
    }
)
