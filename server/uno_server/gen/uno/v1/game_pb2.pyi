import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from uno_server.gen.uno.v1 import cards_pb2 as _cards_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FirstFlip(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FIRST_FLIP_UNSPECIFIED: _ClassVar[FirstFlip]
    FIRST_FLIP_APPLY: _ClassVar[FirstFlip]
    FIRST_FLIP_REDRAW: _ClassVar[FirstFlip]

class Scoring(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_UNSPECIFIED: _ClassVar[Scoring]
    SCORING_STANDARD: _ClassVar[Scoring]
    SCORING_LOWEST: _ClassVar[Scoring]
    SCORING_SINGLE_HAND: _ClassVar[Scoring]

class BuiltinBot(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BUILTIN_BOT_UNSPECIFIED: _ClassVar[BuiltinBot]
    BUILTIN_BOT_RANDOM: _ClassVar[BuiltinBot]
    BUILTIN_BOT_HEURISTIC: _ClassVar[BuiltinBot]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_TURN: _ClassVar[Phase]
    PHASE_DRAWN: _ClassVar[Phase]
    PHASE_CHALLENGE: _ClassVar[Phase]
    PHASE_STACK: _ClassVar[Phase]
    PHASE_CHOOSE_COLOR: _ClassVar[Phase]
    PHASE_OVER: _ClassVar[Phase]

class Direction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIRECTION_UNSPECIFIED: _ClassVar[Direction]
    DIRECTION_INCREASING: _ClassVar[Direction]
    DIRECTION_DECREASING: _ClassVar[Direction]

class PenaltyKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PENALTY_KIND_UNSPECIFIED: _ClassVar[PenaltyKind]
    PENALTY_KIND_WILD_DRAW_FOUR: _ClassVar[PenaltyKind]
    PENALTY_KIND_DRAW_TWO_STACK: _ClassVar[PenaltyKind]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_DRAW: _ClassVar[ActionKind]
    ACTION_KIND_PASS: _ClassVar[ActionKind]
    ACTION_KIND_ACCEPT: _ClassVar[ActionKind]
    ACTION_KIND_CHALLENGE: _ClassVar[ActionKind]
    ACTION_KIND_CALL_UNO: _ClassVar[ActionKind]
    ACTION_KIND_NO_CATCH: _ClassVar[ActionKind]
    ACTION_KIND_CATCH: _ClassVar[ActionKind]
    ACTION_KIND_CHOOSE_COLOR: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]

class DrawReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRAW_REASON_UNSPECIFIED: _ClassVar[DrawReason]
    DRAW_REASON_DRAW: _ClassVar[DrawReason]
    DRAW_REASON_DRAW_TWO: _ClassVar[DrawReason]
    DRAW_REASON_WILD_DRAW_FOUR: _ClassVar[DrawReason]
    DRAW_REASON_STACK: _ClassVar[DrawReason]
    DRAW_REASON_BLUFF_CAUGHT: _ClassVar[DrawReason]
    DRAW_REASON_CHALLENGE_FAILED: _ClassVar[DrawReason]
    DRAW_REASON_UNO_CAUGHT: _ClassVar[DrawReason]

class EndCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_CAUSE_UNSPECIFIED: _ClassVar[EndCause]
    END_CAUSE_COMPLETED: _ClassVar[EndCause]
    END_CAUSE_CANCELLED: _ClassVar[EndCause]
    END_CAUSE_SHUTDOWN: _ClassVar[EndCause]
    END_CAUSE_STRIKES: _ClassVar[EndCause]
    END_CAUSE_DISCONNECTED: _ClassVar[EndCause]
FIRST_FLIP_UNSPECIFIED: FirstFlip
FIRST_FLIP_APPLY: FirstFlip
FIRST_FLIP_REDRAW: FirstFlip
SCORING_UNSPECIFIED: Scoring
SCORING_STANDARD: Scoring
SCORING_LOWEST: Scoring
SCORING_SINGLE_HAND: Scoring
BUILTIN_BOT_UNSPECIFIED: BuiltinBot
BUILTIN_BOT_RANDOM: BuiltinBot
BUILTIN_BOT_HEURISTIC: BuiltinBot
PHASE_UNSPECIFIED: Phase
PHASE_TURN: Phase
PHASE_DRAWN: Phase
PHASE_CHALLENGE: Phase
PHASE_STACK: Phase
PHASE_CHOOSE_COLOR: Phase
PHASE_OVER: Phase
DIRECTION_UNSPECIFIED: Direction
DIRECTION_INCREASING: Direction
DIRECTION_DECREASING: Direction
PENALTY_KIND_UNSPECIFIED: PenaltyKind
PENALTY_KIND_WILD_DRAW_FOUR: PenaltyKind
PENALTY_KIND_DRAW_TWO_STACK: PenaltyKind
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_DRAW: ActionKind
ACTION_KIND_PASS: ActionKind
ACTION_KIND_ACCEPT: ActionKind
ACTION_KIND_CHALLENGE: ActionKind
ACTION_KIND_CALL_UNO: ActionKind
ACTION_KIND_NO_CATCH: ActionKind
ACTION_KIND_CATCH: ActionKind
ACTION_KIND_CHOOSE_COLOR: ActionKind
ACTION_KIND_PLAY: ActionKind
DRAW_REASON_UNSPECIFIED: DrawReason
DRAW_REASON_DRAW: DrawReason
DRAW_REASON_DRAW_TWO: DrawReason
DRAW_REASON_WILD_DRAW_FOUR: DrawReason
DRAW_REASON_STACK: DrawReason
DRAW_REASON_BLUFF_CAUGHT: DrawReason
DRAW_REASON_CHALLENGE_FAILED: DrawReason
DRAW_REASON_UNO_CAUGHT: DrawReason
END_CAUSE_UNSPECIFIED: EndCause
END_CAUSE_COMPLETED: EndCause
END_CAUSE_CANCELLED: EndCause
END_CAUSE_SHUTDOWN: EndCause
END_CAUSE_STRIKES: EndCause
END_CAUSE_DISCONNECTED: EndCause

class RuleSet(_message.Message):
    __slots__ = ("seats", "decks", "hand_size", "first_flip", "scoring", "target_score", "uno_penalty", "uno_window_ms", "two_seat_rules", "stacking", "stacking_wd4", "jump_in", "seven_o", "draw_until_playable", "partners", "challenge_uno")
    SEATS_FIELD_NUMBER: _ClassVar[int]
    DECKS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    FIRST_FLIP_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    TARGET_SCORE_FIELD_NUMBER: _ClassVar[int]
    UNO_PENALTY_FIELD_NUMBER: _ClassVar[int]
    UNO_WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    TWO_SEAT_RULES_FIELD_NUMBER: _ClassVar[int]
    STACKING_FIELD_NUMBER: _ClassVar[int]
    STACKING_WD4_FIELD_NUMBER: _ClassVar[int]
    JUMP_IN_FIELD_NUMBER: _ClassVar[int]
    SEVEN_O_FIELD_NUMBER: _ClassVar[int]
    DRAW_UNTIL_PLAYABLE_FIELD_NUMBER: _ClassVar[int]
    PARTNERS_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_UNO_FIELD_NUMBER: _ClassVar[int]
    seats: int
    decks: int
    hand_size: int
    first_flip: FirstFlip
    scoring: Scoring
    target_score: int
    uno_penalty: int
    uno_window_ms: int
    two_seat_rules: bool
    stacking: bool
    stacking_wd4: bool
    jump_in: bool
    seven_o: bool
    draw_until_playable: bool
    partners: bool
    challenge_uno: bool
    def __init__(self, seats: _Optional[int] = ..., decks: _Optional[int] = ..., hand_size: _Optional[int] = ..., first_flip: _Optional[_Union[FirstFlip, str]] = ..., scoring: _Optional[_Union[Scoring, str]] = ..., target_score: _Optional[int] = ..., uno_penalty: _Optional[int] = ..., uno_window_ms: _Optional[int] = ..., two_seat_rules: _Optional[bool] = ..., stacking: _Optional[bool] = ..., stacking_wd4: _Optional[bool] = ..., jump_in: _Optional[bool] = ..., seven_o: _Optional[bool] = ..., draw_until_playable: _Optional[bool] = ..., partners: _Optional[bool] = ..., challenge_uno: _Optional[bool] = ...) -> None: ...

class Player(_message.Message):
    __slots__ = ("bot_name", "builtin")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BUILTIN_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    builtin: BuiltinBot
    def __init__(self, bot_name: _Optional[str] = ..., builtin: _Optional[_Union[BuiltinBot, str]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "time_bank_ms", "strikes_before_takeover", "reconnect_grace_ms", "takeover_bot")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    STRIKES_BEFORE_TAKEOVER_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    TAKEOVER_BOT_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    time_bank_ms: int
    strikes_before_takeover: int
    reconnect_grace_ms: int
    takeover_bot: BuiltinBot
    def __init__(self, decision_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., strikes_before_takeover: _Optional[int] = ..., reconnect_grace_ms: _Optional[int] = ..., takeover_bot: _Optional[_Union[BuiltinBot, str]] = ...) -> None: ...

class SeatState(_message.Message):
    __slots__ = ("seat", "card_count", "score", "uno_called", "eliminated", "team", "taken_over")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_COUNT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    UNO_CALLED_FIELD_NUMBER: _ClassVar[int]
    ELIMINATED_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    TAKEN_OVER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card_count: int
    score: int
    uno_called: bool
    eliminated: bool
    team: int
    taken_over: bool
    def __init__(self, seat: _Optional[int] = ..., card_count: _Optional[int] = ..., score: _Optional[int] = ..., uno_called: _Optional[bool] = ..., eliminated: _Optional[bool] = ..., team: _Optional[int] = ..., taken_over: _Optional[bool] = ...) -> None: ...

class UnoWindow(_message.Message):
    __slots__ = ("offender", "opened_at", "closes_at", "awaiting")
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    OPENED_AT_FIELD_NUMBER: _ClassVar[int]
    CLOSES_AT_FIELD_NUMBER: _ClassVar[int]
    AWAITING_FIELD_NUMBER: _ClassVar[int]
    offender: int
    opened_at: _timestamp_pb2.Timestamp
    closes_at: _timestamp_pb2.Timestamp
    awaiting: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, offender: _Optional[int] = ..., opened_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., closes_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., awaiting: _Optional[_Iterable[int]] = ...) -> None: ...

class PendingPenalty(_message.Message):
    __slots__ = ("kind", "cards", "offender")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    kind: PenaltyKind
    cards: int
    offender: int
    def __init__(self, kind: _Optional[_Union[PenaltyKind, str]] = ..., cards: _Optional[int] = ..., offender: _Optional[int] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "hand", "top_card", "active_color", "direction", "current_seat", "play_order", "seats", "draw_pile_size", "discard_pile_size", "dealer", "phase", "drawn_card", "uno_window", "pending_penalty", "hand_number", "turn", "winner")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TOP_CARD_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_COLOR_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    CURRENT_SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAY_ORDER_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    UNO_WINDOW_FIELD_NUMBER: _ClassVar[int]
    PENDING_PENALTY_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    top_card: _cards_pb2.Card
    active_color: _cards_pb2.Color
    direction: Direction
    current_seat: int
    play_order: _containers.RepeatedScalarFieldContainer[int]
    seats: _containers.RepeatedCompositeFieldContainer[SeatState]
    draw_pile_size: int
    discard_pile_size: int
    dealer: int
    phase: Phase
    drawn_card: _cards_pb2.Card
    uno_window: UnoWindow
    pending_penalty: PendingPenalty
    hand_number: int
    turn: int
    winner: int
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., top_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., active_color: _Optional[_Union[_cards_pb2.Color, str]] = ..., direction: _Optional[_Union[Direction, str]] = ..., current_seat: _Optional[int] = ..., play_order: _Optional[_Iterable[int]] = ..., seats: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ..., draw_pile_size: _Optional[int] = ..., discard_pile_size: _Optional[int] = ..., dealer: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., drawn_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., uno_window: _Optional[_Union[UnoWindow, _Mapping]] = ..., pending_penalty: _Optional[_Union[PendingPenalty, _Mapping]] = ..., hand_number: _Optional[int] = ..., turn: _Optional[int] = ..., winner: _Optional[int] = ...) -> None: ...

class LegalAction(_message.Message):
    __slots__ = ("id", "kind", "card", "color", "uno", "target_seat", "description")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    UNO_FIELD_NUMBER: _ClassVar[int]
    TARGET_SEAT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    id: int
    kind: ActionKind
    card: _cards_pb2.Card
    color: _cards_pb2.Color
    uno: bool
    target_seat: int
    description: str
    def __init__(self, id: _Optional[int] = ..., kind: _Optional[_Union[ActionKind, str]] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., color: _Optional[_Union[_cards_pb2.Color, str]] = ..., uno: _Optional[bool] = ..., target_seat: _Optional[int] = ..., description: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("sequence", "hand_number", "time", "hand_started", "dealt", "first_card", "played", "color_chosen", "drew", "passed", "skipped", "reversed", "reshuffled", "accepted", "challenged", "challenge_evidence", "uno_called", "uno_window_opened", "uno_window_closed", "no_catch", "caught", "hands_swapped", "hands_rotated", "hand_ended", "hand_scored", "dealer_draw", "dealer_chosen", "seat_eliminated", "match_ended", "timed_out", "taken_over", "connection", "match_cancelled")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    HAND_STARTED_FIELD_NUMBER: _ClassVar[int]
    DEALT_FIELD_NUMBER: _ClassVar[int]
    FIRST_CARD_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    COLOR_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    DREW_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    REVERSED_FIELD_NUMBER: _ClassVar[int]
    RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    UNO_CALLED_FIELD_NUMBER: _ClassVar[int]
    UNO_WINDOW_OPENED_FIELD_NUMBER: _ClassVar[int]
    UNO_WINDOW_CLOSED_FIELD_NUMBER: _ClassVar[int]
    NO_CATCH_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_FIELD_NUMBER: _ClassVar[int]
    HANDS_SWAPPED_FIELD_NUMBER: _ClassVar[int]
    HANDS_ROTATED_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    HAND_SCORED_FIELD_NUMBER: _ClassVar[int]
    DEALER_DRAW_FIELD_NUMBER: _ClassVar[int]
    DEALER_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_ELIMINATED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    TAKEN_OVER_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_FIELD_NUMBER: _ClassVar[int]
    MATCH_CANCELLED_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    hand_number: int
    time: _timestamp_pb2.Timestamp
    hand_started: HandStartedEvent
    dealt: DealtEvent
    first_card: FirstCardEvent
    played: PlayedEvent
    color_chosen: ColorChosenEvent
    drew: DrewEvent
    passed: PassedEvent
    skipped: SkippedEvent
    reversed: ReversedEvent
    reshuffled: ReshuffledEvent
    accepted: AcceptedEvent
    challenged: ChallengedEvent
    challenge_evidence: ChallengeEvidenceEvent
    uno_called: UnoCalledEvent
    uno_window_opened: UnoWindowOpenedEvent
    uno_window_closed: UnoWindowClosedEvent
    no_catch: NoCatchEvent
    caught: CaughtEvent
    hands_swapped: HandsSwappedEvent
    hands_rotated: HandsRotatedEvent
    hand_ended: HandEndedEvent
    hand_scored: HandScoredEvent
    dealer_draw: DealerDrawEvent
    dealer_chosen: DealerChosenEvent
    seat_eliminated: SeatEliminatedEvent
    match_ended: MatchEndedEvent
    timed_out: TimedOutEvent
    taken_over: TakenOverEvent
    connection: ConnectionEvent
    match_cancelled: MatchCancelledEvent
    def __init__(self, sequence: _Optional[int] = ..., hand_number: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., hand_started: _Optional[_Union[HandStartedEvent, _Mapping]] = ..., dealt: _Optional[_Union[DealtEvent, _Mapping]] = ..., first_card: _Optional[_Union[FirstCardEvent, _Mapping]] = ..., played: _Optional[_Union[PlayedEvent, _Mapping]] = ..., color_chosen: _Optional[_Union[ColorChosenEvent, _Mapping]] = ..., drew: _Optional[_Union[DrewEvent, _Mapping]] = ..., passed: _Optional[_Union[PassedEvent, _Mapping]] = ..., skipped: _Optional[_Union[SkippedEvent, _Mapping]] = ..., reversed: _Optional[_Union[ReversedEvent, _Mapping]] = ..., reshuffled: _Optional[_Union[ReshuffledEvent, _Mapping]] = ..., accepted: _Optional[_Union[AcceptedEvent, _Mapping]] = ..., challenged: _Optional[_Union[ChallengedEvent, _Mapping]] = ..., challenge_evidence: _Optional[_Union[ChallengeEvidenceEvent, _Mapping]] = ..., uno_called: _Optional[_Union[UnoCalledEvent, _Mapping]] = ..., uno_window_opened: _Optional[_Union[UnoWindowOpenedEvent, _Mapping]] = ..., uno_window_closed: _Optional[_Union[UnoWindowClosedEvent, _Mapping]] = ..., no_catch: _Optional[_Union[NoCatchEvent, _Mapping]] = ..., caught: _Optional[_Union[CaughtEvent, _Mapping]] = ..., hands_swapped: _Optional[_Union[HandsSwappedEvent, _Mapping]] = ..., hands_rotated: _Optional[_Union[HandsRotatedEvent, _Mapping]] = ..., hand_ended: _Optional[_Union[HandEndedEvent, _Mapping]] = ..., hand_scored: _Optional[_Union[HandScoredEvent, _Mapping]] = ..., dealer_draw: _Optional[_Union[DealerDrawEvent, _Mapping]] = ..., dealer_chosen: _Optional[_Union[DealerChosenEvent, _Mapping]] = ..., seat_eliminated: _Optional[_Union[SeatEliminatedEvent, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEndedEvent, _Mapping]] = ..., timed_out: _Optional[_Union[TimedOutEvent, _Mapping]] = ..., taken_over: _Optional[_Union[TakenOverEvent, _Mapping]] = ..., connection: _Optional[_Union[ConnectionEvent, _Mapping]] = ..., match_cancelled: _Optional[_Union[MatchCancelledEvent, _Mapping]] = ...) -> None: ...

class HandStartedEvent(_message.Message):
    __slots__ = ("hand_number", "dealer", "seat_count", "seats")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    SEAT_COUNT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    dealer: int
    seat_count: int
    seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., seat_count: _Optional[int] = ..., seats: _Optional[_Iterable[int]] = ...) -> None: ...

class DealtEvent(_message.Message):
    __slots__ = ("seat", "amount", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    amount: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, seat: _Optional[int] = ..., amount: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class FirstCardEvent(_message.Message):
    __slots__ = ("card", "returned")
    CARD_FIELD_NUMBER: _ClassVar[int]
    RETURNED_FIELD_NUMBER: _ClassVar[int]
    card: _cards_pb2.Card
    returned: bool
    def __init__(self, card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., returned: _Optional[bool] = ...) -> None: ...

class PlayedEvent(_message.Message):
    __slots__ = ("seat", "card", "color", "uno", "out_of_turn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    UNO_FIELD_NUMBER: _ClassVar[int]
    OUT_OF_TURN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: _cards_pb2.Card
    color: _cards_pb2.Color
    uno: bool
    out_of_turn: bool
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., color: _Optional[_Union[_cards_pb2.Color, str]] = ..., uno: _Optional[bool] = ..., out_of_turn: _Optional[bool] = ...) -> None: ...

class ColorChosenEvent(_message.Message):
    __slots__ = ("seat", "color")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    seat: int
    color: _cards_pb2.Color
    def __init__(self, seat: _Optional[int] = ..., color: _Optional[_Union[_cards_pb2.Color, str]] = ...) -> None: ...

class DrewEvent(_message.Message):
    __slots__ = ("seat", "amount", "cards", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    amount: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    reason: DrawReason
    def __init__(self, seat: _Optional[int] = ..., amount: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., reason: _Optional[_Union[DrawReason, str]] = ...) -> None: ...

class PassedEvent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class SkippedEvent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class ReversedEvent(_message.Message):
    __slots__ = ("direction",)
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    direction: Direction
    def __init__(self, direction: _Optional[_Union[Direction, str]] = ...) -> None: ...

class ReshuffledEvent(_message.Message):
    __slots__ = ("amount",)
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    amount: int
    def __init__(self, amount: _Optional[int] = ...) -> None: ...

class AcceptedEvent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class ChallengedEvent(_message.Message):
    __slots__ = ("challenger", "offender", "bluff")
    CHALLENGER_FIELD_NUMBER: _ClassVar[int]
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    BLUFF_FIELD_NUMBER: _ClassVar[int]
    challenger: int
    offender: int
    bluff: bool
    def __init__(self, challenger: _Optional[int] = ..., offender: _Optional[int] = ..., bluff: _Optional[bool] = ...) -> None: ...

class ChallengeEvidenceEvent(_message.Message):
    __slots__ = ("challenger", "offender", "hand")
    CHALLENGER_FIELD_NUMBER: _ClassVar[int]
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    challenger: int
    offender: int
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, challenger: _Optional[int] = ..., offender: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class UnoCalledEvent(_message.Message):
    __slots__ = ("seat", "late")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LATE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    late: bool
    def __init__(self, seat: _Optional[int] = ..., late: _Optional[bool] = ...) -> None: ...

class UnoWindowOpenedEvent(_message.Message):
    __slots__ = ("seat", "closes_at")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CLOSES_AT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    closes_at: _timestamp_pb2.Timestamp
    def __init__(self, seat: _Optional[int] = ..., closes_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class UnoWindowClosedEvent(_message.Message):
    __slots__ = ("seat", "caught")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    caught: bool
    def __init__(self, seat: _Optional[int] = ..., caught: _Optional[bool] = ...) -> None: ...

class NoCatchEvent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class CaughtEvent(_message.Message):
    __slots__ = ("catcher", "offender", "penalty")
    CATCHER_FIELD_NUMBER: _ClassVar[int]
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    PENALTY_FIELD_NUMBER: _ClassVar[int]
    catcher: int
    offender: int
    penalty: int
    def __init__(self, catcher: _Optional[int] = ..., offender: _Optional[int] = ..., penalty: _Optional[int] = ...) -> None: ...

class HandsSwappedEvent(_message.Message):
    __slots__ = ("seat", "target")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    seat: int
    target: int
    def __init__(self, seat: _Optional[int] = ..., target: _Optional[int] = ...) -> None: ...

class HandsRotatedEvent(_message.Message):
    __slots__ = ("direction",)
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    direction: Direction
    def __init__(self, direction: _Optional[_Union[Direction, str]] = ...) -> None: ...

class HandEndedEvent(_message.Message):
    __slots__ = ("winner", "points_held", "hands", "seed", "dealer", "actions")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    POINTS_HELD_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    winner: int
    points_held: _containers.RepeatedScalarFieldContainer[int]
    hands: _containers.RepeatedCompositeFieldContainer[_cards_pb2.CardList]
    seed: int
    dealer: int
    actions: _containers.RepeatedCompositeFieldContainer[SeatAction]
    def __init__(self, winner: _Optional[int] = ..., points_held: _Optional[_Iterable[int]] = ..., hands: _Optional[_Iterable[_Union[_cards_pb2.CardList, _Mapping]]] = ..., seed: _Optional[int] = ..., dealer: _Optional[int] = ..., actions: _Optional[_Iterable[_Union[SeatAction, _Mapping]]] = ...) -> None: ...

class SeatAction(_message.Message):
    __slots__ = ("seat", "action_id")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action_id: int
    def __init__(self, seat: _Optional[int] = ..., action_id: _Optional[int] = ...) -> None: ...

class HandScoredEvent(_message.Message):
    __slots__ = ("hand_number", "gained", "totals")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    GAINED_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    gained: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hand_number: _Optional[int] = ..., gained: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class DealerDrawEvent(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: _cards_pb2.Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ...) -> None: ...

class DealerChosenEvent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class SeatEliminatedEvent(_message.Message):
    __slots__ = ("seat", "total")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    total: int
    def __init__(self, seat: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class MatchEndedEvent(_message.Message):
    __slots__ = ("winners", "totals", "seed")
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    seed: int
    def __init__(self, winners: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., seed: _Optional[int] = ...) -> None: ...

class TimedOutEvent(_message.Message):
    __slots__ = ("seat", "action_id", "strikes")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action_id: int
    strikes: int
    def __init__(self, seat: _Optional[int] = ..., action_id: _Optional[int] = ..., strikes: _Optional[int] = ...) -> None: ...

class TakenOverEvent(_message.Message):
    __slots__ = ("seat", "bot", "cause")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot: BuiltinBot
    cause: EndCause
    def __init__(self, seat: _Optional[int] = ..., bot: _Optional[_Union[BuiltinBot, str]] = ..., cause: _Optional[_Union[EndCause, str]] = ...) -> None: ...

class ConnectionEvent(_message.Message):
    __slots__ = ("seat", "connected")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    connected: bool
    def __init__(self, seat: _Optional[int] = ..., connected: _Optional[bool] = ...) -> None: ...

class MatchCancelledEvent(_message.Message):
    __slots__ = ("cause", "message")
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    cause: EndCause
    message: str
    def __init__(self, cause: _Optional[_Union[EndCause, str]] = ..., message: _Optional[str] = ...) -> None: ...
