"""Typed engine errors, each with a machine-readable ``reason`` the service maps to gRPC."""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the engine raises on bad input."""

    reason = "ENGINE_ERROR"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class MalformedActionError(EngineError):
    """The action does not describe any action at all (unknown id, bad colour, bad seat)."""

    reason = "MALFORMED_ACTION"


class IllegalActionError(EngineError):
    """A well-formed action that the rules do not allow this seat to take now."""

    reason = "ILLEGAL_ACTION"


class WrongSeatError(IllegalActionError):
    """The seat may not act at all right now (it is someone else's turn or window)."""

    reason = "NOT_YOUR_TURN"


class HandOverError(IllegalActionError):
    """The hand has already ended."""

    reason = "HAND_OVER"


class InvalidRulesError(EngineError):
    """A rule set with an unknown option or a value out of range; the message names the field."""

    reason = "INVALID_RULES"


class StateError(EngineError):
    """A saved state that cannot be restored: malformed, or a state no hand can reach.
    ``field`` is the path of the first field found wrong, such as ``hand.hands[2]``."""

    reason = "BAD_STATE"

    def __init__(self, message: str, *, field: str = "", reason: str | None = None) -> None:
        # explicit: compiled (mypyc), a subclass's own __init__ skips the class-level default
        super().__init__(message, reason="BAD_STATE" if reason is None else reason)
        self.field = field
