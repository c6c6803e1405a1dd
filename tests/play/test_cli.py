"""``uno-arena play`` on a running server, a refused token, and bad arguments (one plain line,
exit 2, before any screen opens)."""

from __future__ import annotations

import pytest

from uno_server.cli import main
from uno_server.gen.uno.v1 import game_pb2
from uno_server.play.app import PlayApp
from uno_server.play.human import NO_DEADLINE_MS
from uno_server.play.session import PRACTICE_WINDOW_MS, PlayOptions

from .helpers import Stall
from .live import ADMIN, live_server

ME = "me-token-for-playing"


@pytest.mark.asyncio
async def test_a_seat_on_a_running_server_started_with_the_admin_token() -> None:
    async with live_server(extra_bots={"me": ME}) as live:
        app = PlayApp(
            PlayOptions(
                server=live.addr,
                token=ME,
                name="me",
                admin_token=ADMIN,
                seats=["me", "heuristic", "gate", "random"],
                practice=True,
                seed=3,
            )
        )
        async with app.run_test(size=(120, 40)) as pilot:
            watch = Stall(lambda: (app.lobby, app.model is not None))
            while app.decision is None:
                watch.check(lambda: app.lobby)
                await pilot.pause(0.02)
            assert app.model is not None
            assert app.model.names == ["me", "heuristic", "gate", "random"]
            table = live.table(app.match_id)
            assert table.time_control.decision_ms == NO_DEADLINE_MS
            assert table.match.rules.uno_window_ms == PRACTICE_WINDOW_MS
            assert table.match.rules.scoring == "single_hand"
            sent = len(app.sent)
            await pilot.press("d" if app._legal(1) else "1")
            await pilot.pause()
            assert len(app.sent) == sent + 1
            await pilot.press("q")


@pytest.mark.asyncio
async def test_a_refused_token_is_said_on_the_screen_and_after() -> None:
    async with live_server() as live:
        app = PlayApp(PlayOptions(server=live.addr, token="not-a-token-1", name="me"))
        async with app.run_test(size=(120, 40)) as pilot:
            watch = Stall(lambda: app.lobby)
            while "failed" not in app.lobby:
                watch.check(lambda: app.lobby)
                await pilot.pause(0.02)
            await pilot.press("q")
        assert "UNAUTHENTICATED" in app.error


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["play", "--server", "127.0.0.1:1", "--token", "t" * 10, "--seats", "me", "ai"],
            "'ai' seats need the embedded server",
        ),
        (["play", "--server", "127.0.0.1:1"], "--token: your seat's bot token"),
        (["play", "--seats", "me", "me", "ai"], "name your own seat exactly once"),
        (["play", "--seats", "me", "bad name!"], "is not a bot name"),
        (["play", "--rule", "stacking"], "--rule 'stacking': write it as NAME=VALUE"),
        (["play", "--rule", "colour=red"], "--rule colour: unknown rule option"),
        (["play", "--rule", "colour=red"], "the options: decks, hand_size, first_flip"),
        # a bad value: one plain line naming the rule, the value as given and what it takes
        # (were "'str' object cannot be interpreted as an integer", "'FIRST_FLIP_XYZ'" and
        # "'float' object ...")
        (["play", "--rule", "stacking=yes"], "--rule stacking=yes: takes true or false"),
        (["play", "--rule", "first_flip=xyz"], "--rule first_flip=xyz: takes one of apply, redraw"),
        (["play", "--rule", "scoring=3"], "takes one of standard, lowest, single_hand"),
        (["play", "--rule", "hand_size=1e3"], "--rule hand_size=1e3: takes a whole number"),
        (["play", "--rule", "hand_size=true"], "--rule hand_size=true: takes a whole number"),
        (["play", "--rule", "uno_penalty=-1"], "--rule uno_penalty=-1: takes a whole number"),
        (["play", "--rule", "hand_size=" + "9" * 5000], "--rule hand_size=9999999999"),
        (["play", "--decision-ms", "700000"], "--decision-ms: must be 1-600000"),
        (["play", "--listen", "nowhere"], "write the address as HOST:PORT"),
        (["play", "--bot", "mybot=short"], "--bot mybot: a token is 8-128 characters"),
        (["play", "--bot", "mybot=with space 1"], "a space at position 5"),
        (
            ["play", "--bot", "a1=same-token-1", "--bot", "b2=same-token-1"],
            "--bot a1 and --bot b2: the same token",
        ),
        (  # the second silently replaced the first
            ["play", "--bot", "mybot=aaaaaaaa1", "--bot", "mybot=bbbbbbbb2"],
            "--bot mybot: given twice; give each once",
        ),
        (["play", "--rule", "stacking=true", "--rule", "stacking=false"], "--rule stacking: given"),
        (["watch", "--server", "h:1"], "--admin-token: the server's admin token is required"),
        (["watch", "--server", "nohost", "--admin-token", "a" * 8], "HOST:PORT"),
        (  # was accepted, and gRPC quietly dialled port 34463 (99999 - 65536)
            ["watch", "--server", "127.0.0.1:99999", "--admin-token", "a" * 8],
            "the port must be from 0 to 65535",
        ),
        (["play", "--listen", "127.0.0.1:99999"], "the port must be from 0 to 65535"),
        (["play", "--listen", "h:" + "9" * 5000], "the port must be from 0 to 65535"),
    ],
)
def test_bad_arguments_are_one_line(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("UNO_ARENA_ADMIN_TOKEN", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert message in err, err
    assert len(err) < 400, err  # a long value is cut, not echoed whole


def test_rule_values_are_json_and_said_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    options = PlayOptions(
        rules={"stacking": "true", "hand_size": "5", "scoring": '"lowest"', "first_flip": "redraw"}
    )
    rules = options.rule_set()
    assert rules.stacking and rules.hand_size == 5
    assert rules.scoring == game_pb2.SCORING_LOWEST
    assert rules.first_flip == game_pb2.FIRST_FLIP_REDRAW
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "VALUE is JSON" in text and '"lowest"' in text, text
    for name in ("stacking", "challenge_uno", "first_flip", "hand_size", "seven_o"):
        assert name in text, name
