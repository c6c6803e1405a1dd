"""Friends at one table: the host's play screen starts the table (embedded server on
127.0.0.1), shows the friend the command to join, and starts the match once the friend's own
play screen has connected; two practice AIs fill the other seats. Both people play the hand to
its end with keys. The two screens are separate clients over gRPC, as from two terminals."""

from __future__ import annotations

import pytest

from uno_server.play.app import PlayApp
from uno_server.play.practice import SCRIPTED
from uno_server.play.session import PlayOptions
from uno_server.play.wire import engine_view

from .helpers import Stall
from .scenario import HumanScript
from .snap import check_snapshot, screen_text, settle
from .test_play_screen import keys_for, progress

pytestmark = pytest.mark.asyncio
FRIEND_TOKEN = "friend-token-for-bob"


async def test_two_people_and_two_ais_at_one_table() -> None:
    host = PlayApp(
        PlayOptions(
            name="alice",
            seats=["me", "bob", "ai", "ai"],
            bot_tokens={"bob": FRIEND_TOKEN},
            ai_style=SCRIPTED,
            seed=7,
            dealer=0,
        )
    )
    async with host.run_test(size=(120, 40)) as hp:
        watch = Stall(lambda: host.lobby)
        while "Waiting for bob" not in host.lobby:
            watch.check(host.lobby)
            await hp.pause(0.02)
        await settle(hp)
        lobby = screen_text(host)
        assert "uno-arena play --server 127.0.0.1:" in lobby and FRIEND_TOKEN in lobby
        check_snapshot("play_lobby_friends", lobby)
        assert host.session is not None
        friend = PlayApp(PlayOptions(server=host.session.addr, token=FRIEND_TOKEN, name="bob"))
        async with friend.run_test(size=(120, 40)) as fp:
            players = {"alice": (host, hp, HumanScript()), "bob": (friend, fp, HumanScript())}
            watch = Stall(lambda: (progress(host), progress(friend)))
            moves = {"alice": 0, "bob": 0}
            while not (host.result and friend.result):
                watch.check(lambda: f"the hand did not end; host:\n{screen_text(host)}")
                for who, (app, pilot, script) in players.items():
                    d = app.decision
                    if d is None or not d.open:
                        continue
                    await pilot.pause()
                    if app.decision is not d or not d.open:
                        continue  # someone else caught first: the request closed
                    choice = script.choose(engine_view(d.request))
                    if choice is None:
                        continue
                    for key in keys_for(app, choice):
                        await pilot.press(key)
                    moves[who] += 1
                await hp.pause(0.01)
            await settle(hp)
            await settle(fp)
            assert host.model is not None and friend.model is not None
            assert host.model.names == friend.model.names == ["alice", "bob", "ai-1", "ai-2"]
            assert host.model.viewer == 0 and friend.model.viewer == 1
            assert moves["alice"] >= 3 and moves["bob"] >= 3
            winners = host.model.winners
            assert winners == friend.model.winners and len(winners) == 1
            assert ("You won" in host.result) == (winners[0] == 0)
            assert ("You won" in friend.result) == (winners[0] == 1)
            # the friend cannot start another match: only the host holds the admin token
            assert "m: another match" not in screen_text(friend)
            assert "m: another match" in screen_text(host)
            await fp.press("q")
        await hp.press("q")
