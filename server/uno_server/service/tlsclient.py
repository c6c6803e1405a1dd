"""The organiser's tools as clients of a server that speaks TLS (``serve --tls-cert``):
``uno-arena match --tls-ca`` and ``tournament run/resume --server ... --tls-ca``. They opened
plaintext channels only, so against a TLS server they failed with gRPC's "Socket closed" and
never said why (an examination). ``--tls-ca FILE`` trusts that CA certificate (PEM);
``--tls-ca system`` the system's roots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

SYSTEM = "system"
MAX_CA_BYTES = 1024 * 1024


def tls_ca_problem(ca: str) -> str | None:
    """What is wrong with a ``--tls-ca`` value (``None``: nothing)."""
    if ca == SYSTEM:
        return None
    path = Path(ca)
    if not path.is_file():
        return "not a file; give the CA certificate (PEM) the server's certificate is signed by"
    try:
        with path.open("rb") as f:
            head = f.read(MAX_CA_BYTES + 1)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if len(head) > MAX_CA_BYTES or b"-----BEGIN CERTIFICATE-----" not in head:
        return "not a PEM certificate (it holds no -----BEGIN CERTIFICATE----- block)"
    return None


def connection_hint(details: str, ca: str | None) -> str:
    """The next step after a failed connection whose gRPC details (``AioRpcError.details()``)
    show a TLS mistake, as ``"; ..."`` to add to the line; ``""`` for any other failure. gRPC's
    own text ("Socket closed", "CERTIFICATE_VERIFY_FAILED") never said what to do (an
    examination). ``ca`` is the ``--tls-ca`` given, if any."""
    if "CERTIFICATE_VERIFY_FAILED" in details:
        return "; give --tls-ca the CA certificate that signed the server's certificate"
    if "Hostname Verification Check failed" in details:
        return (
            "; the server's certificate is not for the name or address in --server: connect by "
            "a name its certificate holds"
        )
    if ca is not None and "WRONG_VERSION_NUMBER" in details:
        return "; the server does not speak TLS: leave --tls-ca out"
    if ca is None and ("Socket closed" in details or "Connection reset by peer" in details):
        # a TLS server hangs up on a plaintext client's first bytes
        return "; if the server speaks TLS, give --tls-ca FILE (its CA) or --tls-ca system"
    return ""


def channel(
    target: str, ca: str | None, options: Sequence[tuple[str, Any]] = ()
) -> grpc.aio.Channel:
    """An aio channel to ``target``: plaintext without ``ca``, else TLS trusting ``ca``."""
    if ca is None:
        return grpc.aio.insecure_channel(target, options=list(options))
    roots = None if ca == SYSTEM else Path(ca).read_bytes()
    creds = grpc.ssl_channel_credentials(root_certificates=roots)
    return grpc.aio.secure_channel(target, creds, options=list(options))
