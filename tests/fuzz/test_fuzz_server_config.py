"""Fuzzing the server's config file (``uno-arena serve --config``): whatever the file holds, the
server either takes it or refuses it with one ConfigError that names the file or the field;
never another exception (which the command line would print as a traceback)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uno_server.service.main import _FIELDS, ConfigError, load_config, validate

KEYS = sorted(_FIELDS)
scalars = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-10, 70_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=20),
    st.text(min_size=300, max_size=400),
    st.lists(st.integers(0, 3), max_size=3),
)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    escaped = "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in v)
    return f'"{escaped}"'


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 9)) == 0:  # not even text
        return bytes(draw(st.binary(max_size=60)))
    lines = []
    for table in draw(st.lists(st.sampled_from(["server", "bots", "other", "server"]), max_size=3)):
        lines.append(f"[{table}]")
        for _ in range(draw(st.integers(0, 5))):
            key = draw(
                st.one_of(
                    st.sampled_from(KEYS),
                    st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
                    st.sampled_from(["a b", "bot.1", "x" * 70, "y" * 5000]),
                )
            )
            quoted = f'"{key}"' if not key.replace("_", "").isalnum() else key
            lines.append(f"{quoted} = {_toml_value(draw(scalars))}")
    if draw(st.integers(0, 9)) == 0:
        lines.append(draw(st.text(max_size=30)))  # likely not TOML at all
    return "\n".join(lines).encode("utf-8", "surrogatepass")


OUTCOMES: dict[str, int] = {"taken": 0, "refused": 0}


@settings(max_examples=600, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(doc=documents())
def test_a_config_file_is_taken_or_refused_with_one_error(
    doc: bytes, tmp_path_factory: Any
) -> None:
    path = tmp_path_factory.mktemp("cfg") / "server.toml"
    path.write_bytes(doc)
    OUTCOMES["refused"] += 1
    try:
        cfg = load_config(str(path))
        cfg.admin_token = cfg.admin_token or "admin-token-long-enough"
        validate(cfg)
        OUTCOMES["refused"] -= 1
        OUTCOMES["taken"] += 1
    except ConfigError as exc:
        text = str(exc)
        assert "\n" not in text.strip() or "TOML" in text, text
        assert text.startswith((str(path), "server.", "bots", "server.tls")), text
        # echoed input is cut: the message is the path, the field, the rule and <= 80 characters
        # of what the file said, never the 5,000-character key or a 400-character value
        assert len(text) < len(str(path)) + 400, text


def test_the_command_line_prints_one_line_for_a_bad_config(tmp_path: Path) -> None:
    bad = tmp_path / "server.toml"
    bad.write_text(
        '[server]\nstall_seconds = 0\nadmin_token = "admin-token-1234"\n'
        '[bots]\n"a b" = "xxxxxxxxxx"\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "serve", "--config", str(bad), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("uno-arena: "), proc.stderr
    assert "a b" in lines[0] and "bot name" in lines[0]


def test_both_outcomes_happened() -> None:
    """Runs after the fuzzer (file order): it exercised acceptance and refusal alike."""
    assert OUTCOMES["taken"] > 10 and OUTCOMES["refused"] > 100, OUTCOMES


def test_documented_token_alphabet_is_accepted() -> None:
    """What token generators produce (hex, base64, base64url, token_urlsafe) is a valid token,
    at both ends of the length limit."""
    import base64
    import secrets

    from uno_server.service.server import ServerConfig

    for token in (
        secrets.token_hex(24),
        secrets.token_urlsafe(32),
        base64.b64encode(secrets.token_bytes(33)).decode() + "=",
        "a.b_c~d+e/f=g-h",
        "x" * 8,
        "y" * 128,
    ):
        validate(ServerConfig(admin_token="admin-token-1234", bots={"b": token}))
    for token in ("x" * 7, "y" * 129, "a token!", "tok\x00en-123", "tök-en-1234"):
        try:
            validate(ServerConfig(admin_token="admin-token-1234", bots={"b": token}))
        except ConfigError as exc:
            assert str(exc).startswith("bots.b: a token is 8-128 characters"), exc
            assert token not in str(exc)
        else:
            raise AssertionError(f"{token!r} was taken")
