"""A person plays a whole hand on the play screen, driven by key presses through Textual's pilot.

The table is the one ``uno-arena play --practice`` hosts: an embedded server, the person's seat
and three practice AIs, all SDK bots over gRPC on 127.0.0.1. The AIs play their deterministic
style and the seed is fixed, so the hand is known in advance (tests/play/scenario.py replays it
with the engine alone). Along the way the person plays a card, draws and plays the drawn card,
plays a Wild and names its colour, calls UNO with a play, catches an AI that forgot UNO, and
challenges two Wild Draw Fours: a bluff (caught) and an honest one; each time the evidence is on
the screen and matches what the engine recorded. Each kind of screen is compared with its text
snapshot.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from uno_server.engine import actions as A
from uno_server.engine import events as E
from uno_server.engine.hand import SYSTEM
from uno_server.gen.uno.v1 import bot_pb2, game_pb2
from uno_server.play.app import CARD_KEYS, PlayApp
from uno_server.play.cards import label
from uno_server.play.model import TableModel
from uno_server.play.practice import SCRIPTED
from uno_server.play.render import line_text, span
from uno_server.play.session import PlayOptions
from uno_server.play.wire import engine_view

from .helpers import STALL_S, Stall
from .live import arena_table
from .scenario import AI_SEED, FORGETFUL_SEED, HUMAN, SCENARIOS, SEED, HumanScript, simulate
from .snap import check_snapshot, screen_text, settle

SIZE = (120, 42)
CARD_HEX = ("#c62828", "#f0c814", "#1e823c", "#195ac8", "#323232")  # cards.CARD_STYLES


LONG_WINDOW_MS = 60_000
"""The longest UNO window the rules allow. The scripted person closes every window of SEED's
hand itself (test_the_seed_still_shows_every_scenario checks that no window closes on its
timer), so the window's length costs nothing, and the person's catch never races the timer
however long the test takes to look at the screen first."""


LATE_WINDOW_MS = 15_000
"""The UNO window of the forgetful person's hand. Its late call must beat the window's timer
(the test looks at the screen first: settle, snapshot), while the missed UNO it lets go closes
on that timer, so the test waits one whole window. 15 s is many times the person's reaction
even at load average 30 (a few seconds), at the cost of 15 s of waiting."""


def options() -> PlayOptions:
    return PlayOptions(
        practice=True,
        seed=SEED,
        dealer=0,
        ai_style=SCRIPTED,
        ai_seed=AI_SEED,
        name="you",
        uno_window_ms=LONG_WINDOW_MS,
    )


def test_the_seed_still_shows_every_scenario() -> None:
    seen, match = simulate(SEED)
    assert seen >= set(SCENARIOS), "rerun `python -m tests.play.scenario` for a new SEED"
    assert match.hand.over
    # the person closes every UNO window: none waits for its timer (see LONG_WINDOW_MS)
    assert (SYSTEM, 6) not in match.hand.actions


def _squash(text: str) -> str:
    """``text`` without white space, panel borders and scroll bars (a wrapped log line reads
    on as one)."""
    return "".join(text.translate(_FRAME).split())


_FRAME = str.maketrans(dict.fromkeys("│▁▂▃▄▅▆▇█▔", " "))


def shows_last_line(app: PlayApp) -> Callable[[str], bool]:
    """A :func:`settle` condition: the screen shows the last three lines the model added to
    "What happened", one after the other (so a snapshot is never taken with the log a few lines
    behind, and an earlier line with the same words does not count)."""

    def ready(text: str) -> bool:
        model = app.model
        if model is None or not model.log:
            return True
        last = list(model.log)[-3:]
        return "".join(_squash(line_text(line).plain) for line in last) in _squash(text)

    return ready


def progress(app: PlayApp) -> tuple[object, ...]:
    """What moves when the table advances: events seen, requests received, answers sent."""
    d = app.decision
    seq = app.model.last_sequence if app.model is not None else -1
    return (app.match_id, seq, id(d) if d is not None else None, len(app.sent), app.result)


def keys_for(app: PlayApp, action_id: int) -> list[str]:
    """The keys a person presses for ``action_id`` on the current decision."""
    simple = {A.DRAW: "d", A.PASS: "p", A.ACCEPT: "a", A.CHALLENGE: "x", A.CALL_UNO: "u"}
    if action_id in simple:
        return [simple[action_id]]
    if action_id == A.NO_CATCH:
        return ["n"]
    act = A.decode(action_id)
    if act.kind is A.Kind.CATCH:
        return ["c"]
    if act.kind is A.Kind.CHOOSE_COLOR:
        return ["rygb"[act.color]]
    assert app.model is not None
    index = app.model.hand.index(act.card)
    keys = ["u"] if act.uno and not app.uno_armed else []
    if index < len(CARD_KEYS):
        keys.append(CARD_KEYS[index])
    else:
        keys += ["right"] * ((index - app.cursor) % len(app.model.hand)) + ["enter"]
    if act.card >= 77:
        keys.append("rygb"[act.color])
    return keys


async def next_decision(app: PlayApp, pilot: object, stall: float = STALL_S) -> bool:
    """Wait for an open decision (True) or the end of the match (False), then for the screen
    to show it. Fails only if the table stops moving for ``stall`` seconds."""
    watch = Stall(lambda: progress(app), stall)
    while True:
        if app.result:
            return False
        d = app.decision
        if d is not None and d.open:
            await settle(pilot, shows_last_line(app))
            return True
        watch.check(lambda: f"waiting for a decision; screen:\n{screen_text(app)}")
        await pilot.pause(0.01)  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_a_person_plays_a_whole_hand_with_keys() -> None:
    app = PlayApp(options())
    script = HumanScript()
    snapped: set[str] = set()
    after_challenge: str | None = None
    evidence_seen: list[str] = []

    def snap(name: str) -> None:
        if name not in snapped:
            snapped.add(name)
            check_snapshot(name, screen_text(app))

    async with app.run_test(size=SIZE) as pilot:
        while await next_decision(app, pilot):
            d = app.decision
            assert d is not None
            req = d.request
            if after_challenge is not None:
                await settle(pilot, shows_last_line(app))
                text = screen_text(app)
                assert "Challenge evidence" in text  # the panel is on the screen
                evidence_seen.append(text)
                snap(after_challenge)
                after_challenge = None
            view = engine_view(req)
            choice = script.choose(view)
            assert choice is not None, "the script answers every request"
            prompt = req.prompt
            if prompt == bot_pb2.PROMPT_TURN:
                if "play_turn" not in snapped:  # the hand is drawn in its cards' colours
                    svg = app.export_screenshot().lower()
                    assert app.model is not None
                    for code in app.model.hand:
                        assert CARD_HEX[min(code >> 4, 4)] in svg, label(code)
                snap("play_turn")
            elif prompt == bot_pb2.PROMPT_DRAWN:
                snap("play_drawn")
            elif prompt == bot_pb2.PROMPT_UNO_WINDOW:
                snap("play_catch")
            elif prompt == bot_pb2.PROMPT_WILD_DRAW_FOUR:
                snap("play_wild_draw_four")
            keys = keys_for(app, choice)
            for key in keys[:-1]:
                await pilot.press(key)
                await pilot.pause()
                if key == "u":
                    assert app.uno_armed
                    await settle(pilot, shows_last_line(app))
                    snap("play_uno_called")
            if len(keys) > 1 and keys[-1] in "rygb" and A.decode(choice).card == 77:
                snap("play_wild_colour")  # the colour dialog is open
            sent = len(app.sent)
            await pilot.press(keys[-1])
            await pilot.pause()
            assert app.sent[sent:] == [choice], (keys, app.sent[sent:], choice)
            if choice == A.CHALLENGE:
                after_challenge = f"play_evidence_{len(evidence_seen) + 1}"
        await settle(pilot, shows_last_line(app))
        snap("play_hand_over")
        final = screen_text(app)
        session = app.session
        assert session is not None and session.server is not None
        table = arena_table(session.server.arena, app.match_id)
        hand = table.match.hand
        await pilot.press("q")

    # the hand the screen played is the hand the engine plays offline with the same choices
    _, offline = simulate(SEED)
    assert hand.actions == offline.hand.actions
    assert [a for s, a in hand.actions if s == HUMAN] == app.sent
    assert "You won the match!" in final
    # every scenario happened, on the server
    log = [r.event for r in table.records]
    played = [e for e in log if isinstance(e, E.Played) and e.seat == HUMAN]
    assert any(e.card == 77 for e in played) and any(e.uno for e in played)
    assert any(isinstance(e, E.Caught) and e.catcher == HUMAN for e in log)
    challenges = [e for e in log if isinstance(e, E.Challenged) and e.challenger == HUMAN]
    assert {c.bluff for c in challenges} == {True, False}
    # the evidence on the screen is the offender's hand as the engine recorded it
    evidence = [e for e in log if isinstance(e, E.ChallengeEvidence) and e.challenger == HUMAN]
    assert len(evidence) == len(evidence_seen) == 2
    for ev, text in zip(evidence, evidence_seen, strict=True):
        panel = text.split("Challenge evidence", 1)[1].split("Your hand", 1)[0]
        flat = " ".join(panel.split())
        for code in ev.hand:
            assert label(code) in flat, (label(code), flat)
    assert "a bluff, caught" in " ".join(evidence_seen[0].split())
    assert "an honest play" in " ".join(evidence_seen[1].split())


@pytest.mark.asyncio
async def test_late_uno_and_letting_a_missed_uno_go() -> None:
    """The forgetful person plays a second-last card without UNO and calls it late with u
    (the window's clock on the screen), and lets an AI's missed UNO go with n; the window then
    closes on the server's timer."""
    opts = options()
    opts.seed = FORGETFUL_SEED
    opts.uno_window_ms = LATE_WINDOW_MS
    app = PlayApp(opts)
    script = HumanScript(forgetful=True)
    prompts: list[int] = []
    late_reaction = -1.0
    async with app.run_test(size=SIZE) as pilot:
        while await next_decision(app, pilot):
            d = app.decision
            assert d is not None
            prompts.append(d.request.prompt)
            if d.request.prompt == bot_pb2.PROMPT_LATE_UNO:
                text = screen_text(app)
                assert "UNO window" in text and "u: call it now" in " ".join(text.split())
                check_snapshot("play_late_uno", text)
            choice = script.choose(engine_view(d.request))
            assert choice is not None
            sent = len(app.sent)
            for key in keys_for(app, choice):
                await pilot.press(key)
            await pilot.pause()
            if choice == A.CALL_UNO:
                late_reaction = time.monotonic() - d.received
                assert app.sent[sent:] == [choice], (
                    f"the late call came {late_reaction:.1f} s after the window opened, "
                    f"after its {LATE_WINDOW_MS / 1000:.0f} s"
                )
            assert app.sent[sent:] == [choice]
        session = app.session
        assert session is not None and session.server is not None
        hand = arena_table(session.server.arena, app.match_id).match.hand
        await pilot.press("q")
    _, offline = simulate(FORGETFUL_SEED, forgetful=True)
    assert hand.actions == offline.hand.actions
    assert bot_pb2.PROMPT_LATE_UNO in prompts and bot_pb2.PROMPT_UNO_WINDOW in prompts
    assert (0, A.CALL_UNO) in hand.actions and (0, A.NO_CATCH) in hand.actions
    assert (SYSTEM, 6) in hand.actions  # the window the person let go closed on its timer
    assert 0 <= late_reaction < LATE_WINDOW_MS / 1000


@pytest.mark.asyncio
async def test_a_seven_swaps_hands_with_the_seat_chosen() -> None:
    """Seven-o house rule: the 7's key asks which seat to swap with; its number answers."""
    opts = options()
    opts.seed = 1  # the person's first turn offers a 7 (yellow 7, code 23)
    opts.rules = {"seven_o": True}
    app = PlayApp(opts)
    async with app.run_test(size=SIZE) as pilot:
        assert await next_decision(app, pilot)
        assert app.model is not None
        swaps = [a.id for a in app.decision.request.legal_actions if a.id >= A.SWAP_BASE]  # type: ignore[union-attr]
        assert swaps == [3231, 3232, 3233]
        await pilot.press(CARD_KEYS[app.model.hand.index(23)])
        await settle(pilot)
        assert "swaps hands: with which seat?" in screen_text(app)
        await pilot.press("2")
        await pilot.pause()
        assert app.sent == [3232]
        await pilot.press("q")


def test_the_status_bar_names_the_configured_pace() -> None:
    """The practice status shows the UNO window and move time as configured, not a fixed 5 s
    (issue 21): the defaults, each flag, and the match's own rules once they are known."""
    assert [span(ms) for ms in (0, 250, 1500, 5000, 60_000, 90_000, 600_000)] == [
        "0 s", "0.25 s", "1.5 s", "5 s", "1 min", "90 s", "10 min"
    ]  # fmt: skip
    assert PlayApp(PlayOptions(practice=True))._practice_pace() == (
        "practice: 5 s UNO window, 10 min a move"
    )
    opts = PlayOptions(practice=True, uno_window_ms=3000, decision_ms=20_000)
    assert PlayApp(opts)._practice_pace() == "practice: 3 s UNO window, 20 s a move"
    app = PlayApp(opts)
    rules = game_pb2.RuleSet(seats=4, uno_window_ms=1500)
    app.model = TableModel.for_rules(["you", "ai-1", "ai-2", "ai-3"], rules, viewer=0)
    assert app._practice_pace() == "practice: 1.5 s UNO window, 20 s a move"


@pytest.mark.asyncio
async def test_the_status_bar_on_screen_shows_the_window_played() -> None:
    """On the screen, with a table that is playing: a 3 s window and 20 s moves."""
    opts = options()
    opts.uno_window_ms, opts.decision_ms = 3000, 20_000
    app = PlayApp(opts)
    async with app.run_test(size=SIZE) as pilot:
        assert await next_decision(app, pilot)
        await settle(pilot, lambda text: "practice: 3 s UNO window, 20 s a move" in text)
        assert "practice: 3 s UNO window, 20 s a move" in screen_text(app).splitlines()[0]
        await pilot.press("q")


@pytest.mark.asyncio
async def test_a_redraw_after_the_screen_closed_is_dropped() -> None:
    """A timer or the session can ask for a redraw after the widgets are gone (a slow machine
    closing the app); it is dropped, not raised over the real outcome of the run."""
    app = PlayApp(options())
    async with app.run_test(size=SIZE) as pilot:
        await next_decision(app, pilot)
    app._laid_out = True  # as if the close had not reached the flag yet
    app._refresh()  # no NoMatches
    assert not app._laid_out
