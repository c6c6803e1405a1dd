"""Examination s53 (fixer C): the "What happened" log rewraps its history at each width,
``play``'s flags named in its errors, ``--bot`` names a seat."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from uno_server.cli import main
from uno_server.play.history import FollowingLog

LINES = [
    "ai-2 drew green 0 for the deal.",
    "You played red 7; ai-1 is next, and then ai-2 draws two cards from the pile.",
    "ai-3 said UNO with one card left.",
]


class LogApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FollowingLog(id="log", wrap=True, markup=False, max_lines=500, auto_scroll=True)


def shown(log: FollowingLog) -> list[str]:
    return [strip.text.rstrip() for strip in log.lines]


@pytest.mark.asyncio
async def test_the_history_is_wrapped_again_when_the_terminal_widens_again() -> None:
    app = LogApp()
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.query_one(FollowingLog)
        await pilot.pause()
        for line in LINES:
            log.write(Text(line), width=log.scrollable_content_region.width)
        await pilot.pause()
        assert shown(log) == LINES  # one line each at 100 columns
        await pilot.resize_terminal(24, 12)
        await pilot.pause()
        narrow = shown(log)
        assert len(narrow) > len(LINES) and all(len(row) <= 24 for row in narrow), narrow
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert shown(log) == LINES  # not the narrow column ("ai-2 drew green 0 / for the deal.")
        log.write(Text("a new line"), width=log.scrollable_content_region.width)
        log.clear()
        await pilot.resize_terminal(40, 30)
        await pilot.pause()
        assert shown(log) == []  # what was cleared stays cleared


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--uno-window-ms", "-1"], "--uno-window-ms: must be 0-60000 ms, got -1"),
        (["--uno-window-ms", "70000"], "--uno-window-ms: must be 0-60000 ms, got 70000"),
        (["--target-score", "0"], "--target-score: must be 1-100000, got 0"),
        (["--rule", "uno_window_ms=70000"], "--rule uno_window_ms=70000: must be 0-60000 ms"),
        (
            ["--seats", "me", "ai", "ai", "ai", "--bot", "mybot=mybot-token-1"],
            "--bot mybot: no seat of that name in --seats (me ai ai ai; it has no bot seat)",
        ),
        (
            ["--seats", "me", "mybot", "ai", "--bot", "mybto=mybot-token-1"],
            "--bot mybto: no seat of that name in --seats (me mybot ai; its bot seats: mybot)",
        ),
        (
            ["--server", "127.0.0.1:1", "--token", "tok-12345678", "--bot", "b=tok-abcdefgh"],
            "--bot b: is for the embedded table",
        ),
    ],
)
def test_play_names_the_flag_the_value_came_from(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["play", "--listen", "127.0.0.1:0", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"uno-arena play: {said}"), err
    assert "rules." not in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("argv", "prog"),
    [
        (["serve", "--prot", "49502"], "uno-arena serve"),
        (["simulate", "--hands", "2", "extra"], "uno-arena simulate"),
        (["play", "--bogus"], "uno-arena play"),
        (["tournament", "run", "x.toml", "--bogus"], "uno-arena tournament run"),
        (["league", "submit", "d", "p", "--bogus"], "uno-arena league submit"),
        (["--bogus"], "uno-arena"),
    ],
)
def test_an_unknown_flag_names_its_subcommands_help(
    argv: list[str], prog: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("uno-arena: unrecognized arguments: "), err
    assert err.endswith(f"(`{prog} --help` lists the options)\n"), err


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("true", "got true"),
        ("1.5", "got 1.5"),
        ("inf", "got inf"),
        ("'x'", "got 'x'"),
        ("[1, false]", "got [1, false]"),
        ("{ a = true }", "got { a = true }"),
    ],
)
def test_a_config_type_error_spells_the_value_as_toml_does(value: str, said: str) -> None:
    import tomllib

    from uno_tournament.config_values import ConfigError, _int

    raw = tomllib.loads(f"decision_ms = {value}")["decision_ms"]
    with pytest.raises(ConfigError) as exc:
        _int("time_control.decision_ms", raw, 1, 600_000)
    assert str(exc.value) == f"time_control.decision_ms: must be an integer, {said}"
