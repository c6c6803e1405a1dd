"""``tournament watch`` shows the leaderboard the report shows.

An examination: on a finished run, watch printed a bot that never played at -1375 [-2328,
-421], rank 4, and another at +753, where the report gave an upper limit of +100, ranks 1-4,
and +294.6: watch fitted with a weak prior, which makes up a rating (and a two-sided interval)
for a bot the results bound one way only. It now uses the report's fit and ranks."""

from __future__ import annotations

import io
import re
from pathlib import Path

from uno_tournament.report import rank_ranges, summarize
from uno_tournament.store import Store
from uno_tournament.watch import watch

from .test_columns import BOTS, _config, _hand


def test_watch_and_the_report_agree_on_a_bot_that_never_went_out_first(tmp_path: Path) -> None:
    store = Store.create(tmp_path, {"tournament_id": "t", "config": _config().to_dict()})
    for i in range(48):  # d (seat 3) never goes out first; a, b and c take turns
        store.add_hand(_hand(i, winner=(i * 7) % 3))
    s = summarize(store, _config(), "t", 48)
    report = {b.bot: (rank, b) for rank, b in zip(rank_ranges(s), s.bots, strict=True)}
    assert report["d"][1].ci_low == float("-inf")  # the report bounds d on one side only
    text = io.StringIO()
    assert watch(store, once=True, stream=text) == 0
    store.close()
    rows = {}
    for line in text.getvalue().splitlines():
        m = re.match(r"\s*(\S+)\s+([abcd])\s+(.+?)\s{2,}(\S.*\S)\s*$", line)
        if m:
            rows[m.group(2)] = (m.group(1), m.group(3), m.group(4))
    assert set(rows) == set(BOTS), text.getvalue()
    rank, d = report["d"]
    assert rows["d"] == (rank, f"≤ {d.ci_high:+.0f}", f"(-inf, {d.ci_high:+.0f}]")
    for bot in "abc":
        rank, b = report[bot]
        assert rows[bot][0] == rank and rows[bot][1] == f"{b.rating:+.0f}", (bot, rows[bot])


def test_watch_shows_bots_tied_exactly_and_a_bot_given_up_on_as_the_report_does(
    tmp_path: Path,
) -> None:
    """An examination: for four copies of one deterministic bot the report gave +0 [+0, +0]
    ("tied exactly") and watch +0/-0 [-161, +161] in another order; watch also left out the
    mark of a bot given up on."""
    import dataclasses

    store = Store.create(tmp_path, {"tournament_id": "t", "config": _config().to_dict()})
    for i in range(24):  # seat 0 always goes out, seat 3 is always last; the bots rotate
        h = _hand(i, winner=0)
        bots = BOTS[i % 4 :] + BOTS[: i % 4]
        seats = [dataclasses.replace(s, bot=bots[k], place=k + 1) for k, s in enumerate(h.seats)]
        store.add_hand(dataclasses.replace(h, seats=seats))
    store.add_incident("c", "given_up", "it kept crashing")
    s = summarize(store, _config(), "t", 24)
    assert s.tied
    text = io.StringIO()
    assert watch(store, once=True, stream=text) == 0
    store.close()
    rows = {}
    for line in text.getvalue().splitlines():
        m = re.match(r"\s*(\S+)\s+([abcd])( †)?\s+(\S+)\s+(\[.*\])\s*$", line)
        if m:
            rows[m.group(2)] = (m.group(1), m.group(3) or "", m.group(4), m.group(5))
    assert rows == {
        "a": ("1-4", "", "+0", "[+0, +0]"),
        "b": ("1-4", "", "+0", "[+0, +0]"),
        "c": ("1-4", " †", "+0", "[+0, +0]"),
        "d": ("1-4", "", "+0", "[+0, +0]"),
    }, text.getvalue()
