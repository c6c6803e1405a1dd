"""Session 54's examinations of messages: a config range error echoed 1e300 as its 301 digits
(numbers are echoed compactly, never past MAX_ECHO characters); "1 matches are running"; the
stop line after a SIGTERM said "(Ctrl-C: stop now)" where the operations page quoted only the
line after a Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from tests.refusal import refused
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc
from uno_server.service.arena import too_many_matches
from uno_server.service.main import MAX_ECHO, _num
from uno_tournament import config_values

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_a_huge_float_in_the_server_config_is_echoed_compactly(tmp_path: Path) -> None:
    cfg = tmp_path / "big.toml"
    cfg.write_text(
        '[server]\nport = 0\nadmin_token = "admin-secret-s54-1"\nstream_messages_per_s = 1e300\n'
    )
    line = refused("serve", "--config", str(cfg))
    assert line.endswith("server.stream_messages_per_s: must be 10-1000000, got 1e+300"), line


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1e300, "1e+300"),
        (-1e300, "-1e+300"),
        (10**400, "1e+400"),  # an int past a float's range
        (123456789012345678, "1.23457e+17"),
        (2 * 1024 * 1024, "2097152"),  # limits as a person writes them
        (2.5, "2.5"),
        (float("inf"), "inf"),
    ],
    ids=lambda v: str(v)[:12],
)
def test_numbers_are_echoed_compactly(value: float, shown: str) -> None:
    assert _num(value) == shown
    assert len(_num(value)) <= MAX_ECHO


def test_a_huge_whole_number_flag_is_echoed_compactly() -> None:
    line = refused("match", "--seats", "a", "b", "--hands", "9" * 200)
    assert "--hands: must be from 1 to 100000, got 1e+200 (" in line, line


def test_the_tournament_config_echoes_numbers_cut() -> None:
    with pytest.raises(config_values.ConfigError) as info:
        config_values._float("x.rate", 1e300, 0, 10)
    assert str(info.value) == "x.rate: must be 0-10, got 1e+300"
    with pytest.raises(config_values.ConfigError) as info:
        config_values._int("x.n", 10**400, 0, 10)
    got = str(info.value).split("got ", 1)[1]
    assert len(got) == config_values.MAX_ECHO and got.endswith("…"), got


def test_too_many_matches_counts_in_words() -> None:
    assert too_many_matches(1) == "1 match is running (server.max_matches); wait for it to end"
    assert too_many_matches(3).startswith("3 matches are running (server.max_matches); ")


def test_the_stop_line_after_sigterm_is_the_one_the_docs_quote() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNO_")}
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"),
            *("--admin-token", "admin-secret-s54-2", "--log-level", "warning"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first.startswith("uno-arena: serving on "), first
        # an answered call: the loop has run past the line, its signal handlers are in place
        with grpc.insecure_channel(first.split()[-1]) as ch:
            admin_pb2_grpc.AdminServiceStub(ch).ListBots(
                admin_pb2.ListBotsRequest(),
                metadata=(("authorization", "Bearer admin-secret-s54-2"),),
                timeout=60,
            )
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    line = "uno-arena: stopping: no new matches; finishing hands in play (Ctrl-C: stop now)"
    assert line in out.splitlines(), out
    page = " ".join((DOCS / "operations.md").read_text().split())
    assert "`... (Ctrl-C: stop now)` after a SIGTERM" in page
    assert (
        "`uno-arena: stopping: no new matches; finishing hands in play (Ctrl-C again: stop now)` "
        "after a Ctrl-C" in page
    )
