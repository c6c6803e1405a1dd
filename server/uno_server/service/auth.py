"""Tokens: one secret per bot, and an admin token. Tokens are compared in constant time and
never logged; log lines name the bot, not its token."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import grpc

from uno_server.gen.uno.v1 import errors_pb2

# A token (a bot's or the admin's) is 8-128 characters of RFC 6750's b64token alphabet: what an
# ``authorization: Bearer <token>`` header carries unchanged, and what base64, base64url, hex
# and secrets.token_urlsafe() produce. Documented in docs/service.md.
TOKEN_MIN, TOKEN_MAX = 8, 128
TOKEN_CHARS = "A-Za-z0-9._~+/=-"
_TOKEN_RE = re.compile(f"[{TOKEN_CHARS}]+")


def token_problem(token: object) -> str | None:
    """Why ``token`` cannot be a token, or None if it can. Never quotes the token itself (it is
    a secret): it says how long it is or where the first bad character is."""
    rule = f"a token is {TOKEN_MIN}-{TOKEN_MAX} characters of [{TOKEN_CHARS}]"
    if not isinstance(token, str):
        return f"{rule}, written as a string"
    if not TOKEN_MIN <= len(token) <= TOKEN_MAX:
        return f"{rule}; this one has {len(token)}"
    if not _TOKEN_RE.fullmatch(token):
        pos = next(i for i, c in enumerate(token) if not _TOKEN_RE.fullmatch(c))
        bad = token[pos]
        what = {" ": "a space", "\n": "a newline", "\t": "a tab"}.get(bad, f"U+{ord(bad):04X}")
        return f"{rule}; this one has {what} at position {pos + 1}"
    return None


RESERVED_BOT_NAMES = ("heuristic", "random", "me", "ai")
"""Words ``uno-arena match --seats`` and ``uno-arena play --seats`` read as the server's built-in
bots (heuristic, random) or as a keyword (me: the person at the keyboard; ai: a practice AI), so
a bot registered under one could never be seated by them: ``uno-arena serve`` refuses these
names for its ``--bot`` flags. (A tournament seats its bots by name through CreateMatch, where a
bot called heuristic is seated as itself: the server and its config file accept the names.)"""


def reserved_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be given to ``serve --bot``, or None (see RESERVED_BOT_NAMES)."""
    if name not in RESERVED_BOT_NAMES:
        return None
    return (
        f"{name!r} is a reserved word ({', '.join(RESERVED_BOT_NAMES)}): `uno-arena match "
        "--seats` and `uno-arena play --seats` read it as a built-in bot or a keyword, so a "
        "bot of that name would never be seated; give the bot another name"
    )


SHA256_PREFIX = "sha256:"
"""A registry entry that holds a token's SHA-256 (RegisterBotRequest.token_sha256), not the
token: ``sha256:`` and 64 lowercase hex digits. ``:`` is not in a token's alphabet, so such an
entry can never equal a presented token."""
_SHA256_RE = re.compile(r"[0-9a-f]{64}")


def sha256_problem(digest: object) -> str | None:
    """Why ``digest`` cannot be a token's SHA-256 (64 lowercase hex characters), or None."""
    if not isinstance(digest, str) or not _SHA256_RE.fullmatch(digest):
        n = len(digest) if isinstance(digest, str) else 0
        return f"a token's SHA-256 is 64 characters of [0-9a-f] (lowercase hex); this one has {n}"
    return None


def digest_of(secret: str) -> str:
    """The SHA-256 (lowercase hex) a registry entry stands for: the stored hash of a
    ``sha256:`` entry, else the hash of the plaintext token."""
    if secret.startswith(SHA256_PREFIX):
        return secret[len(SHA256_PREFIX) :]
    return hashlib.sha256(secret.encode()).hexdigest()


def token_clashes(bots: Mapping[str, str], admin_token: str) -> str | None:
    """The first clash among the tokens, as a message naming the fields, or None: a bot whose
    token is the admin token (it would pass the AdminService), or two bots sharing one token
    (the token would play as only one of them). An entry may be a token or ``sha256:`` and its
    hash: tokens are compared by their SHA-256, in constant time."""
    owner: dict[str, str] = {}
    admin = digest_of(admin_token) if admin_token else ""
    for name, secret in bots.items():
        token = digest_of(secret)
        if admin and hmac.compare_digest(token.encode(), admin.encode()):
            return (
                f"bots.{name}: the token is the admin token (server.admin_token); "
                "give the bot a token of its own"
            )
        first = owner.setdefault(token, name)
        if first != name:
            return (
                f"bots.{first} and bots.{name}: the two bots have the same token; "
                "give each bot a token of its own"
            )
    return None


@dataclass
class TokenRegistry:
    bots: dict[str, str] = field(default_factory=dict)  # bot name -> token, or sha256:HEX
    admin_token: str = ""

    def add_bot(self, name: str, token: str) -> None:
        if not name or not token:
            raise ValueError("a bot needs a name and a non-empty token")
        if len(token) < TOKEN_MIN:
            raise ValueError(f"the token of bot {name!r} is shorter than {TOKEN_MIN} characters")
        clash = token_clashes({**self.bots, name: token}, self.admin_token)
        if clash is not None:
            raise ValueError(clash)
        self.bots[name] = token

    def bot_for(self, token: str) -> str | None:
        """The bot whose token this is: compared in constant time with every plaintext entry
        and, by its SHA-256, with every ``sha256:`` entry (a bot registered by its hash)."""
        found = None
        digest = ""
        for name, secret in self.bots.items():
            if secret.startswith(SHA256_PREFIX):
                digest = digest or hashlib.sha256(token.encode()).hexdigest()
                if hmac.compare_digest(secret[len(SHA256_PREFIX) :].encode(), digest.encode()):
                    found = name
            elif hmac.compare_digest(secret.encode(), token.encode()):
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
            # the position, never the text: a NAME= forgotten leaves the token alone there
            # (it was echoed, into a pod's log; an examination)
            nth = len(out) + 1
            raise ValueError(f"--bot number {nth} ({len(spec)} characters): write it as NAME=TOKEN")
        if name.strip() in out:
            raise ValueError(f"--bot {name.strip()[:64]}: given twice; give each bot once")
        out[name.strip()] = token.strip()
    return out


UNAUTHENTICATED = (grpc.StatusCode.UNAUTHENTICATED, errors_pb2.ERROR_REASON_INVALID_TOKEN)
