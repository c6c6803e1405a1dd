"""How the service says no: google.rpc statuses with an ErrorInfo, requests decoded against
the one table of input limits (:mod:`.limits`), and the rate-limited log of rejections.

Requests arrive as raw bytes and are decoded here, so that bytes that do not decode (invalid
UTF-8 in a string, a corrupt message) get a documented status (INVALID_ARGUMENT /
MALFORMED_MESSAGE) instead of gRPC's generic failure, and every decoded request passes the
limits before anything else looks at it. Shared by the bot stream, the admin service and the
arena; it imports none of them.
"""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

import grpc
import structlog
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from uno_server.gen.uno.v1 import errors_pb2

from . import limits
from .metrics import ServiceMetrics
from .ratelog import RateLimitedLog

log = structlog.get_logger("uno.server")

M = TypeVar("M", bound=Message)


def status_error(
    code: grpc.StatusCode, reason: int, message: str, **meta: str
) -> status_pb2.Status:
    """A google.rpc.Status with an ErrorInfo detail (domain ``uno-arena``)."""
    info = error_details_pb2.ErrorInfo(
        reason=errors_pb2.ErrorReason.Name(reason).removeprefix("ERROR_REASON_"),
        domain="uno-arena",
        metadata=meta,
    )
    detail = any_pb2.Any()
    detail.Pack(info)
    return status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=[detail])


class RejectError(Exception):
    def __init__(self, code: grpc.StatusCode, reason: int, message: str, **meta: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.status = status_error(code, reason, message, **meta)


def violation(v: limits.Violation) -> RejectError:
    return RejectError(grpc.StatusCode.INVALID_ARGUMENT, v.reason, v.message, field=v.field)


def parse(raw: bytes, cls: type[M]) -> M:
    """Decode a request, or raise INVALID_ARGUMENT (MALFORMED_MESSAGE / a limit's reason)."""
    if len(raw) > limits.MAX_REQUEST_BYTES:
        raise RejectError(
            grpc.StatusCode.INVALID_ARGUMENT,
            errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
            f"the request is {len(raw)} bytes; at most {limits.MAX_REQUEST_BYTES} are read",
        )
    try:
        msg = cls.FromString(raw)
    except DecodeError as exc:
        raise RejectError(
            grpc.StatusCode.INVALID_ARGUMENT,
            errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
            f"the request does not decode as {cls.DESCRIPTOR.full_name}: {exc}"[:300],
        ) from exc
    bad = limits.check(msg)
    if bad is not None:
        raise violation(bad)
    return msg


def identity(raw: bytes) -> bytes:
    return raw


REJECTIONS = RateLimitedLog()
"""Rejected RPCs and streams are logged, at most ``BURST`` a minute per status code and reason."""


def _reason(status: status_pb2.Status) -> str:
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.reason)
    return ""


def log_rejection(status: status_pb2.Status, *, peer: str = "", bot: str = "") -> None:
    code = code_pb2.Code.Name(status.code)
    reason = _reason(status)
    level = log.error if status.code == code_pb2.INTERNAL else log.warning
    REJECTIONS.log(
        (code, reason),
        level,
        "rpc rejected",
        code=code,
        reason=reason,
        detail=status.message[:300],
        bot=bot or None,
        peer=peer[:200] or None,
    )


async def abort(
    context: grpc.aio.ServicerContext[Any, Any],
    status: status_pb2.Status,
    metrics: ServiceMetrics,
    bot: str = "",
) -> NoReturn:
    metrics.errors.labels(code_pb2.Code.Name(status.code)).inc()
    log_rejection(status, peer=context.peer(), bot=bot)
    await context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("unreachable")  # pragma: no cover
