"""``uno-arena serve`` as a process: the bound port, config errors, SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from tests.refusal import refused
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

ADMIN = "admin-token-1234"


def _serve(*extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "serve",
            "--port",
            "0",
            "--admin-token",
            ADMIN,
            "--log-level",
            "warning",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _port(proc: subprocess.Popen[str]) -> int:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("uno-arena: serving on 127.0.0.1:"), line
    return int(line.rsplit(":", 1)[1])


def test_port_zero_prints_the_bound_port_and_sigterm_exits_cleanly() -> None:
    proc = _serve()
    try:
        port = _port(proc)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            admin = admin_pb2_grpc.AdminServiceStub(ch)
            md = (("authorization", f"Bearer {ADMIN}"),)
            req = admin_pb2.CreateMatchRequest(
                seats=[game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_RANDOM)] * 4,
                rules=game_pb2.RuleSet(target_score=100_000),  # runs until stopped
            )
            created = admin.CreateMatch(req, metadata=md)
            time.sleep(0.5)
            assert (
                admin.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=created.match.match_id), metadata=md
                ).match.state
                == admin_pb2.MATCH_STATE_RUNNING
            )
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopping" in out
        assert time.monotonic() - t0 < 20
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("[server]\nport = 'x'\n", "server.port: must be int"),
        ("[server]\nbogus = 1\n", "server.bogus: unknown setting"),
        ("[bots]\nalice = 'short'\n", "bots.alice"),
        ("[nope]\n", "unknown table [nope]"),
        ("not toml [", "not valid TOML"),
    ],
)
def test_bad_config_is_one_plain_line_and_a_nonzero_exit(
    tmp_path: Path, config: str, message: str
) -> None:
    path = tmp_path / "server.toml"
    path.write_text(config)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "serve",
            "--config",
            str(path),
            "--admin-token",
            ADMIN,
        ],
        capture_output=True,
        check=False,
        text=True,
        timeout=30,
        env={**os.environ},
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr


def test_match_command_seats_a_connected_bot_and_reports_the_hands() -> None:
    proc = _serve("--bot", "py-heuristic=py-secret-token")
    bot = None
    try:
        port = _port(proc)
        bot = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uno_bot.examples.heuristic_bot",
                "--addr",
                f"127.0.0.1:{port}",
                "--token",
                "py-secret-token",
                "--name",
                "py-heuristic",
                "--log-level",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        cmd = [
            sys.executable,
            "-m",
            "uno_server.cli",
            "match",
            "--server",
            f"127.0.0.1:{port}",
            "--admin-token",
            ADMIN,
            "--seats",
            "py-heuristic",
            "heuristic",
            "random",
            "heuristic",
            "--hands",
            "3",
        ]
        for _ in range(50):  # wait for the bot to connect
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
            if "not connected" not in res.stderr:
                break
            time.sleep(0.2)
        assert res.returncode == 0, res.stderr
        assert res.stdout.count("winner: seat") == 3
        assert "py-heuristic" in res.stdout.splitlines()[-4]
        assert res.stdout.splitlines()[-5].split() == [
            "seat",
            "player",
            "wins",
            "timeouts",
            "faults",
            "late",
            "takeovers",
        ]
        bad = subprocess.run(
            [*cmd[:9], "nobody", "heuristic", "--hands", "1"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert bad.returncode == 2
        assert bad.stderr.count("\n") == 1 and "nobody" in bad.stderr
    finally:
        if bot is not None and bot.poll() is None:
            bot.terminate()
            bot.wait(timeout=10)
        if proc.poll() is None:
            proc.terminate()
        proc.communicate(timeout=30)  # also closes the pipes


# --------------------------------------------------------------- config errors: one line, exit 2


def _serve_once(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``uno-arena serve`` that is expected to refuse its configuration (never to serve)."""
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "serve", "--log-level", "warning", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env if env is not None else {k: v for k, v in os.environ.items() if "UNO_" not in k},
    )


def _one_line(res: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr[-2000:])
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr[-3000:]
    assert lines[0].startswith("uno-arena: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "serving on" not in res.stdout
    return lines[0]


def test_a_bot_token_equal_to_the_admin_token_is_refused() -> None:
    line = _one_line(
        _serve_once(
            "--port", "0", "--bot", "alice=alice-admin-tok", "--admin-token", "alice-admin-tok"
        ),
        "bots.alice",
        "admin token",
    )
    assert "alice-admin-tok" not in line  # a token is a secret: never printed


def test_the_admin_token_from_a_config_file_is_compared_too(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text('[server]\nadmin_token = "shared-token-9"\n[bots]\nbob = "shared-token-9"\n')
    _one_line(_serve_once("--config", str(path), "--port", "0"), "bots.bob", "admin token")


def test_two_bots_sharing_a_token_are_refused_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text('[bots]\nalice = "same-token-1"\nbob = "same-token-1"\n')
    line = _one_line(
        _serve_once("--config", str(path), "--admin-token", ADMIN, "--port", "0"),
        "bots.alice",
        "bots.bob",
        "same token",
    )
    assert "same-token-1" not in line
    # the same through --bot
    _one_line(
        _serve_once(
            "--admin-token",
            ADMIN,
            "--port",
            "0",
            "--bot",
            "a1=tok-en-1234",
            "--bot",
            "b2=tok-en-1234",
        ),
        "bots.a1",
        "bots.b2",
    )


@pytest.mark.parametrize(
    ("token", "says"),
    [
        ("has space-1234", "a space at position 4"),
        ("new\\nline-1234", "a newline at position 4"),
        ("short", "this one has 5"),
        ("x" * 129, "this one has 129"),
        ("caf\\u00e9-token-1", "U+00E9 at position 4"),
    ],
)
def test_a_token_outside_the_documented_alphabet_and_length_is_refused(
    tmp_path: Path, token: str, says: str
) -> None:
    path = tmp_path / "server.toml"
    path.write_text(f'[bots]\nalice = "{token}"\n')
    line = _one_line(
        _serve_once("--config", str(path), "--admin-token", ADMIN, "--port", "0"),
        "bots.alice",
        "8-128 characters of [A-Za-z0-9._~+/=-]",
        says,
    )
    assert "space-1234" not in line and "line-1234" not in line
    path.write_text(f'[server]\nadmin_token = "{token}"\n')
    _one_line(_serve_once("--config", str(path), "--port", "0"), "server.admin_token", says)


def test_an_unknown_key_of_200000_characters_is_cut_short(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    key = "k" * 200_000
    path.write_text(f"[server]\n{key} = 1\n")
    line = _one_line(
        _serve_once("--config", str(path), "--admin-token", ADMIN), "server.kkkk", "unknown setting"
    )
    assert len(line) < 600 and "…" in line
    path.write_text(f"[{key}]\n")
    line = _one_line(_serve_once("--config", str(path), "--admin-token", ADMIN), "unknown table")
    assert len(line) < 400
    path.write_text(f'[server]\nport = "{key}"\n')
    line = _one_line(_serve_once("--config", str(path), "--admin-token", ADMIN), "server.port")
    assert len(line) < 400


def test_a_config_file_over_one_mib_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    with path.open("w") as f:  # 50 MB of comment, as in the report
        line = "# " + "c" * 1000 + "\n"
        for _ in range(50_000):
            f.write(line)
    _one_line(_serve_once("--config", str(path), "--admin-token", ADMIN), str(path), "1024 KiB")
    path.write_text("# just under\n" + "#" * (1024 * 1024 - 100) + "\n[server]\nport = 0\n")
    assert len(path.read_bytes()) <= 1024 * 1024
    from uno_server.service.main import load_config

    assert load_config(str(path)).port == 0  # the limit is the size, not the content


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("256.1.1.1", "server.host: 256.1.1.1 is not an IP address"),
        ("", "server.host: empty"),
        ("1.2.3", "server.host: 1.2.3 is not an IP address"),
        ("::g", "server.host: ::g is not an IP address"),
        ("a b", "server.host: 'a b' is not a host name"),
        ("name.invalid", "server.host: cannot resolve name.invalid"),
    ],
)
def test_a_host_that_cannot_be_listened_on_is_one_line(
    tmp_path: Path, host: str, says: str
) -> None:
    path = tmp_path / "server.toml"
    path.write_text(f'[server]\nhost = "{host}"\nport = 0\n')
    _one_line(_serve_once("--config", str(path), "--admin-token", ADMIN), says)


def test_a_port_in_use_is_one_line_naming_the_port() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        _one_line(
            _serve_once("--port", str(port), "--admin-token", ADMIN),
            f"server.port: {port} is in use on 127.0.0.1",
        )
        _one_line(
            _serve_once("--port", "0", "--metrics-port", str(port), "--admin-token", ADMIN),
            f"server.metrics_port: {port} is in use",
        )


def test_a_port_held_by_a_connection_is_not_said_to_have_a_server() -> None:
    """A port can be in use as the local end of another program's connection, with nothing
    listening on it: the refusal said "another server listens there" (an examination, whose
    ports were held by another examiner's connections)."""
    import socket

    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        client.bind(("127.0.0.1", 0))
        port = client.getsockname()[1]
        client.connect(server.getsockname())
        peer, _ = server.accept()
        with peer:
            line = _one_line(
                _serve_once("--port", str(port), "--admin-token", ADMIN),
                f"server.port: {port} is in use on 127.0.0.1 (no server listens there",
            )
        assert "another server listens" not in str(line)
        with socket.socket() as s:  # and one a server listens on is said to be so
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            busy = s.getsockname()[1]
            _one_line(
                _serve_once("--port", str(busy), "--admin-token", ADMIN),
                f"server.port: {busy} is in use on 127.0.0.1 (another server listens there)",
            )


def test_a_port_held_by_a_running_server_is_refused_not_shared() -> None:
    """gRPC binds with SO_REUSEPORT: without the check a second server would share the port
    of the first and take half its connections."""
    first = _serve()
    try:
        port = _port(first)
        _one_line(
            _serve_once("--port", str(port), "--admin-token", ADMIN),
            f"server.port: {port} is in use",
        )
    finally:
        first.terminate()
        first.communicate(timeout=30)


def test_tls_files_that_are_not_pem_are_one_line_naming_the_field(tmp_path: Path) -> None:
    from tests.service.test_tls import _self_signed

    cert, key = _self_signed(tmp_path)
    (tmp_path / "other").mkdir()
    other_cert, other_key = _self_signed(tmp_path / "other")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")

    def run(c: Path, k: Path) -> subprocess.CompletedProcess[str]:
        return _serve_once(
            "--port", "0", "--admin-token", ADMIN, "--tls-cert", str(c), "--tls-key", str(k)
        )

    _one_line(run(junk, key), "--tls-cert: ", "no PEM certificate")
    _one_line(run(key, key), "--tls-cert: ", "no PEM certificate")  # a key is not a cert
    _one_line(run(cert, junk), "--tls-key: ", "not the PEM private key")
    _one_line(run(cert, other_key), "--tls-key: ", "not the PEM private key")
    _one_line(run(cert, tmp_path / "missing.pem"), "--tls-key: ", "not a readable file")
    _one_line(run(other_cert, key), "--tls-key: ", "not the PEM private key")


def test_grpc_refusing_to_listen_after_the_checks_is_a_config_error_too() -> None:
    """The last line of defence: whatever gRPC refuses at start (a race for the port, a
    host that slipped past the checks) is a ConfigError, and nothing is left running."""
    import asyncio

    from uno_server.service.main import ConfigError, serve
    from uno_server.service.server import ServerConfig

    cfg = ServerConfig(host="256.1.1.1", port=0, admin_token=ADMIN)
    with pytest.raises(
        ConfigError, match=r"server.host/server.port: cannot listen on 256\.1\.1\.1"
    ):
        asyncio.run(serve(cfg))


def test_a_real_certificate_and_its_key_pass_the_checks(tmp_path: Path) -> None:
    from tests.service.test_tls import _self_signed
    from uno_server.service.main import validate
    from uno_server.service.server import ServerConfig

    cert, key = _self_signed(tmp_path)
    validate(ServerConfig(admin_token=ADMIN, tls_cert=str(cert), tls_key=str(key)))


def test_the_token_registry_refuses_the_admin_token_and_a_shared_token() -> None:
    """Also below the command line (bots added at run time): a bot token is never the admin
    token, and never another bot's."""
    from uno_server.service.auth import TokenRegistry

    reg = TokenRegistry(admin_token="admin-token-1234")
    reg.add_bot("alice", "alice-token-1")
    with pytest.raises(ValueError, match="admin token"):
        reg.add_bot("mallory", "admin-token-1234")
    with pytest.raises(ValueError, match=r"bots\.alice and bots\.bob"):
        reg.add_bot("bob", "alice-token-1")
    reg.add_bot("alice", "alice-token-2")  # a new token for the same bot is fine
    assert reg.bot_for("alice-token-2") == "alice" and reg.bot_for("alice-token-1") is None
    assert not reg.is_admin("alice-token-2") and reg.bot_for("admin-token-1234") is None


def test_a_bare_ipv6_host_is_bracketed_for_grpc() -> None:
    """gRPC reads "::1:50051" as something else; "[::1]:50051" is what it binds."""
    import argparse

    from uno_server.service.main import add_serve_arguments, config_from_args

    p = argparse.ArgumentParser()
    add_serve_arguments(p)
    for given, used in (("::1", "[::1]"), ("[::1]", "[::1]"), ("127.0.0.1", "127.0.0.1")):
        args = p.parse_args(["--host", given, "--admin-token", ADMIN])
        assert config_from_args(args).host == used


def test_serve_also_listens_on_a_unix_socket(tmp_path: Path) -> None:
    """`--unix-socket PATH`: the same service on a Unix socket (the tournament runner's
    sandboxed bots reach their server there, without a relay on the runner's side)."""
    sock = tmp_path / "server.sock"
    proc = _serve("--unix-socket", str(sock))
    try:
        _port(proc)
        assert sock.exists()
        with grpc.insecure_channel(f"unix:{sock}") as ch:
            admin = admin_pb2_grpc.AdminServiceStub(ch)
            md = (("authorization", f"Bearer {ADMIN}"),)
            res = admin.ListBots(admin_pb2.ListBotsRequest(), metadata=md, timeout=30)
            assert list(res.bots) == []
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("missing/server.sock", "--unix-socket: its folder"),
        ("x" * 120, "is over 107 bytes"),
        ("a-file", "exists and is not a socket"),
    ],
)
def test_a_bad_unix_socket_path_is_one_line_naming_the_field(
    tmp_path: Path, name: str, says: str
) -> None:
    (tmp_path / "a-file").write_text("not a socket")
    path = str(tmp_path / name)
    line = _one_line(
        _serve_once("--port", "0", "--admin-token", ADMIN, "--unix-socket", path), says
    )
    assert line.startswith("uno-arena: --unix-socket: "), line  # the flag typed


def test_a_busy_web_port_names_itself_and_stops_the_server() -> None:
    # an examination: the line named the game server's port 0, not the web port that was taken
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = _serve_once(
            "--port", "0", "--admin-token", "admin-token-1234", "--web-port", str(port)
        )
    assert res.returncode == 2, res.stderr[-2000:]
    last = res.stderr.strip().splitlines()[-1]
    assert last == (
        f"uno-arena: --web-port {port}: cannot serve the web view on 127.0.0.1:{port} "
        "(address already in use); choose another port"
    ), last


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["simulate", "--hands", "0"], "--hands: must be from 1 to 10000000, got 0"),
        (["simulate", "--seed", "-1"], "--seed: must be from 0 to 18446744073709551615, got -1"),
        (["match", "--admin-token", "t", "--seats", "a", "--seed", "-1"], "--seed: must be from 0"),
        (["play", "--seed", "-1"], "--seed: must be from 0 to 18446744073709551615, got -1"),
        (["simulate", "--hands", "\uff11\uff12"], "--hands: must be a whole number"),
        (["simulate", "--hands", "1_000"], "--hands: must be a whole number, got '1_000'"),
        # one bot a seat: seats=5 with the four default bots was an IndexError traceback, and
        # seats=2 played two of them without a word
        (["simulate", "--rule", "seats=5"], "--rule seats=5: give one --bots entry per seat"),
        (["simulate", "--rule", "seats=2"], "--rule seats=2: give one --bots entry per seat"),
        (["simulate", "--rule", "seats=3", "--bots", "random", "random"], "(2 given)"),
        (["match", "--admin-token", "t", "--seats", "a", "--decision-ms", "9" * 12], "2147483647"),
    ],
)
def test_numbers_out_of_range_are_one_line(args: list[str], want: str) -> None:
    line = refused(*args)
    assert want in line, line


def test_what_needs_no_admin_token_is_checked_before_it_is_asked_for(tmp_path: Path) -> None:
    """A bad --web-port or --bot used to be named only on a second run, after the missing
    admin token; a folder given as --config was a traceback; a bad field of a config file is
    named with the file, as its parse errors are."""
    assert "--web-port: must be 0-65535, got 99999" in refused("serve", "--web-port", "99999")
    assert "bots.a/b: a bot name is" in refused("serve", "--bot", "a/b=" + "t" * 12)
    folder = tmp_path / "dir.toml"
    folder.mkdir()
    assert refused("serve", "--config", str(folder)).endswith(
        f"{folder}: a folder, not a configuration file"
    )
    cfg = tmp_path / "s.toml"
    cfg.write_text("[server]\nretain_matches = -1\n")
    line = refused("serve", "--config", str(cfg))
    assert line.startswith(f"uno-arena: {cfg}: server.retain_matches: must be"), line
    line = refused("serve", "--config", str(cfg), "--retain-matches", "-2")  # the flag's value
    assert line.startswith("uno-arena: --retain-matches: must be"), line


@pytest.mark.parametrize(
    "command",
    [["league"], ["league", "submit"], ["sandbox"], ["sandbox", "check"], ["tournament", "run"]],
)
def test_help_is_written_for_people_not_a_docstring(command: list[str]) -> None:
    """`league --help` and `sandbox --help` printed module docstrings: reStructuredText marks
    (``bwrap``, :mod:, :func:) and the names of internal functions (an examination)."""
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", *command, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    for mark in ("``", ":mod:", ":func:", ":class:", ":data:"):
        assert mark not in res.stdout, (mark, res.stdout)


def test_a_bot_spec_without_its_name_is_refused_without_showing_the_token() -> None:
    """`--bot TOKEN` with NAME= forgotten echoed the token (into a pod's log; an examination)."""
    secret = "justatoken-secret-value"
    line = refused("serve", "--port", "0", "--admin-token", "admin-secret-0001", "--bot", secret)
    assert "--bot number 1 (23 characters): write it as NAME=TOKEN" in line, line
    assert "justatoken" not in line


def test_a_config_files_range_errors_name_the_file_and_read_as_numbers(tmp_path: Path) -> None:
    """A field with no flag of its own was named without its file, and its limits printed as
    2.09715e+06 (not even the real 2097152; an examination)."""
    cfg = tmp_path / "server.toml"
    cfg.write_text("[server]\nmax_message_bytes = 1\n")
    line = refused("serve", "--config", str(cfg), "--admin-token", "admin-secret-0001")
    assert f"{cfg}: server.max_message_bytes: must be 2097152-1073741824, got 1" in line, line


def test_a_value_a_flag_gave_is_named_by_that_flag_as_typed(tmp_path: Path) -> None:
    """An examination: `serve --port 99999` said `server.port: ...` and `--retain-seconds -5`
    `server.retain_seconds: ... got -5.0`, config keys the user never typed, the value not as
    typed. The same value from a config file still names the file and its key."""
    for flag, value, want in (
        ("--port", "99999", "--port: must be 0-65535, got 99999"),
        ("--retain-seconds", "-5", "--retain-seconds: must be 0-2592000, got -5"),
        ("--metrics-port", "70000", "--metrics-port: must be 0-65535, got 70000"),
    ):
        _one_line(_serve_once(flag, value, "--admin-token", "admin-token-xyz1"), want)
    path = tmp_path / "server.toml"
    path.write_text("[server]\nretain_seconds = -5\n")
    _one_line(
        _serve_once("--config", str(path), "--admin-token", "admin-token-xyz1"),
        f"{path}: server.retain_seconds: must be 0-2592000, got -5",
    )
