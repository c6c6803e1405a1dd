"""An examination of operating the service (session 50): the decision-latency histogram reaches
the longest decision a match may give; a bad admin or bot token is named where it came from (the
flag, the environment, the file); ``uno-arena match`` reads UNO_ARENA_ADMIN_TOKEN; a TLS mistake
says what to give; a taken ``--web-port`` is refused before the server starts; the runner's
"lost the server" line names the server it lost; a config file's key outside [server] says
where it goes."""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest

from tests.refusal import cli, refused
from tests.service.test_tls import _self_signed
from uno_server.gen.uno.v1 import game_pb2
from uno_server.service.main import ConfigError, add_serve_arguments, config_from_args
from uno_server.service.metrics import LATENCY_BUCKETS, ServiceMetrics
from uno_server.service.tlsclient import connection_hint

ADMIN = "admin-token-s50-1234"
ENV = "UNO_ARENA_ADMIN_TOKEN"


def _env(**extra: str) -> dict[str, str]:
    """This environment without UNO_* variables (as tests.refusal.cli), plus ``extra``."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("UNO_")}, **extra}


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env if env is not None else _env(),
    )


def _one_line(res: subprocess.CompletedProcess[str]) -> str:
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, (res.stdout[-500:], res.stderr[-2000:])
    return lines[0]


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    """Start ``uno-arena serve --port 0`` with extra flags; the address it serves on."""
    procs: list[subprocess.Popen[str]] = []

    def start(*extra: str) -> str:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "uno_server.cli", "serve", "--port", "0"),
                *("--admin-token", ADMIN, "--log-level", "warning", *extra),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=_env(),
        )
        procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("uno-arena: serving on 127.0.0.1:"), line
        return line.rsplit(" ", 1)[1]

    yield start
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


# ---- 1. the latency histogram reaches the longest decision_ms


def _max_decision_ms() -> int:
    """The server's upper limit of TimeControl.decision_ms, as CreateMatch refuses beyond it
    (read from the code's own check, not written here)."""
    from uno_server.service.arena import _time_control
    from uno_server.service.rejections import RejectError

    with pytest.raises(RejectError) as info:
        _time_control(game_pb2.TimeControl(decision_ms=2**31 - 1))
    found = re.search(r"time_control\.decision_ms: must be (\d+)-(\d+)", str(info.value))
    assert found is not None, str(info.value)
    return int(found[2])


def test_the_latency_buckets_reach_the_longest_decision_a_match_may_give() -> None:
    longest = _max_decision_ms() / 1000
    assert LATENCY_BUCKETS[-1] >= longest, (LATENCY_BUCKETS, longest)
    old = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
    assert set(old) <= set(LATENCY_BUCKETS)  # dashboards and recording rules keep their bounds
    m = ServiceMetrics(process=False)
    lat = m.decision_latency.labels("slow")
    lat.observe(longest)  # a timeout at the longest deadline counts at it
    lat.observe(7.0)  # the examination's 7 s decision_ms
    reg = m.registry

    def bucket(le: float) -> float | None:
        return reg.get_sample_value(
            "uno_decision_latency_seconds_bucket", {"bot": "slow", "le": str(float(le))}
        )

    assert bucket(5.0) == 0  # a 7 s timeout is no longer read as 5 s
    assert bucket(7.5) == 1
    assert bucket(longest) == 2  # in a finite bucket, not only in +Inf
    finite = [b for b in LATENCY_BUCKETS if b >= longest]
    assert finite and bucket(finite[0]) == 2


# ---- 3. a bad token named where it came from


def _config(args: list[str]) -> None:
    p = argparse.ArgumentParser()
    add_serve_arguments(p)
    config_from_args(p.parse_args(args))


def test_a_bad_admin_token_is_named_by_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "server.toml"
    path.write_text("[server]\nport = 0\n")
    monkeypatch.setenv(ENV, "adm1")
    for args in ([], ["--config", str(path)]):
        with pytest.raises(ConfigError) as info:
            _config(args)
        assert str(info.value).startswith(f"{ENV}: a token is 8-128 characters"), info.value
        assert "this one has 4" in str(info.value) and "adm1" not in str(info.value)
    monkeypatch.delenv(ENV)
    with pytest.raises(ConfigError) as info:
        _config(["--config", str(path), "--admin-token", "adm1"])
    assert str(info.value).startswith("--admin-token: a token is"), info.value
    path.write_text('[server]\nadmin_token = "adm1"\n')  # the file's own field: named with it
    with pytest.raises(ConfigError) as info:
        _config(["--config", str(path)])
    assert str(info.value).startswith(f"{path}: server.admin_token: a token is"), info.value
    # and as a user sees it: one line
    line = _one_line(_run("serve", "--port", "0", env=_env(**{ENV: "adm1"})))
    assert line.startswith(f"uno-arena: {ENV}: a token is 8-128 characters"), line


def test_a_bad_bot_token_from_the_flag_is_not_blamed_on_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "server.toml"
    path.write_text('[server]\nport = 0\n[bots]\nfiled = "filed-token-123"\n')
    with pytest.raises(ConfigError) as info:
        _config(["--config", str(path), "--admin-token", ADMIN, "--bot", "alice=short"])
    assert str(info.value).startswith("--bot alice: a token is"), info.value
    monkeypatch.setenv(ENV, ADMIN)
    with pytest.raises(ConfigError) as info:  # a flag's bot with the environment's admin token
        _config(["--config", str(path), "--bot", f"alice={ADMIN}"])
    # (bots.NAME as the tests of test_serve_cli.py pin it for a clash, marked as the flag's)
    said = str(info.value)
    assert said.startswith(f"bots.alice (--bot): the token is the admin token ({ENV})"), said
    with pytest.raises(ConfigError) as info:  # the file's bot and a flag's share a token
        _config(["--config", str(path), "--bot", "bob=filed-token-123"])
    assert str(info.value).startswith(f"{path}: bots.filed and bots.bob (--bot): "), info.value
    with pytest.raises(ConfigError) as info:  # two flags' bots: not the file's
        _config(["--config", str(path), "--bot", "a1=tok-en-1234", "--bot", "b2=tok-en-1234"])
    assert str(info.value).startswith("bots.a1 (--bot) and bots.b2 (--bot): "), info.value


# ---- 4. match reads UNO_ARENA_ADMIN_TOKEN


def test_match_takes_the_admin_token_from_the_environment(serve: Callable[..., str]) -> None:
    addr = serve()
    seats = ("--seats", "random", "heuristic", "--hands", "1")
    played = _run("match", "--server", addr, *seats, env=_env(**{ENV: ADMIN}))
    assert played.returncode == 0, played.stdout[-1000:] + played.stderr[-2000:]
    assert "hand   1" in played.stdout, played.stdout
    line = refused("match", "--server", addr, *seats)  # neither: one line naming both ways
    assert f"--admin-token: required (or set {ENV})" in line, line
    assert ENV in cli("match", "--help").stdout


# ---- 5. a TLS mistake says what to give


def test_tls_mistakes_in_match_say_what_to_give(tmp_path: Path, serve: Callable[..., str]) -> None:
    cert, key = _self_signed(tmp_path)
    (tmp_path / "other").mkdir()
    other, _ = _self_signed(tmp_path / "other")
    addr = serve("--tls-cert", str(cert), "--tls-key", str(key))
    base = ("match", "--server", addr, "--admin-token", ADMIN, "--seats", "random", "random")
    line = refused(*base)  # plaintext against TLS: gRPC's "Socket closed"
    assert "UNAVAILABLE" in line, line
    assert "if the server speaks TLS, give --tls-ca FILE (its CA) or --tls-ca system" in line
    line = refused(*base, "--tls-ca", str(other))  # a CA that did not sign it
    assert "CERTIFICATE_VERIFY_FAILED" in line, line
    assert line.endswith("give --tls-ca the CA certificate that signed the server's certificate")


def test_the_connection_hint_is_only_for_tls_mistakes() -> None:
    closed = (
        "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:1.2.3.4:5: Socket closed"
    )
    assert "--tls-ca FILE" in connection_hint(closed, None)
    assert connection_hint(closed, "ca.pem") == ""  # already TLS: not this mistake
    refused_ = "failed to connect to all addresses; last error: UNKNOWN: Connection refused"
    assert connection_hint(refused_, None) == ""
    wrong = "Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: WRONG_VERSION_NUMBER"
    assert "does not speak TLS" in connection_hint(wrong, "ca.pem")


# ---- 7. a taken --web-port is refused before the server starts


def test_a_taken_web_port_is_refused_before_serving() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = _run("serve", "--port", "0", "--admin-token", ADMIN, "--web-port", str(port))
    line = _one_line(res)  # no "server stopped" log line before it
    assert line == (
        f"uno-arena: --web-port {port}: cannot serve the web view on 127.0.0.1:{port} "
        "(address already in use); choose another port"
    ), line
    assert "serving on" not in res.stdout, res.stdout
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    line = refused("serve", "--port", str(free), "--admin-token", ADMIN, "--web-port", str(free))
    assert f"--web-port {free}: it is also server.port" in line, line


# ---- 8. the runner names the server it lost; a key outside [server]


def _lost(monkeypatch: pytest.MonkeyPatch, *, ca: str | None, env: bool, details: str) -> str:
    from uno_tournament.player import Player, RunnerError

    token = "runner-admin-token-1"
    if env:
        monkeypatch.setenv(ENV, token)
    else:
        monkeypatch.delenv(ENV, raising=False)
    p = object.__new__(Player)
    p.server_seen = -1e9  # long ago: past the grace
    p.config = SimpleNamespace(faults=SimpleNamespace(startup_timeout_s=60.0))  # type: ignore[assignment]
    p.progress = None
    p.shard = None
    p.server_addr = "10.1.2.3:47612"
    p.server_ca = ca
    p.admin_token = token
    p.out = Path("/runs/t1")
    err = grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details
    )
    with pytest.raises(RunnerError) as info:
        p._check_server(err)
    msg = str(info.value)
    assert token not in msg and "\n" not in msg
    return msg


def test_lost_the_server_names_the_address_it_knows(monkeypatch: pytest.MonkeyPatch) -> None:
    refused_ = "failed to connect to all addresses; last error: Connection refused"
    msg = _lost(monkeypatch, ca=None, env=False, details=refused_)
    assert msg.startswith("lost the server 10.1.2.3:47612: unreachable for more than 60 s")
    assert msg.endswith(
        "then: uno-arena tournament resume /runs/t1 --server 10.1.2.3:47612 --admin-token TOKEN"
    ), msg
    msg = _lost(monkeypatch, ca="ca.pem", env=True, details=refused_)
    assert msg.endswith(
        f"resume /runs/t1 --server 10.1.2.3:47612 --tls-ca ca.pem (the admin token from {ENV})"
    ), msg
    msg = _lost(
        monkeypatch, ca=None, env=False, details="last error: UNAVAILABLE: x: Socket closed"
    )
    assert "Socket closed; if the server speaks TLS, give --tls-ca FILE" in msg, msg


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("port = 47612\n[server]\nhost = '127.0.0.1'\n", "port is outside [server]"),
        ("port = 47612\n", "put port under [server]"),
        ("alice = 'alice-token-1'\n", "put settings under [server] and bots' name = token"),
    ],
)
def test_a_key_outside_the_tables_says_where_it_goes(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "server.toml"
    path.write_text(text)
    line = refused("serve", "--config", str(path), "--admin-token", ADMIN)
    assert line.startswith(f"uno-arena: {path}: ") and says in line, line
    assert "unknown table" not in line, line
