"""Server addresses as every UNO Arena SDK accepts them.

Accepted: ``HOST:PORT`` and ``http://HOST:PORT`` (plaintext), ``https://HOST:PORT`` (TLS with the
system roots), each also with an IPv6 host in brackets (``[::1]:50051``). Anything else, such as
no port, another scheme or a path, is refused at once with :class:`AddressError`, before any
connection is tried.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["Address", "AddressError", "parse_address"]

_FORMS: Final = "use HOST:PORT, http://HOST:PORT or https://HOST:PORT"
_HOST_PORT: Final = re.compile(
    r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+(?:%[\w.-]+)?)\]|(?P<host>[\w.-]+)):(?P<port>\d{1,5})$"
)


class AddressError(ValueError):
    """A server address in none of the accepted forms."""

    def __init__(self, addr: str) -> None:
        super().__init__(f'invalid address "{addr}": {_FORMS}')
        self.addr = addr


@dataclass(frozen=True)
class Address:
    """A parsed server address."""

    host: str
    """Host name or IP address (an IPv6 address without its brackets)."""
    port: int
    tls: bool
    """True for ``https://``."""

    @property
    def target(self) -> str:
        """The gRPC channel target: ``host:port``, ``[v6]:port``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return self.target


def parse_address(addr: str) -> Address:
    """Parse ``addr``; raises :class:`AddressError` for anything but the accepted forms."""
    rest = addr.strip()
    tls = False
    if "://" in rest:
        scheme, rest = rest.split("://", 1)
        if scheme.lower() not in ("http", "https"):
            raise AddressError(addr)
        tls = scheme.lower() == "https"
    m = _HOST_PORT.match(rest)
    if m is None:
        raise AddressError(addr)
    port = int(m["port"])
    if not 0 < port < 65536:
        raise AddressError(addr)
    return Address(host=m["v6"] or m["host"], port=port, tls=tls)
