"""What the contract (proto/uno/v1) promises about errors, read from the .proto files themselves,
so that the fuzzers judge the server by the text a bot author reads, not by the server's code.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import grpc

from uno_server.gen.uno.v1 import errors_pb2

PROTO = Path(__file__).resolve().parents[2] / "proto" / "uno" / "v1"

_ENUM_VALUE = re.compile(r"((?:[ \t]*//[^\n]*\n)+)[ \t]*(ERROR_REASON_\w+)\s*=\s*(\d+);")


@cache
def reason_codes() -> dict[str, grpc.StatusCode]:
    """ErrorInfo reason (the ErrorReason name without its prefix) -> the one status code that
    errors.proto documents for it (the first word of the value's comment)."""
    text = (PROTO / "errors.proto").read_text()
    body = text[text.index("enum ErrorReason") :]
    out: dict[str, grpc.StatusCode] = {}
    for m in _ENUM_VALUE.finditer(body):
        comment = " ".join(
            line.strip().removeprefix("//").strip() for line in m.group(1).splitlines()
        )
        word = re.match(r"[A-Z_]+", comment)
        name = m.group(2).removeprefix("ERROR_REASON_")
        if name == "UNSPECIFIED":
            continue
        assert word is not None, f"errors.proto: {m.group(2)} documents no status code"
        out[name] = grpc.StatusCode[word.group(0)]
    assert len(out) == len(errors_pb2.ErrorReason.keys()) - 1, "a reason lacks its comment"
    return out


def reason_name(reason: int) -> str:
    return str(errors_pb2.ErrorReason.Name(reason)).removeprefix("ERROR_REASON_")


def check_pair(code: int | grpc.StatusCode, reason: int | str, where: str) -> None:
    """A (status code, reason) the server sent must be a documented pair."""
    name = reason if isinstance(reason, str) else reason_name(reason)
    want = reason_codes().get(name)
    assert want is not None, f"{where}: undocumented reason {name!r}"
    got = code if isinstance(code, grpc.StatusCode) else _by_number(code)
    assert got == want, f"{where}: reason {name} came with {got.name}, documented {want.name}"


def _by_number(n: int) -> grpc.StatusCode:
    for c in grpc.StatusCode:
        if c.value[0] == n:
            return c
    raise AssertionError(f"no gRPC status code {n}")
