"""Ratings over time (issue 26): one fit over every league hand, each version its own player; a
history row per rated version after every refit; a replacement's new-version verdict moves from
"undecided yet" to "better" or "not better" as the hands decide it, and then stands."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

from uno_tournament.league.cli import settings_from
from uno_tournament.league.ratings import fit_league, record_refit, server_name
from uno_tournament.league.store import LeagueStore
from uno_tournament.ratings import ELO_PER_NAT
from uno_tournament.store import HandRecord, SeatRecord, Store


def _league(tmp_path: Path) -> LeagueStore:
    store = LeagueStore.create(tmp_path / "league", settings_from(None))
    for name, author in (("a", "ann"), ("b", "bob"), ("c", "cat"), ("d", "dan")):
        store.record(
            name=name,
            version="1",
            author=author,
            language="python",
            folder="",
            manifest={"run": ["x"]},
            state="active",
        )
    return store


def _play(store: Store, rng: random.Random, bots: list[str], elo: dict[str, float], n: int) -> None:
    """``n`` hands of the four ``bots``, finishing orders drawn from the rating model, in
    blocks of deals played in the four rotations."""
    start = store.count()
    for k in range(n):
        i = start + k
        deal, rot = divmod(i, 4)
        seated = [bots[(s + rot) % 4] for s in range(4)]
        keys = [elo[b] / ELO_PER_NAT - math.log(-math.log(rng.random())) for b in seated]
        order = sorted(range(4), key=lambda s: -keys[s])
        place = [0] * 4
        for p, s in enumerate(order):
            place[s] = p + 1
        seats = [SeatRecord(s, seated[s], place[s], 10 * (place[s] - 1), 0) for s in range(4)]
        store.add_hand(
            HandRecord(
                f"league/h{i:06d}",
                0,
                deal // 6,
                deal % 6,
                rot,
                f"d{deal}",
                i,
                i,
                0,
                f"m{i}",
                order[0],
                10,
                0.1,
                seats,
                {"hand_id": f"league/h{i:06d}"},
            )
        )


@pytest.mark.parametrize(("gap", "verdict"), [(300.0, "better"), (-300.0, "not better")])
def test_a_replacement_gets_its_verdict_and_every_refit_its_history(
    tmp_path: Path, gap: float, verdict: str
) -> None:
    league = _league(tmp_path)
    store = Store.create(tmp_path / "play", {"tournament_id": "league"})
    rng = random.Random(11)
    try:
        v = {x.name: x for x in league.versions()}
        old, b, c, d = (server_name(v[n]) for n in "abcd")
        elo = {old: 0.0, b: 0.0, c: 50.0, d: -50.0}
        _play(store, rng, [old, b, c, d], elo, 480)
        assert record_refit(league, fit_league(store, "last")) == 1
        retired = league.record(
            name="a",
            version="2",
            author="ann",
            language="python",
            folder="",
            manifest={"run": ["x"]},
            state="active",
        )
        assert retired == ["a@1"]
        new = server_name(next(x for x in league.versions() if x.key == "a@2"))
        assert [r[3] for r in league.replacements()] == ["undecided yet"]
        # the new version has no league hands yet: still undecided
        record_refit(league, fit_league(store, "last"))
        assert [r[3] for r in league.replacements()] == ["undecided yet"]
        elo[new] = gap
        refits = 2
        while league.replacements()[0][3] == "undecided yet":
            _play(store, rng, [new, b, c, d], elo, 96)
            record_refit(league, fit_league(store, "last"))
            refits += 1
            assert refits < 40, "no verdict after 3,000 hands of a 300 Elo gap"
        got = league.replacements()[0]
        assert got[3] == verdict, got
        assert got[4]["candidate"] == new and got[4]["baseline"] == old
        # a verdict made stands, even when later hands would say otherwise
        _play(store, rng, [new, b, c, d], {**elo, new: -gap}, 1440)
        record_refit(league, fit_league(store, "last"))
        fit = fit_league(store, "last")
        assert fit.ratings is not None
        later = fit.ratings.elo[fit.ratings.index(new)] - fit.ratings.elo[fit.ratings.index(old)]
        assert later * gap < 0  # the hands alone now point the other way
        assert league.replacements()[0][3] == verdict

        history = league.history()
        assert [r[0] for r in league.refits()] == list(range(1, refits + 2))
        for rid, _, hands, _ in league.refits():
            rows = [h for h in history if h[0] == rid]
            assert len(rows) == (4 if rid <= 2 else 5)  # each rated version, retired ones too
            assert sum(h[5] for h in rows) == 4 * hands
            assert all(h[3] < h[2] < h[4] for h in rows)
    finally:
        store.close()
        league.close()


def test_nothing_to_rate_records_no_refit(tmp_path: Path) -> None:
    league = _league(tmp_path)
    store = Store.create(tmp_path / "play", {"tournament_id": "league"})
    try:
        assert record_refit(league, fit_league(store, "last")) is None
        assert league.refits() == [] and league.history() == []
    finally:
        store.close()
        league.close()


def test_until_settled_stops_once_the_active_versions_ranking_is_decided(tmp_path: Path) -> None:
    """``league run --until settled``: the settled test over the active versions only (a
    retired version in the fit is no pair of the ranking), and not before the gaps are told."""
    from types import SimpleNamespace

    from uno_tournament.league.run import LeagueRunner

    league = _league(tmp_path)
    store = Store.create(tmp_path / "league" / "play", {"tournament_id": "league"})
    rng = random.Random(3)
    try:
        runner = LeagueRunner(tmp_path / "league", league, store, until_settled=True)
        v = {x.name: x for x in league.versions()}
        names = [server_name(v[n]) for n in "abcd"]
        seated: Any = {v[n].id: SimpleNamespace(name=server_name(v[n])) for n in "abc"}
        runner.seated = seated  # as if launched: _look_settled needs only who is seated
        elo = dict(zip(names, (0.0, 400.0, 800.0, 0.0), strict=True))
        _play(store, rng, names, elo, 96)
        runner._look_settled(fit_league(store, "last"))
        assert not runner.stop_requested  # 96 hands in all: below the first look's floor
        assert runner.settled is not None and runner.settled.bots == tuple(sorted(names[:3]))
        for _ in range(30):
            _play(store, rng, names, elo, 96)
            runner._look_settled(fit_league(store, "last"))
            if runner.stop_requested:
                break
        assert runner.stop_requested, "400 Elo gaps not settled in 2,976 hands"
        assert runner.settled.looks >= 1
        runner.log.close()
    finally:
        store.close()
        league.close()
