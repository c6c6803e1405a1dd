"""A league's deals come from a secret seed.

Every deal seed is ``deal_seed(seed, table, block, deal)``, and a bot is told its match's table,
block and deal in ``MatchStarted.labels``. Every league had seed 1, so any stranger's bot could
compute every seat's cards, in the ladder and in the gate (an examination recomputed 24 of 24
match seeds and printed all four starting hands). A new league draws a secret seed, kept in its
own records, which a sandboxed bot cannot read."""

from __future__ import annotations

from pathlib import Path

from uno_tournament.league.cli import settings_from
from uno_tournament.league.hands import league_config
from uno_tournament.league.records import create_league, open_league
from uno_tournament.schedule import deal_seed


def test_each_new_league_has_its_own_secret_seed_and_plays_with_it(tmp_path: Path) -> None:
    seeds = []
    for name in ("a", "b"):
        store = create_league(tmp_path / name, settings_from(None), None)
        store.close()
        again = open_league(tmp_path / name)
        settings = again.settings()
        again.close()
        seed = int(settings["seed"])
        assert seed > 1
        cfg = league_config(settings, 4)
        assert cfg.seed == seed  # the ladder deals with it
        seeds.append(seed)
    assert seeds[0] != seeds[1]
    assert deal_seed(seeds[0], 0, 0, 0) != deal_seed(1, 0, 0, 0)


def test_the_gate_deals_with_the_league_secret_too() -> None:
    from uno_tournament.league.manifest import read_manifest
    from uno_tournament.league.submit import gate_config

    examples = Path(__file__).resolve().parents[2] / "tournament/uno_tournament/league/examples"
    folder = examples / "heuristic"
    man = read_manifest(folder)
    settings = settings_from(None)
    cfg = gate_config(man, folder, settings, 48, name=man.name)
    assert cfg.seed == settings["seed"] > 1
