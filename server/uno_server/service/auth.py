"""Tokens: one secret per bot, and an admin token. Tokens are compared in constant time and
never logged; log lines name the bot, not its token."""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import grpc

from uno_server.gen.uno.v1 import errors_pb2


@dataclass
class TokenRegistry:
    bots: dict[str, str] = field(default_factory=dict)  # bot name -> token
    admin_token: str = ""

    def add_bot(self, name: str, token: str) -> None:
        if not name or not token:
            raise ValueError("a bot needs a name and a non-empty token")
        if len(token) < 8:
            raise ValueError(f"the token of bot {name!r} is shorter than 8 characters")
        self.bots[name] = token

    def bot_for(self, token: str) -> str | None:
        found = None
        for name, secret in self.bots.items():
            if hmac.compare_digest(secret.encode(), token.encode()):
                found = name
        return found

    def is_admin(self, token: str) -> bool:
        return bool(self.admin_token) and hmac.compare_digest(
            self.admin_token.encode(), token.encode()
        )


def bearer(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """The token of an ``authorization: Bearer <token>`` metadata entry, if any."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def parse_bot_specs(specs: Iterable[str]) -> Mapping[str, str]:
    """``NAME=TOKEN`` pairs from the command line."""
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, token = spec.partition("=")
        if not sep or not name.strip() or not token.strip():
            raise ValueError(f"--bot {spec.split('=')[0]!r}...: write it as NAME=TOKEN")
        out[name.strip()] = token.strip()
    return out


UNAUTHENTICATED = (grpc.StatusCode.UNAUTHENTICATED, errors_pb2.ERROR_REASON_INVALID_TOKEN)
