"""``uno-arena play --server`` and ``uno-arena watch`` against a server that speaks TLS
(``serve --tls-cert``): both opened plaintext channels only, so neither could reach such a server
and neither said why (the organiser's other tools took ``--tls-ca`` already). With ``--tls-ca``
they verify the server against that CA; without it they say to give it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.service.test_tls import _self_signed
from uno_server.cli import main
from uno_server.play.app import PlayApp
from uno_server.play.session import PlayOptions
from uno_server.play.watch import WatchApp
from uno_server.service.server import ArenaServer, ServerConfig

from .helpers import Stall
from .live import ADMIN, arena_table

ME = "me-token-for-tls-play"


@asynccontextmanager
async def tls_server(tmp: Path) -> AsyncIterator[tuple[ArenaServer, str, Path]]:
    cert, key = _self_signed(tmp)
    server = ArenaServer(
        ServerConfig(
            port=0,
            admin_token=ADMIN,
            bots={"me": ME},
            tls_cert=str(cert),
            tls_key=str(key),
        )
    )
    port = await server.start()
    try:
        yield server, f"localhost:{port}", cert
    finally:
        await server.stop(drain_timeout_s=0.2)


@pytest.mark.asyncio
async def test_play_and_watch_reach_a_tls_server_with_its_ca(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (server, addr, cert):
        app = PlayApp(
            PlayOptions(
                server=addr,
                token=ME,
                name="me",
                admin_token=ADMIN,
                tls_ca=str(cert),
                seats=["me", "heuristic", "random", "heuristic"],
                practice=True,
                seed=5,
            )
        )
        async with app.run_test(size=(120, 40)) as pilot:
            watch = Stall(lambda: (app.lobby, app.model is not None))
            while app.decision is None:
                watch.check(lambda: app.lobby)
                await pilot.pause(0.02)
            assert app.model is not None and app.model.names[0] == "me"
            match_id = app.match_id
            # a spectator of the same server sees the match through TLS too
            viewer = WatchApp(addr, ADMIN, match_id=match_id, tls_ca=str(cert))
            async with viewer.run_test(size=(120, 40)) as vp:
                follower = viewer.followers[match_id]
                seen = Stall(lambda: (follower.model is not None, follower.error))
                while follower.model is None or not follower.caught_up:
                    assert not follower.error, follower.error
                    seen.check("the spectator never caught up")
                    await vp.pause(0.02)
                assert follower.model.names[0] == "me"
                await vp.press("q")
            await pilot.press("q")
        assert not app.error, app.error
        # the person's seat is the TLS server's seat 0 of that match
        assert "me" in arena_table(server.arena, match_id).bot_names()


@pytest.mark.asyncio
async def test_without_the_ca_each_says_to_give_it(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (_server, addr, _cert):
        app = PlayApp(PlayOptions(server=addr, token=ME, name="me"))
        async with app.run_test(size=(120, 40)) as pilot:
            watch = Stall(lambda: app.lobby)
            while not app.error:
                watch.check(lambda: app.lobby)
                await pilot.pause(0.02)
            await pilot.press("q")
        assert "give --tls-ca FILE (its CA) or --tls-ca system" in app.error, app.error
        viewer = WatchApp(addr, ADMIN)
        task = asyncio.create_task(viewer.run_async(headless=True, size=(100, 30)))
        done, _ = await asyncio.wait({task}, timeout=120)
        if not done:
            viewer.exit()
            await asyncio.wait({task}, timeout=10)
        assert "give --tls-ca FILE (its CA) or --tls-ca system" in viewer.error, viewer.error


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["play", "--tls-ca", "system", "--seats", "me", "ai"],
            "--tls-ca is for a running server that speaks TLS: give --server too",
        ),
        (
            ["play", "--server", "127.0.0.1:1", "--token", "t" * 10, "--tls-ca", "/nonexistent"],
            "--tls-ca /nonexistent: ",
        ),
        (
            ["watch", "--admin-token", "a" * 10, "--tls-ca", "/nonexistent"],
            "--tls-ca /nonexistent: ",
        ),
    ],
)
def test_a_bad_tls_ca_is_one_plain_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err
