from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Color(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLOR_UNSPECIFIED: _ClassVar[Color]
    COLOR_RED: _ClassVar[Color]
    COLOR_YELLOW: _ClassVar[Color]
    COLOR_GREEN: _ClassVar[Color]
    COLOR_BLUE: _ClassVar[Color]
    COLOR_WILD: _ClassVar[Color]

class Rank(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RANK_UNSPECIFIED: _ClassVar[Rank]
    RANK_ZERO: _ClassVar[Rank]
    RANK_ONE: _ClassVar[Rank]
    RANK_TWO: _ClassVar[Rank]
    RANK_THREE: _ClassVar[Rank]
    RANK_FOUR: _ClassVar[Rank]
    RANK_FIVE: _ClassVar[Rank]
    RANK_SIX: _ClassVar[Rank]
    RANK_SEVEN: _ClassVar[Rank]
    RANK_EIGHT: _ClassVar[Rank]
    RANK_NINE: _ClassVar[Rank]
    RANK_SKIP: _ClassVar[Rank]
    RANK_REVERSE: _ClassVar[Rank]
    RANK_DRAW_TWO: _ClassVar[Rank]
    RANK_WILD: _ClassVar[Rank]
    RANK_WILD_DRAW_FOUR: _ClassVar[Rank]
COLOR_UNSPECIFIED: Color
COLOR_RED: Color
COLOR_YELLOW: Color
COLOR_GREEN: Color
COLOR_BLUE: Color
COLOR_WILD: Color
RANK_UNSPECIFIED: Rank
RANK_ZERO: Rank
RANK_ONE: Rank
RANK_TWO: Rank
RANK_THREE: Rank
RANK_FOUR: Rank
RANK_FIVE: Rank
RANK_SIX: Rank
RANK_SEVEN: Rank
RANK_EIGHT: Rank
RANK_NINE: Rank
RANK_SKIP: Rank
RANK_REVERSE: Rank
RANK_DRAW_TWO: Rank
RANK_WILD: Rank
RANK_WILD_DRAW_FOUR: Rank

class Card(_message.Message):
    __slots__ = ("color", "rank", "code", "name")
    COLOR_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    color: Color
    rank: Rank
    code: int
    name: str
    def __init__(self, color: _Optional[_Union[Color, str]] = ..., rank: _Optional[_Union[Rank, str]] = ..., code: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...

class CardList(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ...) -> None: ...
