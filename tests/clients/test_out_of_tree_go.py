"""The Go SDK used from outside the repository, exactly as clients/go/README.md says.

The test copies the README's quick start (its setup commands, its main.go, its build commands)
into a temporary folder outside the repository, builds the bot there against the SDK through the
README's `replace` directive, and plays 20 hands with it against a live `uno-arena serve` started
on port 0: 20 hands finished, 0 timeouts, 0 rejected actions. The bot runs with `--addr`,
`--token` and `--name` (as `uno-arena play` tells its owner), which win over the environment;
an unknown flag or a stray argument is refused with exit code 2. The README's `go work` variant is
built too. A missing Go toolchain skips the test, except under CI=true, where it fails.

The live-server helpers here are also used by test_out_of_tree_typescript.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc

from .langs import in_ci

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "out-of-tree-admin-token"
HANDS = 20


def need(*tools: str) -> None:
    """Skip when a tool is missing; under CI=true a missing tool is a failure."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        reason = f"toolchain not found: {', '.join(missing)}"
        if in_ci():
            pytest.fail(f"{reason} (CI=true: a missing toolchain is a failure)")
        pytest.skip(reason)


def readme_block(readme: Path, marker: str) -> str:
    """The fenced code block that follows `<!-- quick-start:MARKER -->` in a README."""
    text = readme.read_text()
    at = text.find(f"<!-- quick-start:{marker} -->")
    assert at >= 0, f"{readme}: no quick-start:{marker} marker"
    m = re.search(r"```[\w-]*\n(.*?)```", text[at:], re.S)
    assert m, f"{readme}: no code block after quick-start:{marker}"
    return m.group(1)


def outside_repo(path: Path) -> Path:
    assert not path.resolve().is_relative_to(ROOT), f"{path} is inside the repository"
    return path


def sh(script: str, cwd: Path, env: dict[str, str], what: str, timeout: float = 900) -> None:
    """Runs README shell lines with bash -e, failing with the output's tail."""
    res = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-30:])
        pytest.fail(f"{what} failed ({res.returncode}):\n{script}\n---\n{tail}")


@dataclass
class LiveServer:
    addr: str  # 127.0.0.1:PORT
    proc: subprocess.Popen[bytes]
    log: Path


@contextmanager
def live_server(workdir: Path, bots: dict[str, str]) -> Iterator[LiveServer]:
    """`uno-arena serve --port 0` with the given bot tokens, until the block ends."""
    cli = Path(sys.executable).parent / "uno-arena"
    log = workdir / "server.log"
    cmd = [str(cli), "serve", "--host", "127.0.0.1", "--port", "0", "--admin-token", ADMIN]
    for name, token in bots.items():
        cmd += ["--bot", f"{name}={token}"]
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            m = re.search(r"serving on ([\d.]+:\d+)", log.read_text(errors="replace"))
            if m:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"uno-arena serve did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.1)
        yield LiveServer(m.group(1), proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def running(
    cmd: list[str], cwd: Path, env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """A bot process, stopped with SIGTERM at the end (it must then exit 0)."""
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"the bot did not stop on SIGTERM:\n{log.read_text()[-3000:]}")
        assert code == 0, f"the bot exited {code} on SIGTERM:\n{log.read_text()[-3000:]}"


def play_hands(
    server: LiveServer, bot: str, bot_proc: subprocess.Popen[bytes], bot_log: Path
) -> None:
    """Waits for the bot, plays HANDS single-hand matches with `uno-arena match` (as the README
    says), and checks every match on the server: finished, 0 timeouts, 0 rejected actions; and
    in its events, that the bot calls UNO with the play that leaves it one card: no UNO window
    ever opened on it (the quick starts took the first PLAY action, never the one that calls
    UNO, and were caught every time: an examination, 2026-12-06), and it called at least once."""
    with grpc.insecure_channel(server.addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)
        md = (("authorization", f"Bearer {ADMIN}"),)
        deadline = time.monotonic() + 60
        while True:
            bots = admin.ListBots(admin_pb2.ListBotsRequest(), metadata=md, timeout=10).bots
            if any(b.bot_name == bot and b.connected for b in bots):
                break
            if bot_proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{bot} did not connect:\n{bot_log.read_text()[-3000:]}")
            time.sleep(0.2)
        cli = Path(sys.executable).parent / "uno-arena"
        res = subprocess.run(
            [str(cli), "match", "--server", server.addr, "--admin-token", ADMIN, "--seats", bot,
             "heuristic", "random", "heuristic", "--hands", str(HANDS), "--seed", "5"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr + bot_log.read_text()[-3000:]
        assert len(re.findall(r"^hand +\d+ ", res.stdout, re.M)) == HANDS, res.stdout
        infos = admin.ListMatches(
            admin_pb2.ListMatchesRequest(page_size=100, bot_name=bot), metadata=md, timeout=10
        ).matches
        called = missed = 0
        for info in infos:
            got = admin.AwaitMatch(
                admin_pb2.AwaitMatchRequest(match_id=info.match_id), metadata=md, timeout=30
            )
            assert not got.truncated
            for ev in got.events:  # the bot is seat 0 (--seats)
                kind = ev.WhichOneof("kind")
                called += kind == "played" and ev.played.seat == 0 and ev.played.uno
                missed += kind == "uno_window_opened" and ev.uno_window_opened.seat == 0
    assert missed == 0, f"a UNO window opened on {bot} {missed} times: it did not call UNO"
    assert called >= 1, f"{bot} never played down to one card: no hand tested the call"
    assert len(infos) == HANDS
    assert all(i.state == admin_pb2.MATCH_STATE_FINISHED for i in infos), infos
    seats = [i.seats[0] for i in infos]
    assert all(s.player.bot_name == bot for s in seats)
    hands = sum(i.hand_number for i in infos)
    timeouts = sum(s.strikes for s in seats)
    rejected = sum(s.rejected_actions for s in seats)
    taken = sum(s.taken_over for s in seats)
    decisions = sum(s.decisions for s in seats)
    print(
        f"\n{bot}: {hands} hands, {decisions} decisions, {timeouts} timeouts, {rejected} rejected"
    )
    assert (hands, timeouts, rejected, taken) == (HANDS, 0, 0, 0), bot_log.read_text()[-3000:]
    assert decisions >= HANDS


README = ROOT / "clients" / "go" / "README.md"
WRONG_ENV = {
    "UNO_ARENA_ADDR": "localhost",
    "UNO_ARENA_TOKEN": "not-the-token",
    "UNO_ARENA_BOT_NAME": "not-my-bot",
}
"""What the environment says when a test runs a quick-start bot with flags: were it read, the
bot would refuse the address at once (exit 2), so a bot that plays took the flags."""


def flags_for(addr: str, token: str) -> list[str]:
    """The flags `uno-arena play`'s waiting screen tells a bot's owner to run it with."""
    return ["--addr", addr, "--token", token, "--name", "my-bot"]


def check_refuses_bad_arguments(cmd: list[str], cwd: Path, flags_said: str) -> None:
    """A quick-start bot refuses an unknown flag (a typo of --addr) and a stray argument with
    one line each, naming it, and exit code 2, before it connects anywhere (the Python, Rust and
    Java quick starts do; the Go and TypeScript ones ignored every flag: an examination)."""
    for args, named in (
        (["--adr", "127.0.0.1:1", "--token", "out-of-tree-token"], "adr"),
        (["--token", "out-of-tree-token", "extra"], "extra"),
    ):
        res = subprocess.run(
            [*cmd, *args],
            cwd=cwd,
            env={**os.environ, "UNO_ARENA_ADDR": "127.0.0.1:1", "UNO_ARENA_TOKEN": "t" * 8},
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        lines = res.stderr.splitlines()
        assert res.returncode == 2, (args, res.stdout + res.stderr)
        assert len(lines) == 1 and lines[0].startswith("my-bot: "), (args, res.stderr)
        assert named in lines[0] and flags_said in lines[0], (args, res.stderr)


def quick_start(tmp: Path, env: dict[str, str], go_work: bool) -> Path:
    """Follows the README from an empty folder; returns the bot's folder (with the binary)."""
    setup = readme_block(README, "setup")
    # The README's first line names the reader's clone; here it is this checkout.
    setup = re.sub(r"^UNO_ARENA=\S+", f"UNO_ARENA={ROOT}", setup, count=1, flags=re.M)
    build = readme_block(README, "build")
    if go_work:  # the README's variant: go work init instead of go mod edit -replace / tidy
        setup = re.sub(
            r"^go mod edit -replace .*$", "go work init . $UNO_ARENA/clients/go", setup, flags=re.M
        )
        build = re.sub(r"^go mod tidy.*$", "", build, flags=re.M)
        assert "go work init" in setup
    sh(setup, tmp, env, "the README's setup")
    bot_dir = tmp / "my-bot"
    (bot_dir / "main.go").write_text(readme_block(README, "main.go"))
    sh(build, bot_dir, env, "the README's build")
    assert (bot_dir / "my-bot").is_file()
    return bot_dir


def go_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("GOFLAGS", None)  # a stranger's plain go; the module and build caches are shared
    return env


def test_go_bot_outside_the_repo_plays_20_hands(tmp_path: Path) -> None:
    need("go", "bash")
    tmp = outside_repo(tmp_path)
    env = go_env()
    env["GOWORK"] = "off"  # no workspace of ours may leak in: this is the replace variant
    t0 = time.monotonic()
    bot_dir = quick_start(tmp, env, go_work=False)
    print(f"\ngo quick start (replace): {time.monotonic() - t0:.1f} s")
    assert "=> " + str(ROOT / "clients" / "go") in (bot_dir / "go.mod").read_text()
    token = "out-of-tree-go-token"
    with live_server(tmp, {"my-bot": token}) as server:
        # run as `uno-arena play`'s waiting screen says: --addr, --token, --name; they win over
        # the environment (which names a malformed address and a wrong token and name here)
        bot_env = {**env, **WRONG_ENV}
        bot_log = tmp / "bot.log"
        cmd = [str(bot_dir / "my-bot"), *flags_for(server.addr, token)]
        with running(cmd, bot_dir, bot_env, bot_log) as proc:
            play_hands(server, "my-bot", proc, bot_log)


def test_go_bot_outside_the_repo_builds_with_go_work(tmp_path: Path) -> None:
    need("go", "bash")
    tmp = outside_repo(tmp_path)
    t0 = time.monotonic()
    bot_dir = quick_start(tmp, go_env(), go_work=True)
    print(f"\ngo quick start (go work): {time.monotonic() - t0:.1f} s")
    assert (bot_dir / "go.work").is_file()
    # The built bot refuses a malformed address at once, with one line and exit code 2.
    res = subprocess.run(
        [str(bot_dir / "my-bot")],
        env={**os.environ, "UNO_ARENA_ADDR": "localhost", "UNO_ARENA_TOKEN": "t"},
        capture_output=True, text=True, timeout=10, check=False,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines() == [
        'my-bot: invalid address "localhost" (no port): '
        "use HOST:PORT, http://HOST:PORT or https://HOST:PORT"
    ]
    # ... and the flag's address wins over the environment's
    res = subprocess.run(
        [str(bot_dir / "my-bot"), "--addr", "also-no-port", "--token", "t" * 8],
        env={**os.environ, "UNO_ARENA_ADDR": "localhost"},
        capture_output=True, text=True, timeout=10, check=False,
    )  # fmt: skip
    assert res.returncode == 2 and '"also-no-port"' in res.stderr, res.stderr
    check_refuses_bad_arguments([str(bot_dir / "my-bot")], bot_dir, "--help lists the flags")
