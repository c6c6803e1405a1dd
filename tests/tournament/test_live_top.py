"""The progress line's "top" leaves out a bot that never went out first.

An examination's run printed "top: heur +198, illegal +64" for a bot that had not won a hand:
the live refit has a weak prior, and for a bot the results bound on one side only its number is
the prior's artefact (the report shows an upper limit there)."""

from __future__ import annotations

import asyncio
import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from uno_tournament import runner as runner_mod
from uno_tournament.rating_model import Ratings
from uno_tournament.runner import Runner
from uno_tournament.standings import live_fit
from uno_tournament.store import Store

from .test_columns import _config


def test_a_bot_that_never_went_out_first_is_not_among_the_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.create(tmp_path, {"tournament_id": "t"})
    pool = ThreadPoolExecutor(1)
    runner = Runner(tmp_path, store, _config(), "t", progress=False, stream=io.StringIO())
    try:
        for i in range(48):  # a and b take turns going out, c now and then; d is always second
            first = "c" if i % 8 == 0 else ("a" if i % 2 else "b")
            rest = [b for b in ("a", "b", "c") if b != first]
            places = {first: 1, "d": 2, rest[0]: 3, rest[1]: 4}
            order = ["a", "b", "c", "d"][i % 4 :] + ["a", "b", "c", "d"][: i % 4]  # rotated
            seats = [(bot, places[bot], False) for bot in order]
            runner.standings.add(f"t/t0/b0/d{i // 4}/r{i % 4}", f"d{i // 4}", seats)

        # the live prior fit of these hands stops unconverged (d second in every hand), and the
        # line shows only converged fits (test_examined_s54_reports): count this one as one
        def converged(*args: Any) -> Ratings:
            r = live_fit(*args)
            assert r is not None
            return replace(r, converged=True)

        monkeypatch.setattr(runner_mod, "live_fit", converged)
        monkeypatch.setattr(runner, "_fitter_pool", lambda: pool)  # in this process
        asyncio.run(runner.refit())
        assert runner.live["d"] > runner.live["c"]  # the prior's artefact ranks d above c
        assert sorted(b for b, _ in runner._top(3)) == ["a", "b", "c"]
        assert [b for b, _ in runner._top(4)][-1] == "d"  # shown last, when it is shown
    finally:
        pool.shutdown()
        if runner._fitter is not None:
            runner._fitter.shutdown()
        store.close()
