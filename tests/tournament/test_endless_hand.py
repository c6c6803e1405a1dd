"""A hand that never ends: bots that never play a card hold it open once the draw pile runs
dry (every turn draws nothing and passes). The server ends such a match after 20,000 actions;
the runner played the same hand again for ever and said nothing (an examination: 61 tries in
ten minutes, one hand of 24 stored; four such bots in a league stopped it for good). After the
second such end the bots that played no card in it are given up on, as a crashing bot is: their
seats go to stand-ins, which play, and the run goes on."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.refusal import cli
from uno_tournament.endless import idle_seats
from uno_tournament.wirejson import WireEvents

from .helpers import write_config

HOARDER = Path(__file__).with_name("hoarder_bot.py")


def _hoarder(name: str) -> str:
    return (
        f'[[bots]]\nname = "{name}"\n'
        f'command = ["{{python}}", "{HOARDER}", "--log-level", "warning"]\n'
    )


def test_the_bots_that_hold_a_hand_open_are_given_up_on_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    # four bots that never play a card: the first hand can never end (which hands do with
    # one bot that plays depends on the deal); which seats played a card is read from the
    # events (the next test), so a bot that plays is never among those given up on
    cfg = write_config(tmp_path, [_hoarder(f"h{i}") for i in range(4)], concurrency=1)
    res = cli("tournament", "run", str(cfg), "--quiet", timeout=900)
    assert res.returncode == 0, res.stdout[-1000:] + res.stderr[-2000:]
    out = tmp_path / "out"
    db = sqlite3.connect(out / "tournament.sqlite")
    assert db.execute("SELECT COUNT(*) FROM hands").fetchone()[0] == 24
    given_up = dict(db.execute("SELECT bot, detail FROM incidents WHERE kind = 'given_up'"))
    assert set(given_up) == {"h0", "h1", "h2", "h3"}, given_up
    for detail in given_up.values():
        assert "open without playing a card" in detail and "did not end after 20000" in detail
    results = json.loads((out / "results.json").read_text())
    assert set(results["given_up"]) == set(given_up), results["given_up"]


def test_the_idle_seats_are_read_from_either_form_of_the_events() -> None:
    wire = WireEvents()
    wire.parts = [
        json.dumps({"played": {"card": {"code": 1}}}),  # seat 0: omitted in canonical JSON
        json.dumps({"drew": {"seat": 1, "count": 1}}),
        json.dumps({"played": {"seat": 3, "card": {"code": 2}}}),
    ]
    assert idle_seats(wire, 4) == [1, 2]
    assert idle_seats(WireEvents(), 4) == [0, 1, 2, 3]
