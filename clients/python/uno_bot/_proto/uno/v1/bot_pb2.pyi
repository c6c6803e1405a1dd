import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from uno_bot._proto.uno.v1 import errors_pb2 as _errors_pb2
from uno_bot._proto.uno.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Prompt(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROMPT_UNSPECIFIED: _ClassVar[Prompt]
    PROMPT_TURN: _ClassVar[Prompt]
    PROMPT_DRAWN: _ClassVar[Prompt]
    PROMPT_WILD_DRAW_FOUR: _ClassVar[Prompt]
    PROMPT_STACK: _ClassVar[Prompt]
    PROMPT_CHOOSE_COLOR: _ClassVar[Prompt]
    PROMPT_UNO_WINDOW: _ClassVar[Prompt]
    PROMPT_LATE_UNO: _ClassVar[Prompt]
    PROMPT_JUMP_IN: _ClassVar[Prompt]

class CloseReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOSE_REASON_UNSPECIFIED: _ClassVar[CloseReason]
    CLOSE_REASON_TIMED_OUT: _ClassVar[CloseReason]
    CLOSE_REASON_EXPIRED: _ClassVar[CloseReason]
    CLOSE_REASON_SUPERSEDED: _ClassVar[CloseReason]
    CLOSE_REASON_HAND_ENDED: _ClassVar[CloseReason]
    CLOSE_REASON_MATCH_ENDED: _ClassVar[CloseReason]
    CLOSE_REASON_TAKEN_OVER: _ClassVar[CloseReason]
PROMPT_UNSPECIFIED: Prompt
PROMPT_TURN: Prompt
PROMPT_DRAWN: Prompt
PROMPT_WILD_DRAW_FOUR: Prompt
PROMPT_STACK: Prompt
PROMPT_CHOOSE_COLOR: Prompt
PROMPT_UNO_WINDOW: Prompt
PROMPT_LATE_UNO: Prompt
PROMPT_JUMP_IN: Prompt
CLOSE_REASON_UNSPECIFIED: CloseReason
CLOSE_REASON_TIMED_OUT: CloseReason
CLOSE_REASON_EXPIRED: CloseReason
CLOSE_REASON_SUPERSEDED: CloseReason
CLOSE_REASON_HAND_ENDED: CloseReason
CLOSE_REASON_MATCH_ENDED: CloseReason
CLOSE_REASON_TAKEN_OVER: CloseReason

class PlayRequest(_message.Message):
    __slots__ = ("hello", "action", "ping", "actions")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: Action
    ping: Ping
    actions: ActionBatch
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., actions: _Optional[_Union[ActionBatch, _Mapping]] = ...) -> None: ...

class ActionBatch(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[Action]
    def __init__(self, actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("bot_name", "bot_version", "protocol_version", "resume", "max_concurrent_matches", "push_events", "max_batch")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_MATCHES_FIELD_NUMBER: _ClassVar[int]
    PUSH_EVENTS_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCH_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    bot_version: str
    protocol_version: int
    resume: Resume
    max_concurrent_matches: int
    push_events: bool
    max_batch: int
    def __init__(self, bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., resume: _Optional[_Union[Resume, _Mapping]] = ..., max_concurrent_matches: _Optional[int] = ..., push_events: _Optional[bool] = ..., max_batch: _Optional[int] = ...) -> None: ...

class Resume(_message.Message):
    __slots__ = ("session_id", "cursors")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CURSORS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    cursors: _containers.RepeatedCompositeFieldContainer[EventCursor]
    def __init__(self, session_id: _Optional[str] = ..., cursors: _Optional[_Iterable[_Union[EventCursor, _Mapping]]] = ...) -> None: ...

class EventCursor(_message.Message):
    __slots__ = ("match_id", "seat", "last_sequence")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    last_sequence: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., last_sequence: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("request_id", "action_id")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    action_id: int
    def __init__(self, request_id: _Optional[str] = ..., action_id: _Optional[int] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce", "sent_at")
    NONCE_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    sent_at: _timestamp_pb2.Timestamp
    def __init__(self, nonce: _Optional[int] = ..., sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("welcome", "decision_request", "action_result", "request_closed", "match_started", "match_ended", "seat_events", "pong", "error", "batch")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    ACTION_RESULT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CLOSED_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    SEAT_EVENTS_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    decision_request: DecisionRequest
    action_result: ActionResult
    request_closed: RequestClosed
    match_started: MatchStarted
    match_ended: MatchEnded
    seat_events: SeatEvents
    pong: Pong
    error: StreamError
    batch: ResponseBatch
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., action_result: _Optional[_Union[ActionResult, _Mapping]] = ..., request_closed: _Optional[_Union[RequestClosed, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., seat_events: _Optional[_Union[SeatEvents, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., error: _Optional[_Union[StreamError, _Mapping]] = ..., batch: _Optional[_Union[ResponseBatch, _Mapping]] = ...) -> None: ...

class ResponseBatch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[PlayResponse]
    def __init__(self, messages: _Optional[_Iterable[_Union[PlayResponse, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("session_id", "server_version", "protocol_version", "supported_protocol_versions", "resumed", "bot_name", "server_time", "seats")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    server_version: str
    protocol_version: int
    supported_protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    resumed: bool
    bot_name: str
    server_time: _timestamp_pb2.Timestamp
    seats: _containers.RepeatedCompositeFieldContainer[SeatRef]
    def __init__(self, session_id: _Optional[str] = ..., server_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., supported_protocol_versions: _Optional[_Iterable[int]] = ..., resumed: _Optional[bool] = ..., bot_name: _Optional[str] = ..., server_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[SeatRef, _Mapping]]] = ...) -> None: ...

class SeatRef(_message.Message):
    __slots__ = ("match_id", "seat")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "match_id", "seat", "hand_number", "turn", "prompt", "required", "deadline", "time_left_ms", "decision_ms", "time_bank_ms", "strikes", "default_action_id", "view", "legal_actions", "events", "rules", "sent_at", "resent", "previous_response_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    RESENT_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_RESPONSE_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    seat: int
    hand_number: int
    turn: int
    prompt: Prompt
    required: bool
    deadline: _timestamp_pb2.Timestamp
    time_left_ms: int
    decision_ms: int
    time_bank_ms: int
    strikes: int
    default_action_id: int
    view: _game_pb2.SeatView
    legal_actions: _containers.RepeatedCompositeFieldContainer[_game_pb2.LegalAction]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    rules: _game_pb2.RuleSet
    sent_at: _timestamp_pb2.Timestamp
    resent: bool
    previous_response_ms: int
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., hand_number: _Optional[int] = ..., turn: _Optional[int] = ..., prompt: _Optional[_Union[Prompt, str]] = ..., required: _Optional[bool] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_left_ms: _Optional[int] = ..., decision_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., strikes: _Optional[int] = ..., default_action_id: _Optional[int] = ..., view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[_game_pb2.LegalAction, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resent: _Optional[bool] = ..., previous_response_ms: _Optional[int] = ...) -> None: ...

class ActionResult(_message.Message):
    __slots__ = ("request_id", "match_id", "seat", "action_id", "code", "reason", "message", "request_open", "received_at", "response_ms", "time_bank_ms", "field")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_OPEN_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    seat: int
    action_id: int
    code: int
    reason: _errors_pb2.ErrorReason
    message: str
    request_open: bool
    received_at: _timestamp_pb2.Timestamp
    response_ms: int
    time_bank_ms: int
    field: str
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., action_id: _Optional[int] = ..., code: _Optional[int] = ..., reason: _Optional[_Union[_errors_pb2.ErrorReason, str]] = ..., message: _Optional[str] = ..., request_open: _Optional[bool] = ..., received_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., response_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., field: _Optional[str] = ...) -> None: ...

class RequestClosed(_message.Message):
    __slots__ = ("request_id", "match_id", "seat", "reason", "applied_action_id", "strikes")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    APPLIED_ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    seat: int
    reason: CloseReason
    applied_action_id: int
    strikes: int
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., reason: _Optional[_Union[CloseReason, str]] = ..., applied_action_id: _Optional[int] = ..., strikes: _Optional[int] = ...) -> None: ...

class SeatAssignment(_message.Message):
    __slots__ = ("seat", "player", "bot_version")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player: _game_pb2.Player
    bot_version: str
    def __init__(self, seat: _Optional[int] = ..., player: _Optional[_Union[_game_pb2.Player, _Mapping]] = ..., bot_version: _Optional[str] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "seat", "seats", "rules", "time_control", "started_at", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatAssignment]
    rules: _game_pb2.RuleSet
    time_control: _game_pb2.TimeControl
    started_at: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatAssignment, _Mapping]]] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("match_id", "seat", "cause", "winners", "totals", "won", "events", "strikes", "rejected_actions", "taken_over", "stale_actions")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    WON_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    REJECTED_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TAKEN_OVER_FIELD_NUMBER: _ClassVar[int]
    STALE_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    cause: _game_pb2.EndCause
    winners: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    won: bool
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    strikes: int
    rejected_actions: int
    taken_over: bool
    stale_actions: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., cause: _Optional[_Union[_game_pb2.EndCause, str]] = ..., winners: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., won: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., strikes: _Optional[int] = ..., rejected_actions: _Optional[int] = ..., taken_over: _Optional[bool] = ..., stale_actions: _Optional[int] = ...) -> None: ...

class SeatEvents(_message.Message):
    __slots__ = ("match_id", "seat", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce", "client_sent_at", "server_time")
    NONCE_FIELD_NUMBER: _ClassVar[int]
    CLIENT_SENT_AT_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    client_sent_at: _timestamp_pb2.Timestamp
    server_time: _timestamp_pb2.Timestamp
    def __init__(self, nonce: _Optional[int] = ..., client_sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., server_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class StreamError(_message.Message):
    __slots__ = ("code", "reason", "message", "fatal", "field")
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FATAL_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    code: int
    reason: _errors_pb2.ErrorReason
    message: str
    fatal: bool
    field: str
    def __init__(self, code: _Optional[int] = ..., reason: _Optional[_Union[_errors_pb2.ErrorReason, str]] = ..., message: _Optional[str] = ..., fatal: _Optional[bool] = ..., field: _Optional[str] = ...) -> None: ...
