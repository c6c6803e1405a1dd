"""``uno-arena serve``: configuration, logging, signals."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import tomllib
from pathlib import Path
from typing import Any

import structlog

from .auth import parse_bot_specs
from .limits import NAME_RE
from .server import ArenaServer, ServerConfig, tune_gc


class ConfigError(Exception):
    """A bad configuration value; the message names the field."""


_FIELDS: dict[str, type] = {
    "host": str,
    "port": int,
    "metrics_port": int,
    "admin_token": str,
    "tls_cert": str,
    "tls_key": str,
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
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    for key, value in data.items():
        if key not in ("server", "bots"):
            raise ConfigError(f"{path}: unknown table [{key}] (expected [server] and [bots])")
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {key}: must be a table, [{key}]")
    for key, value in data.get("server", {}).items():
        want = _FIELDS.get(key)
        if want is None:
            raise ConfigError(
                f"{path}: server.{key}: unknown setting (known: {', '.join(sorted(_FIELDS))})"
            )
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, want) or isinstance(value, bool):
            raise ConfigError(f"{path}: server.{key}: must be {want.__name__}, got {value!r}")
        setattr(cfg, key, value)
    for name, token in data.get("bots", {}).items():
        check_bot_name(name, f"{path}: bots")
        if not isinstance(token, str) or len(token) < 8:
            raise ConfigError(f"{path}: bots.{name}: the token must be a string of 8+ characters")
        cfg.bots[name] = token
    return cfg


def check_bot_name(name: str, where: str) -> None:
    """Bot names are what Hello.bot_name and CreateMatch seats may carry (limits.BOT_NAME)."""
    if not (1 <= len(name) <= 64 and NAME_RE.fullmatch(name)):
        shown = name[:64] if name.isprintable() else repr(name[:64])
        raise ConfigError(f"{where}.{shown}: a bot name is 1-64 characters of [A-Za-z0-9_.-]")


def validate(cfg: ServerConfig) -> None:
    if not 0 <= cfg.port <= 65535:
        raise ConfigError(f"server.port: must be 0-65535, got {cfg.port}")
    if cfg.metrics_port is not None and not 0 <= cfg.metrics_port <= 65535:
        raise ConfigError(f"server.metrics_port: must be 0-65535, got {cfg.metrics_port}")
    if bool(cfg.tls_cert) != bool(cfg.tls_key):
        raise ConfigError("server.tls_cert and server.tls_key: give both or neither")
    for f in ("tls_cert", "tls_key"):
        p = getattr(cfg, f)
        if p and not Path(p).is_file():
            raise ConfigError(f"server.{f}: {p} is not a readable file")
    for name, (lo, hi) in _RANGES.items():
        v = getattr(cfg, name)
        if not lo <= v <= hi:
            raise ConfigError(f"server.{name}: must be {lo:g}-{hi:g}, got {v!r}")
    if not cfg.admin_token:
        raise ConfigError("server.admin_token: required (or set UNO_ARENA_ADMIN_TOKEN)")
    if len(cfg.admin_token) < 8:
        raise ConfigError("server.admin_token: must be at least 8 characters")


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


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    cfg = load_config(args.config)
    for name in (
        "host",
        "port",
        "metrics_port",
        "admin_token",
        "tls_cert",
        "tls_key",
        "retain_matches",
        "retain_seconds",
        "log_linger_seconds",
        "log_linger_matches",
    ):
        v = getattr(args, name)
        if v is not None:
            setattr(cfg, name, v)
    if not cfg.admin_token:
        cfg.admin_token = os.environ.get("UNO_ARENA_ADMIN_TOKEN", "")
    try:
        cfg.bots.update(parse_bot_specs(args.bot))
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    for name, token in cfg.bots.items():
        check_bot_name(name, "bots")
        if len(token) < 8:
            raise ConfigError(f"bots.{name}: the token must be at least 8 characters")
    validate(cfg)
    return cfg


async def serve(cfg: ServerConfig, web_port: int | None = None) -> int:
    server = ArenaServer(cfg)
    port = await server.start()
    tune_gc()
    print(f"uno-arena: serving on {cfg.host}:{port}", flush=True)
    if server.metrics_port is not None:
        print(f"uno-arena: metrics on http://{cfg.host}:{server.metrics_port}/metrics", flush=True)
    web = None
    if web_port is not None:  # the web view: a spectator of this server over loopback gRPC
        from uno_server.web import start_web_view

        web = await start_web_view(
            grpc_host=cfg.host,
            grpc_port=port,
            admin_token=cfg.admin_token,
            web_host=cfg.host,
            web_port=web_port,
            tls_cert=cfg.tls_cert,
        )
        print(f"uno-arena: web view on http://{cfg.host}:{web.port}/", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    print("uno-arena: stopping: no new matches; finishing hands in play", flush=True)
    if web is not None:
        await web.stop()
    await server.stop()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the game service until SIGTERM or Ctrl-C."""
    configure_logging(args.log_level, args.log_format == "json")
    cfg = config_from_args(args)
    web_port = getattr(args, "web_port", None)
    if web_port is not None and not 0 <= web_port <= 65535:
        raise ConfigError(f"--web-port: must be 0-65535, got {web_port}")
    try:
        return asyncio.run(serve(cfg, web_port))
    except OSError as exc:
        raise ConfigError(f"cannot serve on {cfg.host}:{cfg.port}: {exc}") from exc
