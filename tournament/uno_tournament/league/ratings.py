"""Ratings over time: one fit over every hand the league has played, each version its own
player, and what each refit leaves in the league's store.

The fit is the tournament report's (:func:`uno_tournament.standings.fit_ratings` over
:func:`~uno_tournament.standings.rated_outcomes`): Plackett-Luce with seat terms, deal-clustered
(sandwich) standard errors, the forfeit policy applied, and a weak prior only when maximum
likelihood runs away. Every refit appends a ``refits`` row and one ``history`` row per rated
version (rating and 95% interval, hands), and updates the new-version verdict of every
replacement that is still undecided (:mod:`uno_tournament.newversion`: H1 "better", H0 "not
better", else "undecided yet"). Retired versions keep being rated: their hands stay in the fit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..newversion import NewVersionState
from ..rating_model import Ratings
from ..report import few_deals_note
from ..standings import fit_played, rated_outcomes
from ..store import ResultStore
from .store import LeagueStore, Version

__all__ = ["VERDICTS", "LeagueFit", "fit_league", "record_refit", "server_name", "subset"]

VERDICTS = {"H1": "better", "H0": "not better"}
"""The new-version test's decision as the league words it (anything else: "undecided yet")."""


def server_name(v: Version) -> str:
    """The name a version plays under on the game server (``name.id``: unique, since the id is,
    and within the server's ``[A-Za-z0-9_.-]``, which a version's ``+`` and ``@`` are not). A
    remote bot plays under its token's name, which its author gives it; a token's name never
    ends in ``.DIGITS``, so the two never meet."""
    if v.remote:  # the name its author runs it with (Hello.bot_name); one rated version each
        return v.name
    return f"{v.name}.{v.id}"


@dataclass(frozen=True)
class LeagueFit:
    ratings: Ratings | None
    note: str
    hands: int
    """Hands in the fit."""
    per_bot: dict[str, int]
    """Hands each server name played."""


def fit_league(store: ResultStore, policy: str) -> LeagueFit:
    """One fit over every stored hand (bots by their server names)."""
    cols = store.columns()
    names = cols.bot_names
    real = cols.bots >= 0
    counts = np.bincount(cols.bots[real].ravel(), minlength=len(names))
    per_bot = {names[i]: int(counts[i]) for i in range(len(names))}
    if cols.n_hands == 0 or int(np.count_nonzero(counts)) < 2:
        return LeagueFit(None, "no hands", cols.n_hands, per_bot)
    outcomes = rated_outcomes(
        cols.hand_ids, cols.deal_ids, cols.bots, cols.places, cols.taken_over, policy
    )
    ratings, note = fit_played(cols, outcomes)
    if ratings is not None and ratings.unmeasured:  # the refit's note in league.json says so
        first = note.strip()
        if first and not first.endswith("."):
            first += "."  # one sentence ends before the next begins
        note = " ".join(x for x in (first, few_deals_note(ratings)) if x)
    return LeagueFit(ratings, note, cols.n_hands, per_bot)


def subset(r: Ratings, bots: list[str]) -> Ratings:
    """The fit's ratings of ``bots`` only (for a test over the active versions)."""
    idx = [r.index(b) for b in bots]
    return dataclasses.replace(
        r,
        bots=tuple(bots),
        elo=r.elo[idx],
        cov=r.cov[np.ix_(idx, idx)],
        units=None if r.units is None else r.units[idx],
        side=None if r.side is None else r.side[idx],
        bound=None if r.bound is None else r.bound[idx],
    )


def record_refit(league: LeagueStore, fit: LeagueFit) -> int | None:
    """The refit into the league's store: its history rows and the verdicts it moves. Returns
    the refit's number (None: nothing to rate yet)."""
    r = fit.ratings
    if r is None:
        return None
    by_name = {server_name(v): v for v in league.versions()}
    rows = []
    for i, b in enumerate(r.bots):
        v = by_name.get(b)
        if v is None:
            continue  # not a league version (nothing else plays in the league's store)
        if not bool(r.rated[i]):
            continue  # its rated hands are from one deal so far: no rating yet, as for none
        rows.append(
            (v.id, float(r.elo[i]), float(r.ci_low[i]), float(r.ci_high[i]), fit.per_bot.get(b, 0))
        )
    refit = league.add_refit(fit.hands, rows, fit.note)
    by_id = {v.id: v for v in by_name.values()}
    for old_id, new_id, _, verdict, test in league.replacements():
        if verdict != "undecided yet" or old_id not in by_id or new_id not in by_id:
            continue
        old, new = server_name(by_id[old_id]), server_name(by_id[new_id])
        state = (
            NewVersionState.from_dict(test)
            if test
            else NewVersionState(candidate=new, baseline=old)
        )
        try:
            state.look(r)
        except ValueError:  # one of the two has no league hands yet
            state.hands = fit.hands
        league.set_verdict(old_id, VERDICTS.get(state.verdict, "undecided yet"), state.to_dict())
    return refit
