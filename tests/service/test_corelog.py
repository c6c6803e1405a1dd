"""The server's fd 2 captured (corelog): gRPC core's lines, which a client provokes at will,
become JSON events, rate-limited and counted; the server's own log and a crash's traceback still
reach stderr."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.request
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from uno_server.service import corelog
from uno_server.service.ratelog import RateLimitedLog

ADMIN = "admin-token-corelog"
CORE_LINE = (
    b"E1206 16:03:46.807332   24589 hpack_encoder.cc:618] Ignoring key value pair due to size "
    b"limit. Current buffer size: 15"
)


class _Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **kw: self.lines.append((level, event, kw))


def test_a_core_line_is_an_event_with_its_level_source_and_text_rate_limited() -> None:
    now = [0.0]
    limits = RateLimitedLog(burst=3, window_s=60, clock=lambda: now[0])
    counts = corelog.LineCounts()
    log = _Log()
    written = [corelog.handle_line(CORE_LINE, log, limits, counts) for _ in range(5)]
    assert written == [True, True, True, False, False]
    assert counts.lines == 5 and counts.suppressed == 2
    level, event, fields = log.lines[0]
    assert (level, event, fields["source"]) == ("error", "grpc core", "hpack_encoder.cc:618")
    assert fields["text"].startswith("Ignoring key value pair")
    now[0] = 61.0  # the next window's first line says how many were left out
    assert corelog.handle_line(CORE_LINE, log, limits, counts)
    assert log.lines[-1][2]["suppressed"] == 2
    # any other line: its own kind, cut to MAX_TEXT
    assert corelog.handle_line(b"x" * 5000, log, limits, counts)
    level, event, fields = log.lines[-1]
    assert (level, event) == ("warning", "stderr output")
    assert len(fields["text"]) == corelog.MAX_TEXT
    assert not corelog.handle_line(b"   ", log, limits, counts)  # a blank line is nothing


def test_captured_sends_fd2_to_the_log_and_sys_stderr_and_tracebacks_past_it() -> None:
    code = textwrap.dedent(
        """
        import os, sys
        from uno_server.service import corelog
        seen = []
        with corelog.captured(lambda line: print("CAPTURED", line.decode(), file=sys.stderr)):
            os.write(2, b"E1206 16:03:46.8 1 a.cc:1] from native code\\npartial")
            print("own line", file=sys.stderr)
            raise RuntimeError("crash inside")
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert res.returncode == 1
    err = res.stderr.splitlines()
    assert "own line" in err
    assert "CAPTURED E1206 16:03:46.8 1 a.cc:1] from native code" in err
    assert "CAPTURED partial" in err  # a last line without its newline is not lost
    assert not any(line.startswith("E1206") for line in err)  # never written as it was
    assert err[-1] == "RuntimeError: crash inside"  # the traceback reaches stderr


def test_a_flood_of_refused_metadata_leaves_json_lines_only_and_is_counted() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UNO_", "GRPC_"))}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"),
            *("--metrics-port", "0", "--admin-token", ADMIN),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        metrics_url = proc.stdout.readline().strip().rsplit(" ", 1)[1]
        calls = corelog.CORE_LOG.burst + 10
        md = tuple((f"x-{i}", "v") for i in range(500))
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            health = health_pb2_grpc.HealthStub(ch)
            for _ in range(calls):
                try:
                    health.Check(health_pb2.HealthCheckRequest(), metadata=md, timeout=30)
                except grpc.RpcError:
                    pass
        with urllib.request.urlopen(metrics_url, timeout=30) as r:
            page = r.read().decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    counted = dict(
        line.split(" ") for line in page.splitlines() if line.startswith("uno_grpc_core_lines")
    )
    events = [json.loads(line) for line in err.splitlines()]  # every line is JSON
    core = [e for e in events if e["event"] == "grpc core"]
    total = float(counted["uno_grpc_core_lines_total"])
    suppressed = float(counted["uno_grpc_core_lines_suppressed_total"])
    assert total >= calls
    assert 1 <= len(core) < calls  # rate-limited: BURST a minute
    assert len(core) + suppressed == total  # every line logged or counted as left out
    assert core[0]["source"].startswith("hpack_encoder.cc:")
    assert events[-1]["event"] == "server stopped"  # the own log goes on after the flood
