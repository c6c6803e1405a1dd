import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from uno_server.gen.uno.v1 import bot_pb2 as _bot_pb2
from uno_server.gen.uno.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MatchState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATE_UNSPECIFIED: _ClassVar[MatchState]
    MATCH_STATE_RUNNING: _ClassVar[MatchState]
    MATCH_STATE_FINISHED: _ClassVar[MatchState]
    MATCH_STATE_CANCELLED: _ClassVar[MatchState]
MATCH_STATE_UNSPECIFIED: MatchState
MATCH_STATE_RUNNING: MatchState
MATCH_STATE_FINISHED: MatchState
MATCH_STATE_CANCELLED: MatchState

class MatchSeat(_message.Message):
    __slots__ = ("seat", "player", "bot_version", "connected", "strikes", "rejected_actions", "taken_over", "takeover_cause", "time_bank_ms", "decisions", "mean_response_ms", "response_ms", "stale_actions")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    REJECTED_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TAKEN_OVER_FIELD_NUMBER: _ClassVar[int]
    TAKEOVER_CAUSE_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    MEAN_RESPONSE_MS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_MS_FIELD_NUMBER: _ClassVar[int]
    STALE_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player: _game_pb2.Player
    bot_version: str
    connected: bool
    strikes: int
    rejected_actions: int
    taken_over: bool
    takeover_cause: _game_pb2.EndCause
    time_bank_ms: int
    decisions: int
    mean_response_ms: int
    response_ms: _containers.RepeatedScalarFieldContainer[int]
    stale_actions: int
    def __init__(self, seat: _Optional[int] = ..., player: _Optional[_Union[_game_pb2.Player, _Mapping]] = ..., bot_version: _Optional[str] = ..., connected: _Optional[bool] = ..., strikes: _Optional[int] = ..., rejected_actions: _Optional[int] = ..., taken_over: _Optional[bool] = ..., takeover_cause: _Optional[_Union[_game_pb2.EndCause, str]] = ..., time_bank_ms: _Optional[int] = ..., decisions: _Optional[int] = ..., mean_response_ms: _Optional[int] = ..., response_ms: _Optional[_Iterable[int]] = ..., stale_actions: _Optional[int] = ...) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("match_id", "state", "seats", "rules", "time_control", "seed", "hand_number", "totals", "winners", "created_at", "started_at", "ended_at", "labels", "idempotency_key", "end_cause", "end_message", "last_sequence")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    END_CAUSE_FIELD_NUMBER: _ClassVar[int]
    END_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    state: MatchState
    seats: _containers.RepeatedCompositeFieldContainer[MatchSeat]
    rules: _game_pb2.RuleSet
    time_control: _game_pb2.TimeControl
    seed: int
    hand_number: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    created_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    idempotency_key: str
    end_cause: _game_pb2.EndCause
    end_message: str
    last_sequence: int
    def __init__(self, match_id: _Optional[str] = ..., state: _Optional[_Union[MatchState, str]] = ..., seats: _Optional[_Iterable[_Union[MatchSeat, _Mapping]]] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., seed: _Optional[int] = ..., hand_number: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., idempotency_key: _Optional[str] = ..., end_cause: _Optional[_Union[_game_pb2.EndCause, str]] = ..., end_message: _Optional[str] = ..., last_sequence: _Optional[int] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("seats", "rules", "seed", "time_control", "dealer", "labels", "idempotency_key")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.Player]
    rules: _game_pb2.RuleSet
    seed: int
    time_control: _game_pb2.TimeControl
    dealer: int
    labels: _containers.ScalarMap[str, str]
    idempotency_key: str
    def __init__(self, seats: _Optional[_Iterable[_Union[_game_pb2.Player, _Mapping]]] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., seed: _Optional[int] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., dealer: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match", "created")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    created: bool
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("match",)
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "states", "bot_name", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    states: _containers.RepeatedScalarFieldContainer[MatchState]
    bot_name: str
    labels: _containers.ScalarMap[str, str]
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., states: _Optional[_Iterable[_Union[MatchState, str]]] = ..., bot_name: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "next_page_token")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    next_page_token: str
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id", "after_sequence")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    after_sequence: int
    def __init__(self, match_id: _Optional[str] = ..., after_sequence: _Optional[int] = ...) -> None: ...

class WatchMatchResponse(_message.Message):
    __slots__ = ("match", "event")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    event: _game_pb2.Event
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ...) -> None: ...

class AwaitMatchRequest(_message.Message):
    __slots__ = ("match_id", "after_sequence")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    after_sequence: int
    def __init__(self, match_id: _Optional[str] = ..., after_sequence: _Optional[int] = ...) -> None: ...

class AwaitMatchResponse(_message.Message):
    __slots__ = ("match", "truncated", "events")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    truncated: bool
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ..., truncated: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class PlayMatchRequest(_message.Message):
    __slots__ = ("create",)
    CREATE_FIELD_NUMBER: _ClassVar[int]
    create: CreateMatchRequest
    def __init__(self, create: _Optional[_Union[CreateMatchRequest, _Mapping]] = ...) -> None: ...

class PlayMatchResponse(_message.Message):
    __slots__ = ("match", "truncated", "events")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    truncated: bool
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ..., truncated: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class CancelMatchRequest(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelMatchResponse(_message.Message):
    __slots__ = ("match",)
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match: MatchInfo
    def __init__(self, match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BotInfo(_message.Message):
    __slots__ = ("bot_name", "bot_version", "session_id", "protocol_version", "connected", "connected_at", "disconnected_at", "peer", "seats", "max_concurrent_matches", "open_requests", "rejected_actions", "stream_errors", "running_seats", "stale_actions")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_AT_FIELD_NUMBER: _ClassVar[int]
    DISCONNECTED_AT_FIELD_NUMBER: _ClassVar[int]
    PEER_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_MATCHES_FIELD_NUMBER: _ClassVar[int]
    OPEN_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    STREAM_ERRORS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_SEATS_FIELD_NUMBER: _ClassVar[int]
    STALE_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    bot_version: str
    session_id: str
    protocol_version: int
    connected: bool
    connected_at: _timestamp_pb2.Timestamp
    disconnected_at: _timestamp_pb2.Timestamp
    peer: str
    seats: _containers.RepeatedCompositeFieldContainer[_bot_pb2.SeatRef]
    max_concurrent_matches: int
    open_requests: int
    rejected_actions: int
    stream_errors: int
    running_seats: int
    stale_actions: int
    def __init__(self, bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., session_id: _Optional[str] = ..., protocol_version: _Optional[int] = ..., connected: _Optional[bool] = ..., connected_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., disconnected_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., peer: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[_bot_pb2.SeatRef, _Mapping]]] = ..., max_concurrent_matches: _Optional[int] = ..., open_requests: _Optional[int] = ..., rejected_actions: _Optional[int] = ..., stream_errors: _Optional[int] = ..., running_seats: _Optional[int] = ..., stale_actions: _Optional[int] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotInfo]
    def __init__(self, bots: _Optional[_Iterable[_Union[BotInfo, _Mapping]]] = ...) -> None: ...

class RegisterBotRequest(_message.Message):
    __slots__ = ("bot_name", "token", "token_sha256")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOKEN_SHA256_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    token: str
    token_sha256: str
    def __init__(self, bot_name: _Optional[str] = ..., token: _Optional[str] = ..., token_sha256: _Optional[str] = ...) -> None: ...

class RegisterBotResponse(_message.Message):
    __slots__ = ("created",)
    CREATED_FIELD_NUMBER: _ClassVar[int]
    created: bool
    def __init__(self, created: _Optional[bool] = ...) -> None: ...

class RetireBotRequest(_message.Message):
    __slots__ = ("bot_name",)
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    def __init__(self, bot_name: _Optional[str] = ...) -> None: ...

class RetireBotResponse(_message.Message):
    __slots__ = ("connected",)
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    connected: bool
    def __init__(self, connected: _Optional[bool] = ...) -> None: ...
