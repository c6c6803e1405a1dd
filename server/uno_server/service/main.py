"""``uno-arena serve``: configuration, logging, signals."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import re
import signal
import socket
import ssl
import stat
import sys
import tomllib
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import structlog

from uno_server.gen.uno.v1 import game_pb2

from .auth import parse_bot_specs, reserved_name_problem, token_clashes, token_problem
from .corelog import CoreLogCollector, captured
from .limits import NAME_RE
from .server import ArenaServer, ServerConfig, tune_gc


class ConfigError(Exception):
    """A bad configuration value; the message names the field."""


MAX_CONFIG_BYTES = 1024 * 1024  # a config file (server or tournament) is at most 1 MiB
MAX_ECHO = 80  # characters of user input an error message repeats
MAX_PEM_BYTES = 1024 * 1024  # a TLS certificate chain or key file
_HOST_RE = re.compile(r"[A-Za-z0-9.:_%\[\]-]{1,253}")


def cut(value: object, limit: int = MAX_ECHO) -> str:
    """``value`` as an error message may repeat it: one line, at most ``limit`` characters
    (an ellipsis says there was more)."""
    text = value if isinstance(value, str) else repr(value)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


_WHOLE = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)


def whole(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi`` (a bad one is argparse's one
    line naming the flag, not a traceback where the number is used)."""

    def parse(text: str) -> int:
        try:  # ASCII digits: int() alone takes full-width digits and '1_000'
            if not _WHOLE.fullmatch(text):
                raise ValueError(text)
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be a whole number, got {cut(text, 20)!r}"
            ) from None
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"must be from {lo} to {hi}, got {_num(n)}")
        return n

    return parse


SEED = whole(0, 2**64 - 1)
"""A match seed: any 64-bit value (CreateMatchRequest.seed is a uint64)."""


def read_config_text(path: str, limit: int = MAX_CONFIG_BYTES) -> str:
    """A config file's text: at most ``limit`` bytes of UTF-8, else a ConfigError naming it."""
    try:
        # without blocking, and only a regular file: a pipe would wait for a writer, a device
        # (/dev/zero) never end
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such file") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror}") from exc
    # the kind is checked on the descriptor before it becomes a file object: fdopen refuses a
    # folder with IsADirectoryError, which was a traceback
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise ConfigError(f"{path}: a folder, not a configuration file")
        raise ConfigError(f"{path}: not a regular file (a device, pipe or socket); give a file")
    with os.fdopen(fd, "rb") as f:
        try:
            raw = f.read(limit + 1)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read it: {exc.strerror}") from exc
    if len(raw) > limit:
        raise ConfigError(
            f"{path}: larger than {limit // 1024} KiB; a configuration file is at most that"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from exc


_FIELDS: dict[str, type] = {
    "host": str,
    "port": int,
    "metrics_port": int,
    "admin_token": str,
    "tls_cert": str,
    "tls_key": str,
    "unix_socket": str,
    "max_message_bytes": int,
    "send_queue": int,
    "drain_timeout_s": float,
    "max_matches": int,
    "retain_matches": int,
    "retain_seconds": float,
    "log_linger_seconds": float,
    "log_linger_matches": int,
    "deal_timeout_s": float,
    "stall_seconds": float,
    "stream_messages_per_s": float,
    "session_interval_s": float,
}

# setting -> (lowest, highest) allowed


def _num(x: float) -> str:
    """A number as a person writes it: 2097152, not 2.09715e+06; 1e+300, not its 301 digits
    (an examination's range error echoed them all); never more than MAX_ECHO characters."""
    if isinstance(x, float) and (not x.is_integer() or abs(x) >= 1e16):
        return cut(f"{x:g}")
    if abs(x) < 10**16:
        return cut(str(int(x)))
    mantissa, exp = format(Decimal(int(x)), ".6g").split("e")  # any size: a float overflows
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return cut(f"{mantissa}e{exp}")


_RANGES: dict[str, tuple[float, float]] = {
    "max_message_bytes": (2 * 1024 * 1024, 1024 * 1024 * 1024),
    "send_queue": (16, 1_000_000),
    "drain_timeout_s": (0, 3600),
    "max_matches": (1, 1_000_000),
    "retain_matches": (0, 1_000_000),
    "retain_seconds": (0, 30 * 86400),
    "log_linger_seconds": (0, 86400),
    "log_linger_matches": (0, 100_000),
    "deal_timeout_s": (0.1, 600),
    "stall_seconds": (1, 3600),
    "stream_messages_per_s": (10, 1_000_000),
    "session_interval_s": (0, 60),
}


def load_config(path: str | None) -> ServerConfig:
    """Read a TOML file with a ``[server]`` table and a ``[bots]`` table of name = token."""
    cfg = ServerConfig()
    if path is None:
        return cfg
    text = read_config_text(path)
    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))  # a BOM (Notepad) is no statement
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {cut(' '.join(str(exc).split()))}") from exc
    except RecursionError:  # `z = [[[...]]]` 1,000 deep was a traceback (an examination)
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    for key, value in data.items():
        if key not in ("server", "bots") and not isinstance(value, dict):
            # a key above the first [table] line: `port = 47612` was "unknown table [port]"
            raise ConfigError(f"{path}: {top_level_key(key)}")
        if key not in ("server", "bots"):
            raise ConfigError(f"{path}: unknown table [{cut(key)}] (expected [server] and [bots])")
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {key}: must be a table, [{key}]")
    for key, value in data.get("server", {}).items():
        want = _FIELDS.get(key)
        if want is None:
            raise ConfigError(
                f"{path}: server.{cut(key)}: unknown setting (known: {', '.join(sorted(_FIELDS))})"
            )
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, want) or isinstance(value, bool):
            raise ConfigError(
                f"{path}: server.{key}: must be {want.__name__}, got {cut(repr(value))}"
            )
        setattr(cfg, key, value)
    for name, token in data.get("bots", {}).items():
        check_bot_name(name, f"{path}: bots")
        problem = token_problem(token)
        if problem is not None:
            raise ConfigError(f"{path}: bots.{name}: {problem}")
        cfg.bots[name] = token
    return cfg


def top_level_key(key: str) -> str:
    """What a config file's key outside every table is told (keys above the first ``[table]``
    line belong to none): where it goes."""
    if key in _FIELDS:
        return f"{key} is outside [server] (above the first [table] line); put {key} under [server]"
    return (
        f"{cut(key)} is outside every table (above the first [table] line); put settings under "
        "[server] and bots' name = token under [bots]"
    )


def check_bot_name(name: str, where: str) -> None:
    """Bot names are what Hello.bot_name and CreateMatch seats may carry (limits.BOT_NAME)."""
    if not (1 <= len(name) <= 64 and NAME_RE.fullmatch(name)):
        raise ConfigError(f"{where}.{cut(name)}: a bot name is 1-64 characters of [A-Za-z0-9_.-]")


def check_host(host: str) -> None:
    """The listening address, as far as it can be judged without the network: not empty, a
    name's or an address's characters, and a dotted quad is a real IPv4 address."""
    if not host:
        raise ConfigError(
            "server.host: empty; give an address to listen on, such as 127.0.0.1, 0.0.0.0 or ::"
        )
    if not _HOST_RE.fullmatch(host):
        raise ConfigError(
            f"server.host: {cut(host)!r} is not a host name or an IP address "
            "(1-253 characters of letters, digits, '.', ':', '-', '[', ']')"
        )
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if re.fullmatch(r"[0-9.]+", bare) or ":" in bare:  # no host name looks like these
        try:
            ipaddress.ip_address(bare)
        except ValueError:
            raise ConfigError(
                f"server.host: {cut(host)} is not an IP address"
                + (" (each part of an IPv4 address is 0-255)" if "." in bare else "")
            ) from None


def _check_tls(cert: str, key: str) -> None:
    """Both files exist; the certificate file holds a PEM certificate and the key file the PEM
    private key of it (what gRPC would otherwise refuse with a traceback at startup)."""
    for f, p in (("tls_cert", cert), ("tls_key", key)):
        try:
            size = Path(p).stat().st_size
        except OSError:
            raise ConfigError(f"server.{f}: {cut(p)} is not a readable file") from None
        if not Path(p).is_file():
            raise ConfigError(f"server.{f}: {cut(p)} is not a readable file")
        if size > MAX_PEM_BYTES:
            raise ConfigError(f"server.{f}: {cut(p)} is larger than 1 MiB; not a PEM file")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_verify_locations(cafile=cert)
    except (ssl.SSLError, OSError, ValueError):
        raise ConfigError(
            f"server.tls_cert: {cut(cert)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        ) from None

    def no_password() -> bytes:
        return b""

    try:
        ctx.load_cert_chain(cert, key, password=no_password)
    except (ssl.SSLError, OSError, ValueError):
        with contextlib.suppress(OSError):
            if b"ENCRYPTED" in Path(key).read_bytes():
                raise ConfigError(
                    f"server.tls_key: {cut(key)} is an encrypted key; give it unencrypted "
                    "(readable by this user only)"
                ) from None
        raise ConfigError(
            f"server.tls_key: {cut(key)} is not the PEM private key of the certificate in "
            "server.tls_cert"
        ) from None


ADMIN_TOKEN_ENV = "UNO_ARENA_ADMIN_TOKEN"
ADMIN_TOKEN_FIELD = "server.admin_token"
_BOT_FIELD = re.compile(r"\bbots\.([A-Za-z0-9_.\-]+)")


def validate(
    cfg: ServerConfig,
    admin_source: str = ADMIN_TOKEN_FIELD,
    bot_sources: dict[str, str] | None = None,
) -> None:
    """Check a whole configuration; a ConfigError names the field. ``admin_source`` (the flag
    or the environment variable) and ``bot_sources`` (bot name -> ``bots.NAME (--bot)``) name
    where a token came from when that was not the config file."""
    if not 0 <= cfg.port <= 65535:
        raise ConfigError(f"server.port: must be 0-65535, got {cfg.port}")
    if cfg.metrics_port is not None and not 0 <= cfg.metrics_port <= 65535:
        raise ConfigError(f"server.metrics_port: must be 0-65535, got {cfg.metrics_port}")
    check_host(cfg.host)
    if cfg.metrics_port and cfg.metrics_port == cfg.port:
        raise ConfigError(f"server.metrics_port: {cfg.port} is also server.port; give another")
    if bool(cfg.tls_cert) != bool(cfg.tls_key):
        raise ConfigError("server.tls_cert and server.tls_key: give both or neither")
    if cfg.tls_cert:
        _check_tls(cfg.tls_cert, cfg.tls_key)
    if cfg.unix_socket:
        _check_unix_socket(cfg.unix_socket)
    for name, (lo, hi) in _RANGES.items():
        v = getattr(cfg, name)
        if not lo <= v <= hi:
            raise ConfigError(f"server.{name}: must be {_num(lo)}-{_num(hi)}, got {_num(v)}")
    for name, token in cfg.bots.items():  # before the admin token: each names its own entry
        check_bot_name(name, "bots")
        problem = token_problem(token)
        if problem is not None:
            raise ConfigError(f"bots.{name}: {problem}")
    if not cfg.admin_token:
        raise ConfigError(f"{ADMIN_TOKEN_FIELD}: required (or set {ADMIN_TOKEN_ENV})")
    problem = token_problem(cfg.admin_token)
    if problem is not None:
        raise ConfigError(f"{admin_source}: {problem}")
    clash = token_clashes(cfg.bots, cfg.admin_token)
    if clash is not None:
        # the bots and the admin token named where they came from (a bot name has no space or
        # colon by now: each was checked above)
        if admin_source != ADMIN_TOKEN_FIELD:
            clash = clash.replace(f"({ADMIN_TOKEN_FIELD})", f"({admin_source})")
        if bot_sources:
            clash = _BOT_FIELD.sub(lambda m: bot_sources.get(m[1], m[0]), clash)
        raise ConfigError(clash)


UNIX_PATH_MAX = 107
"""The longest Unix socket path Linux takes (``sun_path`` holds 108 bytes with its NUL)."""


UNIX_PROBE_TIMEOUT_S = 5.0
"""How long :func:`_unix_socket_in_use` waits for a connection to a socket file to be taken: a
listener answers at once, or at once refuses; only one whose backlog is full makes it wait."""


def _unix_socket_in_use(path: str) -> bool:
    """Whether something accepts connections on the Unix socket ``path``: a connection is
    taken (or waits in a full backlog). Refused, or no such file: free, or a stale file an
    earlier server left. gRPC replaces a socket file when it binds, so a running server's
    socket was taken over (its clients reached the new server, which deleted the file when it
    stopped: an examination)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(UNIX_PROBE_TIMEOUT_S)
        try:
            s.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            return False
        except (TimeoutError, BlockingIOError):  # a listener whose backlog is full
            return True
        except OSError as exc:
            raise ConfigError(
                f"server.unix_socket: cannot check whether a server listens on {cut(path)} "
                f"({exc.strerror or exc}); give another path (--unix-socket)"
            ) from None
    return True


def _check_unix_socket(path: str) -> None:
    """A Unix socket path the server can bind: short enough, in an existing folder, not a file
    of another kind, and no server listening on it (a socket file left by an earlier server,
    which refuses connections, is replaced)."""
    if "\0" in path or len(path.encode()) > UNIX_PATH_MAX:
        raise ConfigError(
            f"server.unix_socket: {cut(path)} is over {UNIX_PATH_MAX} bytes (or holds a NUL); "
            "give a shorter path"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ConfigError(f"server.unix_socket: its folder {cut(folder)} does not exist")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"server.unix_socket: {cut(path)}: {exc.strerror}") from None
    if not stat.S_ISSOCK(mode):
        raise ConfigError(
            f"server.unix_socket: {cut(path)} exists and is not a socket; give a new path"
        )
    if _unix_socket_in_use(path):
        raise ConfigError(
            # the whole path (at most 107 bytes, checked above): the operator needs it
            f"server.unix_socket: another server listens on {cut(path, 4 * UNIX_PATH_MAX)}; "
            "stop it, or give another path (--unix-socket)"
        )


def _listened(infos: list[Any]) -> bool:
    """Whether a server accepts connections at one of the addresses ``infos`` (getaddrinfo's)
    gives; a wildcard address is tried on this machine's loopback. A port can also be in use
    as the local end of another program's connection, with nothing listening (an examination:
    the message said a server listened)."""
    for family, kind, proto, _, sockaddr in infos:
        host = sockaddr[0]
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1" if family == socket.AF_INET else "::1"
        with socket.socket(family, kind, proto) as s:
            s.settimeout(1.0)
            try:
                s.connect((host, *sockaddr[1:]))
            except OSError:
                continue
            return True
    return False


def check_listen(cfg: ServerConfig, web_port: int | None = None) -> None:
    """Can this process listen where the config says? Tried with plain sockets before gRPC
    does (gRPC's own failure is a bare RuntimeError): the host resolves to an address of this
    machine, and a fixed port is not in use (gRPC's SO_REUSEPORT would otherwise let a second
    server share the port of a running one). ``web_port`` (``serve --web-port``) too: a taken
    one was found only after the server had started, and stopped it (an examination)."""
    host = cfg.host[1:-1] if cfg.host.startswith("[") and cfg.host.endswith("]") else cfg.host
    ports = [("port", cfg.port)]
    if cfg.metrics_port is not None:
        ports.append(("metrics_port", cfg.metrics_port))
    if web_port:  # 0: a free one, found when the web view starts
        for field_name, port in ports:
            if port == web_port:
                raise ConfigError(
                    f"--web-port {web_port}: it is also server.{field_name}; give another port"
                )
        ports.append(("web_port", web_port))
    for field_name, port in ports:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except (socket.gaierror, UnicodeError) as exc:
            raise ConfigError(
                f"server.host: cannot resolve {cut(cfg.host)} "
                f"({getattr(exc, 'strerror', None) or exc}); give an IP address or a known name"
            ) from None
        # gRPC listens on every address the host resolves to and fails only if none works
        # (a name such as localhost may resolve to ::1 on a machine without IPv6)
        errors: list[OSError] = []
        for family, kind, proto, _, sockaddr in infos:
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(sockaddr)
                    s.listen(1)
                except OSError as exc:
                    errors.append(exc)
        codes = {e.errno for e in errors}
        if (
            field_name == "web_port"
            and errors
            and (errno.EADDRINUSE in codes or len(errors) == len(infos))
        ):
            why = "address already in use" if errno.EADDRINUSE in codes else errors[0].strerror
            raise ConfigError(
                f"--web-port {port}: cannot serve the web view on {cut(cfg.host)}:{port} "
                f"({why}); choose another port"
            )
        if errno.EADDRINUSE in codes:
            who = (
                "another server listens there"
                if _listened(infos)
                else "no server listens there: a connection of another program holds it"
            )
            raise ConfigError(
                f"server.{field_name}: {port} is in use on {cut(cfg.host)} ({who}); pick "
                "another port, or 0 for a free one"
            )
        if errno.EACCES in codes:
            raise ConfigError(
                f"server.{field_name}: {port} needs privileges this user lacks; "
                "pick a port above 1023"
            )
        if errors and len(errors) == len(infos):
            if codes <= {errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT}:
                raise ConfigError(
                    f"server.host: {cut(cfg.host)} is not an address of this machine; "
                    "give 127.0.0.1, 0.0.0.0, :: or one of its own addresses"
                )
            raise ConfigError(
                f"server.{field_name}: cannot listen on {cut(cfg.host)}:{port} "
                f"({errors[0].strerror})"
            )


def configure_logging(level: str = "info", json_logs: bool = True) -> None:
    lvl = getattr(logging, level.upper(), logging.INFO)
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json_logs
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    # the standard library's loggers (grpc, asyncio, warnings) in the same format, so that a
    # JSON log stays JSON line by line
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=[
                structlog.stdlib.add_logger_name,
                *processors[1:],
                structlog.processors.format_exc_info,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(lvl)
    logging.captureWarnings(True)


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="TOML file with [server] settings and [bots] name = token")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="gRPC port; 0 picks a free one (default 50051)")
    p.add_argument("--metrics-port", type=int, help="Prometheus /metrics port (default: off)")
    p.add_argument(
        "--web-port",
        type=int,
        help="serve the web view (live matches, spectator rules) on this port; 0 picks one",
    )
    p.add_argument(
        "--league",
        metavar="DIR",
        help="with --web-port: also show the standings of the league in DIR at /league (read-only)",
    )
    p.add_argument(
        "--league-store",
        metavar="URL",
        help="with --league: the league's PostgreSQL store (postgresql://...; or env "
        "UNO_ARENA_LEAGUE_STORE), as given to `league init --store`",
    )
    p.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="NAME=TOKEN",
        help="register a bot and its secret token (repeatable)",
    )
    p.add_argument("--admin-token", help="admin token (or env UNO_ARENA_ADMIN_TOKEN)")
    p.add_argument("--tls-cert", help="PEM certificate chain; with --tls-key enables TLS")
    p.add_argument("--tls-key", help="PEM private key")
    p.add_argument(
        "--unix-socket",
        metavar="PATH",
        help="also serve on this Unix socket (at most 107 bytes; its folder must exist); "
        "the tournament runner uses it to reach sandboxed bots without a relay",
    )
    p.add_argument(
        "--retain-matches",
        type=int,
        help="finished matches kept as summaries for GetMatch/ListMatches (default 1000)",
    )
    p.add_argument(
        "--retain-seconds",
        type=float,
        help="... and for at most this long after their end (default 3600)",
    )
    p.add_argument(
        "--log-linger-seconds",
        type=float,
        help="how long a finished match's full event log stays for WatchMatch and reconnecting "
        "bots (default 120)",
    )
    p.add_argument(
        "--log-linger-matches",
        type=int,
        help="... for at most this many recently finished matches (default 128)",
    )
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default="json", choices=["json", "console"])


def _from_file(message: str, args: argparse.Namespace, flag_bots: Mapping[str, str]) -> bool:
    """Whether the field a message of :func:`validate` names first came from the config file.
    A field with no flag of its own (max_message_bytes, drain_timeout_s...) can only have come
    from the file; one with a flag did when the flag was not given; a bot did unless --bot
    gave it. A message that starts with a flag or the environment variable (a token's source)
    is not the file's: they were named as its fields (an examination)."""
    field_name = message.partition(":")[0].split(" ")[0]
    if field_name.startswith("bots."):
        return field_name.removeprefix("bots.") not in flag_bots
    if field_name.startswith("server."):
        return getattr(args, field_name.removeprefix("server."), None) is None
    return False


def _as_flag(message: str, args: argparse.Namespace) -> ConfigError:
    """A message of :func:`validate` about a ``server.X`` field that a flag set, naming the
    flag the user typed (``--port: must be 0-65535, got 99999``), not the config key."""
    field_name, sep, rest = message.partition(": ")
    name = field_name.removeprefix("server.")
    if sep and field_name.startswith("server.") and getattr(args, name, None) is not None:
        flag = f"--{name.replace('_', '-')}"
        return ConfigError(f"{flag}: {rest.removesuffix(f' ({flag})')}")
    return ConfigError(message)


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    cfg = load_config(args.config)
    admin_source = ADMIN_TOKEN_FIELD  # where the admin token comes from: the file's field, ...
    for name in (
        "host",
        "port",
        "metrics_port",
        "admin_token",
        "tls_cert",
        "tls_key",
        "unix_socket",
        "retain_matches",
        "retain_seconds",
        "log_linger_seconds",
        "log_linger_matches",
    ):
        v = getattr(args, name)
        if v is not None:
            setattr(cfg, name, v)
    if args.admin_token:
        admin_source = "--admin-token"  # ... the flag, or the environment: a bad token from
        # either was named as the file's server.admin_token (an examination)
    if not cfg.admin_token:
        cfg.admin_token = os.environ.get(ADMIN_TOKEN_ENV, "")
        if cfg.admin_token:
            admin_source = ADMIN_TOKEN_ENV
    try:
        flag_bots = parse_bot_specs(args.bot)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    for name, token in flag_bots.items():  # named as flags, never as the file's [bots]
        check_bot_name(name, "bots")
        problem = token_problem(token) or reserved_name_problem(name)
        if problem is not None:
            raise ConfigError(f"--bot {name}: {problem}")
    for name in cfg.bots.keys() - flag_bots.keys():  # the file's: a tournament's own server
        # seats its bots by name (CreateMatch), where one called heuristic plays as itself
        if (problem := reserved_name_problem(name)) is not None:
            structlog.get_logger("uno_server.serve").warning(
                "bot name is a reserved word", bot=name, problem=problem
            )
    cfg.bots.update(flag_bots)
    try:
        validate(cfg, admin_source, {name: f"bots.{name} (--bot)" for name in flag_bots})
    except ConfigError as exc:  # a field the file set is named with the file, as its parse errors
        from_file = args.config and _from_file(str(exc), args, flag_bots)
        if from_file:
            raise ConfigError(f"{args.config}: {exc}") from None
        raise _as_flag(str(exc), args) from None
    if ":" in cfg.host and not cfg.host.startswith("["):
        cfg.host = f"[{cfg.host}]"  # a bare IPv6 address: gRPC reads "::1:50051" otherwise
    return cfg


async def serve(
    cfg: ServerConfig, web_port: int | None = None, web_view: Callable[..., Any] | None = None
) -> int:
    """Serve until SIGTERM or Ctrl-C; with ``web_port``, the web view too (``web_view`` makes
    it instead of the plain one: ``serve --league`` adds the league's standings)."""
    server = ArenaServer(cfg)
    server.arena.metrics.registry.register(CoreLogCollector())  # the captured fd 2's lines
    try:
        port = await server.start()
    except (RuntimeError, OSError) as exc:
        # check_listen() tried first; this is a race with another process, or what gRPC alone
        # refuses. Stop what started, so that no task outlives the loop.
        field_name = "server.metrics_port" if server.port else "server.host/server.port"
        with contextlib.suppress(Exception):
            await server.server.stop(None)
        raise ConfigError(
            f"{field_name}: cannot listen on {cut(cfg.host)}:"
            f"{cfg.metrics_port if server.port else cfg.port} ({cut(str(exc))})"
        ) from exc
    tune_gc()
    print(f"uno-arena: serving on {cfg.host}:{port}", flush=True)
    if cfg.unix_socket:  # a line of its own: the first one ends with the port, as tools read it
        print(f"uno-arena: also serving on the Unix socket {cfg.unix_socket}", flush=True)
    if server.metrics_port is not None:
        print(f"uno-arena: metrics on http://{cfg.host}:{server.metrics_port}/metrics", flush=True)
    web = None
    if web_port is not None:  # the web view: a spectator of this server over loopback gRPC
        from uno_server.web import start_web_view

        try:
            web = await start_web_view(
                grpc_host=cfg.host,
                grpc_port=port,
                admin_token=cfg.admin_token,
                web_host=cfg.host,
                web_port=web_port,
                tls_cert=cfg.tls_cert,
                **({"view": web_view} if web_view is not None else {}),
            )
        except OSError as exc:  # the web port, not the game server's
            await server.stop()
            why = "address already in use" if exc.errno == errno.EADDRINUSE else exc.strerror
            raise ConfigError(
                f"--web-port {web_port}: cannot serve the web view on {cfg.host}:{web_port} "
                f"({why or exc}); choose another port"
            ) from None
        print(f"uno-arena: web view on http://{cfg.host}:{web.port}/", flush=True)
        if web_view is not None:
            print(f"uno-arena: league standings on http://{cfg.host}:{web.port}/league", flush=True)
    await _until_stopped(server)
    if web is not None:
        await web.stop()
    await server.stop()
    return 0


STOP_NOW = "uno-arena: stopping now: the hands in play end as shut down"
"""The line of a second Ctrl-C during the drain."""


async def _until_stopped(server: ArenaServer) -> None:
    """Wait for SIGTERM or Ctrl-C, then say that the drain begins. From then on a Ctrl-C
    (a second one, or the first after SIGTERM) stops now: the hands in play end at once with
    END_CAUSE_SHUTDOWN, as at the end of server.drain_timeout_s, and the server exits as it
    would then (status 0). It was ignored, silently."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    first: list[int] = []

    def on_signal(sig: int) -> None:
        first.append(sig)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)
    await stop.wait()
    ctrl_c = "Ctrl-C again" if first[0] == signal.SIGINT else "Ctrl-C"
    loop.add_signal_handler(signal.SIGINT, _stop_now, server)
    loop.add_signal_handler(signal.SIGTERM, lambda: None)  # a second SIGTERM: the drain goes on
    print(
        f"uno-arena: stopping: no new matches; finishing hands in play ({ctrl_c}: stop now)",
        flush=True,
    )


def _stop_now(server: ArenaServer) -> None:
    """End every hand in play now, as a shutdown (a later Ctrl-C: the same line again, and
    nothing left to end)."""
    print(STOP_NOW, flush=True)
    server.arena.draining = True  # and none begins (server.stop says so too, a little later)
    for table in list(server.arena.running.values()):
        if table.task is not None and not table.task.done():
            table.cancel(game_pb2.END_CAUSE_SHUTDOWN, "the server is shutting down")


def cmd_serve(args: argparse.Namespace, web_view: Callable[..., Any] | None = None) -> int:
    """Run the game service until SIGTERM or Ctrl-C."""
    with captured():  # gRPC core's lines on fd 2 become JSON events, rate-limited (corelog)
        return _serve_captured(args, web_view)


def _serve_captured(args: argparse.Namespace, web_view: Callable[..., Any] | None) -> int:
    configure_logging(args.log_level, args.log_format == "json")
    web_port = getattr(args, "web_port", None)  # checked first: it needs no config
    if web_port is not None and not 0 <= web_port <= 65535:
        raise ConfigError(f"--web-port: must be 0-65535, got {web_port}")
    cfg = config_from_args(args)
    check_listen(cfg, web_port)
    try:
        return asyncio.run(serve(cfg, web_port, web_view))
    except OSError as exc:
        raise ConfigError(f"cannot serve on {cfg.host}:{cfg.port}: {exc}") from exc
