"""Examined: ``uno-arena play`` and ``watch`` refuse at once, in one plain line, what cannot
work, and end by themselves after an error that cannot go away."""

from __future__ import annotations

import asyncio
import socket

import pytest

from uno_server.cli import main
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc
from uno_server.play.app import PlayApp
from uno_server.play.session import PlayOptions
from uno_server.play.watch import WatchApp

from .live import ADMIN, live_server


def test_play_refuses_a_listen_port_another_server_holds(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running ``uno-arena serve`` listens with SO_REUSEPORT (gRPC); the embedded server's
    gRPC would bind the same port beside it and the two would split the connections."""
    monkeypatch.setattr(PlayApp, "run", lambda self: None)  # no screen, if it got that far
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # as gRPC's listener does
    holder.bind(("127.0.0.1", 0))
    holder.listen(8)
    port = holder.getsockname()[1]
    try:
        assert main(["play", "--listen", f"127.0.0.1:{port}", "--seats", "me", "ai"]) == 2
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert f"uno-arena play: --listen 127.0.0.1:{port}: {port} is in use" in err, err


# ---------------------------------------------------------------- errors that cannot go away
# Each screen closes by itself and keeps the one line the command prints (exit status 1): it
# used to stay open, retrying or waiting forever. ``run_async`` returns when the app has exited;
# the wait is only a guard against a hang.

HUNG = 120.0
ME = "me-token-for-playing"


async def _ends(app: PlayApp | WatchApp) -> str:
    task = asyncio.create_task(app.run_async(headless=True, size=(100, 30)))
    done, _ = await asyncio.wait({task}, timeout=HUNG)
    if not done:  # (cancelling run_async would return quietly: closed here, then failed)
        app.exit()
        await asyncio.wait({task}, timeout=10)
        raise AssertionError(f"the screen stayed open ({app.error!r})")
    task.result()
    error = str(app.error)
    assert error and "\n" not in error, error
    return error


@pytest.mark.asyncio
async def test_watch_ends_on_a_refused_admin_token() -> None:
    async with live_server() as live:
        assert "admin token" in await _ends(WatchApp(live.addr, "wrong-admin-token-1"))
        one = WatchApp(live.addr, "wrong-admin-token-1", match_id="m1")
        assert "admin token" in await _ends(one)
        assert "on this server" in await _ends(WatchApp(live.addr, ADMIN, match_id="m999999-none"))


@pytest.mark.asyncio
async def test_watch_ends_when_the_server_was_never_reached() -> None:
    error = await _ends(WatchApp("127.0.0.1:1", "admin-token-1234", poll_s=0.05))
    assert "cannot reach the server" in error and "--server HOST:PORT" in error
    error = await _ends(WatchApp("127.0.0.1:1", "admin-token-1234", match_id="m1"))
    assert "cannot reach the server" in error


def test_the_watch_command_says_it_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        WatchApp, "run", lambda self: asyncio.run(self.run_async(headless=True, size=(80, 24)))
    )
    # as in a terminal (pytest's captured output is none: the command would refuse to start)
    monkeypatch.setattr("uno_server.play.cli.terminal_problem", lambda: None)
    assert main(["watch", "--server", "127.0.0.1:1", "--admin-token", "a" * 12]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "cannot reach the server" in err, err


@pytest.mark.asyncio
async def test_play_refuses_a_seat_name_the_server_does_not_know() -> None:
    async with live_server(extra_bots={"me": ME}) as live:
        opts = PlayOptions(
            server=live.addr,
            token=ME,
            name="me",
            admin_token=ADMIN,
            seats=["me", "nobody", "heuristic"],
        )
        error = await _ends(PlayApp(opts))
        assert "--seats: nobody: no bot of that name is registered" in error, error
        stub = admin_pb2_grpc.AdminServiceStub(live.channel)
        listed = await stub.ListMatches(admin_pb2.ListMatchesRequest(), metadata=live.md)
        assert not listed.matches  # no match was created


@pytest.mark.asyncio
async def test_play_ends_when_the_server_refuses_the_seat_for_good() -> None:
    async with live_server(extra_bots={"me": ME}) as live:
        # the token is me's, the name another: BOT_NAME_MISMATCH, which no reconnect cures
        error = await _ends(PlayApp(PlayOptions(server=live.addr, token=ME, name="someone")))
        assert "PERMISSION_DENIED" in error and "belongs to bot 'me'" in error, error
        error = await _ends(PlayApp(PlayOptions(server=live.addr, token="not-a-token-1")))
        assert "UNAUTHENTICATED" in error, error


@pytest.mark.asyncio
async def test_play_ends_when_the_server_was_never_reached() -> None:
    error = await _ends(PlayApp(PlayOptions(server="127.0.0.1:1", token=ME, name="me")))
    assert "cannot reach the server at 127.0.0.1:1" in error, error
