"""A space other than the ASCII one in a printable field is refused as that, not as a "control"
character (docs: printable is letters, marks, numbers, punctuation, symbols and the ASCII space
only)."""

from __future__ import annotations

from uno_server.gen.uno.v1 import bot_pb2, errors_pb2
from uno_server.service import limits


def _hello(version: str) -> limits.Violation | None:
    return limits.check(bot_pb2.PlayRequest(hello=bot_pb2.Hello(bot_version=version)))


def test_a_no_break_space_is_named_as_a_space_other_than_the_ascii_one() -> None:
    v = _hello("1.0\u00a0beta")
    assert v is not None
    assert v.field == "hello.bot_version"
    assert v.reason == errors_pb2.ERROR_REASON_MALFORMED_MESSAGE
    assert v.message == (
        "hello.bot_version: U+00A0 at character 4: spaces other than the ASCII space are not "
        "allowed"
    )
    assert "beta" not in v.message  # the string itself is never repeated


def test_a_control_character_and_the_ascii_space_are_as_before() -> None:
    assert _hello("1.0 beta é ✓") is None
    v = _hello("1.0\x07")
    assert v is not None
    assert v.message == (
        "hello.bot_version: control or other non-printable characters are not allowed"
    )
