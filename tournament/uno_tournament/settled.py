"""Run until the ranking is settled: an anytime-valid decision for every pair of bots.

After every refit the runner hands the fitted :class:`~uno_tournament.ratings.Ratings` to
:meth:`SettledState.look`. For each pair of bots ``(a, b)`` the gap ``d = elo[a] - elo[b]`` gets a
confidence *sequence*: an interval that covers ``d`` at every look at once, with probability at
least ``1 - alpha_pair``, however often and whenever the runner looks (and whatever it decides to
schedule in between). A pair is

* ``"better"`` (one bot is better) once its interval excludes 0,
* ``"tied"`` (certified within ``indifference_elo``, called delta) once its interval lies inside
  ``(-delta, +delta)``,
* ``"open"`` otherwise.

The run is *settled* when every adjacent pair of the current ranking is decided.

Method
------
Information time. With ``se`` the pair's standard error from the fit (the deal-clustered sandwich
covariance of :mod:`uno_tournament.ratings`), its information is ``t = 1 / se**2`` and its score
``S = d_hat * t``. For a sequence of maximum-likelihood fits on growing data the estimates have,
asymptotically, the canonical joint distribution (Jennison & Turnbull, *Group Sequential Methods*,
ch. 11): ``S - d * t`` is a Brownian motion in ``t``. This holds for any schedule that depends only
on the hands already played (the likelihood does not depend on the design), which is what lets
the runner schedule for information.

Normal-mixture confidence sequence (Robbins' mixture martingale). For a Brownian motion ``B(t)``,
``M(t) = sqrt(rho / (t + rho)) * exp(B(t)**2 / (2 * (t + rho)))`` is a nonnegative martingale with
``M(0) = 1`` (a ``N(0, 1/rho)`` mixture of ``exp(l * B - l**2 * t / 2)``), so by Ville's inequality
``P(exists t: M(t) >= 1/a) <= a``, that is::

    P(exists t: |S - d*t| > sqrt((t + rho) * (2*log(1/a) + log((t + rho) / rho)))) <= a

and ``d_hat +- half_width(t)`` (``half_width = sqrt(...) / t``) covers ``d`` at all looks at once.
The runner keeps the running intersection of the intervals (also valid: every one of them covers
``d`` on the same event), so a claim, once made, is never retracted; it is recorded with the number
of hands at which it was made.

``rho`` sets the information where the sequence is tightest. It is fixed before the run, from the
settings only (:func:`tune_rho`): the sequence is tightest where its half-width is
``RHO_TARGET_DELTAS * indifference_elo`` (4 deltas: 40 Elo by default), the precision at which
the pairs of a field like the example's (adjacent gaps of 30-75 Elo) get decided: for 8 bots the
information at which the sequence is 46 Elo wide is within 0.3% of the best any ``rho`` gives,
against 12% more when tuned at 2 deltas. A badly chosen ``rho`` costs hands, never validity.

Adaptive designs. When the tables of a block are chosen from earlier hands
(:mod:`uno_tournament.adaptive`), the cumulative fit's ``d_hat * t`` is no longer a martingale
(the fit's weights on direct and indirect comparisons move with the chosen tables), so such a
run combines per-block fits instead (:meth:`SettledState.look_block`, ``advance(by_block=True)``):
each block's estimate is, given the earlier blocks, ``N(d, var_block)`` whatever its tables, and
``sum(d_block / var_block) - d * sum(1 / var_block)`` is a martingale with the right clock.

A block is small (eight tables, 48 deals for 8 bots), and the adaptive schedule seats some bots
at only a table or two of it, so its fit (:func:`fit_block`) holds the weight of places 2-4 at
the cumulative fit's from the look before (predictable: it depends on earlier blocks only) and
takes each pair's ``var_block`` as the larger of the deal-clustered sandwich's and the
model-based (Fisher) one. The sandwich from a handful of deals can collapse, and weighted by
its inverse such a block counts many times over: with the sandwich alone and the weight
refitted per block, engine A/A tournaments declared an order in 6 of 85 (docs/tournaments.md).

Multiplicity: Bonferroni over all ``C(N, 2)`` pairs, ``alpha_pair = alpha / C(N, 2)``. The pairs
that matter, the adjacent ones, are chosen by the data and change as the ranking moves, so they
are not a family fixed in advance, and Holm over N-1 "adjacent" hypotheses would not control the
error. Holm over all ``C(N, 2)`` pairs is no shortcut either: a pair's claim is two-sided (either
order, or tied), so every pair carries a hypothesis that is true whatever the data show (the
reverse order, or "tied" when the gap is at least delta); a right claim does not remove it, and
Holm's later, looser steps lose their justification, which leaves Bonferroni's single step. With
simultaneous sequences for all pairs, every claim about every pair at every look is right with
probability at least ``1 - alpha``, whichever pairs turn out adjacent. The price over N-1 pairs is
a log: for 8 bots ``log(28 / 0.05) = 6.3`` against ``log(7 / 0.05) = 4.9`` in the bound, about 10%
wider.

What "wrong" means: a pair declared better the wrong way round, or declared tied while its true
gap is at least delta. Both need the sequence to miss ``d``, so their probability, over all pairs
and all looks, is at most ``alpha``.

Caveats (checked by ``make bench-settled`` on hands the engine plays): the Gaussian process is an
asymptotic approximation, so the first look is taken only once every bot has played
``min_hands_per_bot`` hands; and the fits' covariances estimate the information.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .rating_model import HandResult, Ratings
from .ratings import fit_plackett_luce

__all__ = [
    "BlockFit",
    "PairState",
    "SettledDecision",
    "SettledState",
    "advance",
    "fit_block",
    "fit_hands",
    "half_width",
    "information_at",
    "left_out",
    "stop_line",
    "tune_rho",
]

Status = Literal["better", "tied", "open"]

STATE_VERSION = 2
"""2: the per-block fits hold the weight of places 2-4 and take each pair's variance as the
larger of the sandwich's and the model-based one (:func:`fit_block`); the state records the
weight the next block holds."""
NO_BLOCK_FIT = "no usable block fit"
FEWER_THAN_TWO = "fewer than two bots left to rank; look skipped"
"""The note of a look whose block had no usable fit (:meth:`SettledState.look_next_block`)."""
RHO_TARGET_DELTAS = 4.0
"""The sequence is tightest where its half-width is this many deltas (see :func:`tune_rho`)."""
DEFAULT_MIN_HANDS_PER_BOT = 96
"""Hands every bot must have played before the first look (four duplicate blocks' worth)."""


def half_width(t: float, rho: float, alpha_pair: float) -> float:
    """Half-width (Elo) of the normal-mixture confidence sequence at information ``t`` (1/Elo^2)."""
    if not t > 0.0 or not math.isfinite(t):
        return math.inf
    level = 2.0 * math.log(1.0 / alpha_pair) + math.log((t + rho) / rho)
    return math.sqrt((t + rho) * level) / t


def information_at(half: float, rho: float, alpha_pair: float) -> float:
    """The information at which :func:`half_width` is ``half`` (bisection on log t; the
    half-width falls as t grows): the progress line's projection of the hands still expected."""
    if not half > 0.0:
        return math.inf
    lo, hi = -30.0, 30.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if half_width(math.exp(mid), rho, alpha_pair) > half:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


def tune_rho(alpha_pair: float, target_half_width: float) -> float:
    """The mixture's ``rho`` (1/Elo^2) that makes the sequence tightest where its half-width is
    ``target_half_width`` Elo.

    With ``x = rho / t`` the half-width is ``sqrt(g(x) / t)``, ``g(x) = (1 + x) * (2*log(1/a) +
    log(1 + 1/x))``, so the best ratio ``x*`` does not depend on ``t``: minimise ``g`` (convex in
    ``log x``, golden-section search), then ``t* = g(x*) / target**2`` and ``rho = x* * t*``."""
    if not 0.0 < alpha_pair < 1.0:
        raise ValueError("alpha_pair must be within (0, 1)")
    if not (target_half_width > 0.0 and math.isfinite(target_half_width)):
        raise ValueError("target_half_width must be positive")
    two_l = 2.0 * math.log(1.0 / alpha_pair)

    def g(log_x: float) -> float:
        x = math.exp(log_x)
        return (1.0 + x) * (two_l + math.log1p(1.0 / x))

    lo, hi = math.log(1e-8), math.log(1e4)
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(100):
        m1, m2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        if g(m1) < g(m2):
            hi = m2
        else:
            lo = m1
    log_x = (lo + hi) / 2.0
    t_star = g(log_x) / target_half_width**2
    return math.exp(log_x) * t_star


@dataclass
class PairState:
    """One pair's running confidence sequence for ``d = elo[a] - elo[b]`` (``a < b`` by name)."""

    a: str
    b: str
    low: float = -math.inf
    high: float = math.inf
    status: Status = "open"
    claimed_at: int | None = None
    """Hands in the fit at the look that made the claim."""
    conflict: bool = False
    """The intervals stopped overlapping (an event of probability at most alpha_pair): the first
    claim stands and the pair is flagged."""
    score: float = 0.0
    """Sum over the blocks so far of ``d_block / var_block`` (:meth:`SettledState.look_block`)."""
    info: float = 0.0
    """Sum over the blocks so far of ``1 / var_block``."""

    def claim(self) -> str:
        """``"a > b"``, ``"a < b"``, ``"a ~ b"`` (tied within delta) or ``"a ? b"`` (open)."""
        if self.status == "better":
            return f"{self.a} > {self.b}" if self.low > 0 else f"{self.a} < {self.b}"
        return f"{self.a} {'~' if self.status == 'tied' else '?'} {self.b}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "low": _num(self.low),
            "high": _num(self.high),
            "status": self.status,
            "claimed_at": self.claimed_at,
            "conflict": self.conflict,
            "score": self.score,
            "info": self.info,
        }


def _num(x: float) -> float | str:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _unnum(x: Any) -> float:
    return float(x)


@dataclass(frozen=True)
class SettledDecision:
    """The outcome of one look."""

    hands: int
    ranking: tuple[str, ...]
    adjacent: tuple[PairState, ...]
    """The adjacent pairs of ``ranking``, strongest first (copies of the pair states)."""
    looked: bool
    """False when the look was skipped (too few hands, or a fit without usable errors)."""
    note: str = ""

    @property
    def settled(self) -> bool:
        return bool(self.adjacent) and all(p.status != "open" for p in self.adjacent)

    @property
    def open_pairs(self) -> list[str]:
        """Open adjacent pairs as ``"stronger~weaker"`` in ranking order."""
        out = []
        for i, p in enumerate(self.adjacent):
            if p.status == "open":
                out.append(f"{self.ranking[i]}~{self.ranking[i + 1]}")
        return out

    def summary(self) -> str:
        """``"7 of 7 pairs decided"`` or ``"5 of 7 pairs decided, open: a~b, c~d"``."""
        n = len(self.adjacent)
        done = n - len(self.open_pairs)
        text = f"{done} of {n} pairs decided"
        if self.open_pairs:
            text += ", open: " + ", ".join(self.open_pairs)
        return text


@dataclass
class SettledState:
    """The sequential test's whole state: serialisable (:meth:`to_dict`) so that a resumed run
    or another shard continues the same test exactly."""

    bots: tuple[str, ...]
    alpha: float = 0.05
    indifference_elo: float = 10.0
    min_hands_per_bot: int = DEFAULT_MIN_HANDS_PER_BOT
    rho: float = 0.0
    """Fixed from the settings at creation (see :func:`tune_rho`)."""
    pairs: dict[tuple[str, str], PairState] = field(default_factory=dict)
    looks: int = 0
    through: int = 0
    """Hands of the plan's order covered by the looks taken so far (see :func:`advance`)."""
    settled_at: int | None = None
    """``through`` at the look that settled the ranking (the run stops scheduling there)."""
    last_hands: int = 0
    history: list[tuple[int, int, int]] = field(default_factory=list)
    """``(hands, adjacent pairs decided, adjacent pairs)`` at every look, for the report."""
    block_loser_weight: float | None = None
    """The weight of places 2-4 the next block's fit holds (:meth:`look_next_block`): the
    cumulative fit's at the last look, so it depends only on earlier blocks."""
    gone: tuple[str, ...] = ()
    """Bots left out of the ranking because the stand-in played every seat they had in the
    hands of a look (:attr:`HandResult.excluded`, the "exclude" forfeit policy: a bot given up
    on), until a later look's hands rate them again (see :func:`advance`)."""
    drop_gone: bool = True
    """:attr:`gone` is kept; False in a state recorded before that rule, which continues (and
    verifies) without it."""

    def __post_init__(self) -> None:
        if len(self.bots) < 2 or len(set(self.bots)) != len(self.bots):
            raise ValueError("need at least two distinct bots")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be within (0, 1), got {self.alpha}")
        if not (self.indifference_elo > 0.0 and math.isfinite(self.indifference_elo)):
            raise ValueError(f"indifference_elo must be positive, got {self.indifference_elo}")
        if self.min_hands_per_bot < 0:
            raise ValueError("min_hands_per_bot must be at least 0")
        self.bots = tuple(self.bots)
        if self.rho <= 0.0:
            self.rho = tune_rho(self.alpha_pair, RHO_TARGET_DELTAS * self.indifference_elo)
        for i, a in enumerate(sorted(self.bots)):
            for b in sorted(self.bots)[i + 1 :]:
                self.pairs.setdefault((a, b), PairState(a, b))

    @property
    def n_pairs(self) -> int:
        n = len(self.bots)
        return n * (n - 1) // 2

    @property
    def alpha_pair(self) -> float:
        """Bonferroni over all pairs (see the module docstring for why not Holm over N-1)."""
        return self.alpha / self.n_pairs

    def pair(self, x: str, y: str) -> PairState:
        return self.pairs[(x, y) if x < y else (y, x)]

    def look(
        self, ratings: Ratings, hands_per_bot: Mapping[str, int] | None = None
    ) -> SettledDecision:
        """Update every pair's sequence from a refit and decide. ``hands_per_bot`` (hands each bot
        has played) gates the first looks; without it every look counts."""
        if not set(ratings.bots) <= set(self.bots) or len(set(ratings.bots)) < 2:
            raise ValueError("the fit rates other bots than the sequential test")
        hands = int(ratings.n_hands)
        ranking = tuple(b for b in ratings.ranking() if b not in self.gone)
        note = ""
        usable = bool(np.all(np.isfinite(ratings.elo))) and bool(np.all(np.isfinite(ratings.cov)))
        if not usable:
            note = "the fit has no finite ratings or errors; look skipped"
        elif len(ranking) < 2:
            note = FEWER_THAN_TWO
        elif (
            hands_per_bot is not None
            and min(hands_per_bot.get(b, 0) for b in ranking) < self.min_hands_per_bot
        ):
            note = f"fewer than {self.min_hands_per_bot} hands for some bot; look skipped"
        if note:
            return SettledDecision(hands, ranking, self._adjacent(ranking), False, note)
        idx = {b: i for i, b in enumerate(ratings.bots)}
        # a bot the fit leaves out (no rated hand: see advance) gives its pairs no information
        keys = [k for k in self.pairs if k[0] in idx and k[1] in idx]
        ia = np.array([idx[a] for a, _ in keys])
        ib = np.array([idx[b] for _, b in keys])
        var = ratings.cov[ia, ia] + ratings.cov[ib, ib] - 2.0 * ratings.cov[ia, ib]
        est = ratings.elo[ia] - ratings.elo[ib]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(var > 0.0, 1.0 / var, 0.0)
        return self._update(keys, est, t, hands, ranking)

    def look_block(
        self,
        block: Ratings | BlockFit,
        ranking: Sequence[str],
        hands: int,
        hands_per_bot: Mapping[str, int] | None = None,
    ) -> SettledDecision:
        """Update from a fit of **one block's hands alone** and decide: the valid look when the
        blocks' tables were chosen from earlier hands (:mod:`uno_tournament.adaptive`).

        Each pair accumulates ``score += d_block / var_block`` and ``info += 1 / var_block``;
        the look is taken on ``d_hat = score / info`` at information ``info``. Given the hands
        before it, a block's estimate is (asymptotically in the block's size) ``N(d, var_block)``
        whatever tables were chosen, so ``score - d * info`` is a martingale with quadratic
        variation ``info`` under any design that depends only on earlier blocks, and the
        confidence sequence holds exactly as for a fixed design. (A cumulative fit's ``d_hat *
        t`` is not a martingale under such a design: the fit's weights on direct and indirect
        comparisons change with the tables chosen from the data, which in A/A tests on a linear
        Gaussian model raised the share of false orders several-fold; see
        ``tests/tournament/test_adaptive.py``.) ``ranking`` is the displayed ranking (from the
        cumulative fit) whose adjacent pairs are reported; ``hands`` the hands so far.

        ``block`` may rate only some of the bots (a block that seats only the bots still in
        play, :func:`uno_tournament.adaptive.active_ranks`; :func:`fit_block`): the pairs it
        rates are updated, the others keep their sums (a zero increment, still a martingale,
        since which bots a block seats depends only on earlier blocks).

        A :class:`BlockFit` (what :func:`fit_block` gives) brings each pair's variance; a bare
        :class:`Ratings` is taken at its covariance."""
        fit = block if isinstance(block, BlockFit) else None
        if isinstance(block, BlockFit):
            block = block.ratings
        if not set(block.bots) <= set(self.bots) or len(set(block.bots)) < 2:
            raise ValueError("the block's fit must rate two or more of the sequential test's bots")
        ranking = tuple(ranking)
        note = ""
        usable = bool(np.all(np.isfinite(block.elo))) and bool(np.all(np.isfinite(block.cov)))
        if fit is not None:
            usable = usable and bool(np.all(np.isfinite(fit.bread)))
        if not usable:
            note = "the block's fit has no finite ratings or errors; block left out"
        elif len(ranking) < 2:
            note = FEWER_THAN_TWO
        elif (
            hands_per_bot is not None
            and min(hands_per_bot.get(b, 0) for b in ranking) < self.min_hands_per_bot
        ):
            note = f"fewer than {self.min_hands_per_bot} hands for some bot; look skipped"
        if usable:
            idx = {b: i for i, b in enumerate(block.bots)}
            for (a, b), p in self.pairs.items():
                if a not in idx or b not in idx:
                    continue  # a bot the block did not seat: no information, no update
                i, j = idx[a], idx[b]
                var = (
                    fit.pair_var(i, j)
                    if fit is not None
                    else float(block.cov[i, i] + block.cov[j, j] - 2.0 * block.cov[i, j])
                )
                if var > 0.0 and math.isfinite(var):
                    p.score += float(block.elo[i] - block.elo[j]) / var
                    p.info += 1.0 / var
        if note:
            return SettledDecision(hands, ranking, self._adjacent(ranking), False, note)
        keys = list(self.pairs)
        info = np.array([self.pairs[k].info for k in keys])
        score = np.array([self.pairs[k].score for k in keys])
        with np.errstate(divide="ignore", invalid="ignore"):
            est = np.where(info > 0.0, score / info, 0.0)
        return self._update(keys, est, info, hands, ranking)

    def look_next_block(
        self,
        new_results: Sequence[HandResult],
        cumulative: Ratings,
        hands: int,
        hands_per_bot: Mapping[str, int] | None = None,
    ) -> SettledDecision:
        """Fit the block's hands (:func:`fit_block`, the weight of places 2-4 held at the
        cumulative fit's from the look before; at the first look, this look's) and take
        :meth:`look_block`. ``cumulative`` is the fit of every hand so far: it gives the
        displayed ranking and the weight the next block holds."""
        lam = self.block_loser_weight
        if lam is None or not math.isfinite(lam):
            lam = cumulative.loser_weight
        part = fit_block(new_results, self.bots, loser_weight=lam) if new_results else None
        if math.isfinite(cumulative.loser_weight):
            self.block_loser_weight = float(cumulative.loser_weight)
        ranking = tuple(b for b in cumulative.ranking() if b not in self.gone)
        if part is None:
            return SettledDecision(hands, ranking, self._adjacent(ranking), False, NO_BLOCK_FIT)
        return self.look_block(part, ranking, hands, hands_per_bot)

    def _update(
        self,
        keys: list[tuple[str, str]],
        est: np.ndarray,
        t: np.ndarray,
        hands: int,
        ranking: tuple[str, ...],
    ) -> SettledDecision:
        with np.errstate(divide="ignore", invalid="ignore"):
            level = 2.0 * math.log(1.0 / self.alpha_pair) + np.log((t + self.rho) / self.rho)
            w = np.where(t > 0.0, np.sqrt((t + self.rho) * level) / t, np.inf)
        for key, e, h in zip(keys, est.tolist(), w.tolist(), strict=True):
            if not math.isfinite(h):
                continue  # no information about this pair yet
            p = self.pairs[key]
            low, high = max(p.low, e - h), min(p.high, e + h)
            if low > high:  # the sequences stopped overlapping: keep the last valid interval
                p.conflict = True
                continue
            p.low, p.high = low, high
            if p.status == "open":
                if low > 0.0 or high < 0.0:
                    p.status, p.claimed_at = "better", hands
                elif -self.indifference_elo < low and high < self.indifference_elo:
                    p.status, p.claimed_at = "tied", hands
        self.looks += 1
        self.last_hands = hands
        out = SettledDecision(hands, ranking, self._adjacent(ranking), True)
        self.history.append((hands, len(out.adjacent) - len(out.open_pairs), len(out.adjacent)))
        return out

    def _adjacent(self, ranking: Sequence[str]) -> tuple[PairState, ...]:
        return tuple(dataclasses.replace(self.pair(x, y)) for x, y in itertools.pairwise(ranking))

    def claims(self) -> list[PairState]:
        """Every decided pair (adjacent or not), in order of the claim."""
        done = [p for p in self.pairs.values() if p.status != "open"]
        return sorted(done, key=lambda p: (p.claimed_at or 0, p.a, p.b))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "method": "normal-mixture confidence sequences, Bonferroni over all pairs",
            "bots": list(self.bots),
            "alpha": self.alpha,
            "indifference_elo": self.indifference_elo,
            "min_hands_per_bot": self.min_hands_per_bot,
            "rho": self.rho,
            "looks": self.looks,
            "through": self.through,
            "settled_at": self.settled_at,
            "last_hands": self.last_hands,
            "pairs": [p.to_dict() for p in self.pairs.values()],
            "history": [list(h) for h in self.history],
            "block_loser_weight": self.block_loser_weight,
            "gone": list(self.gone),
            "drop_gone": self.drop_gone,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SettledState:
        if data.get("version") == 1:
            raise ValueError(
                "sequential test state version 1 is an earlier release's (its per-block fits "
                "refitted the weight of places 2-4 and trusted the sandwich alone): finish or "
                "verify that run with the release that started it"
            )
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"sequential test state version {data.get('version')!r} is unknown")
        st = cls(
            tuple(data["bots"]),
            alpha=float(data["alpha"]),
            indifference_elo=float(data["indifference_elo"]),
            min_hands_per_bot=int(data["min_hands_per_bot"]),
            rho=float(data["rho"]),
            looks=int(data["looks"]),
            through=int(data["through"]),
            settled_at=None if data["settled_at"] is None else int(data["settled_at"]),
            last_hands=int(data["last_hands"]),
            history=[(int(h), int(k), int(n)) for h, k, n in data["history"]],
            block_loser_weight=(
                None if data["block_loser_weight"] is None else float(data["block_loser_weight"])
            ),
            gone=tuple(str(b) for b in data.get("gone", ())),
            drop_gone=data.get("drop_gone") is True,
        )
        for p in data["pairs"]:
            key = (str(p["a"]), str(p["b"]))
            if key not in st.pairs:
                raise ValueError(f"sequential test state names an unknown pair {key}")
            if p["status"] not in ("better", "tied", "open"):
                raise ValueError(f"sequential test state: pair {key} has status {p['status']!r}")
            st.pairs[key] = PairState(
                key[0],
                key[1],
                _unnum(p["low"]),
                _unnum(p["high"]),
                p["status"],
                p["claimed_at"],
                bool(p["conflict"]),
                float(p.get("score", 0.0)),
                float(p.get("info", 0.0)),
            )
        return st


def fit_hands(
    results: Sequence[HandResult],
    names: Sequence[str],
    *,
    known_loser_weight: float | None = None,
    bounds: bool = False,
) -> Ratings | None:
    """A cold-started fit (bit-reproducible from the hands alone), with the final table's
    fallback (a N(0, 1000 Elo) prior) when a bot has no finite rating. ``bounds``: a fit that
    needed the prior also gets the final table's one-sided bounds (:attr:`Ratings.side` and
    :attr:`Ratings.bound`, :mod:`uno_tournament.rating_bounds`), so that a reader of the gap
    knows the prior's estimate is an artefact (the new-version test)."""
    for prior in (None, 1000.0):
        try:
            r = fit_plackett_luce(
                results, names, prior_sd_elo=prior, known_loser_weight=known_loser_weight
            )
        except (ValueError, np.linalg.LinAlgError, FloatingPointError):
            continue
        if r.converged and np.all(np.isfinite(r.elo)):
            return with_bounds(r, results) if bounds and prior is not None else r
    return None


def with_bounds(r: Ratings, results: Sequence[HandResult]) -> Ratings:
    """``r`` (a fit of ``results``) with the one-sided bounds of the bots the going-out results
    bound on one side only, centred on the others (unchanged if there are none)."""
    from .rating_bounds import bound_one_sided, going_out_sides
    from .rating_model import Outcomes
    from .ratings_fit import _canonical

    index = {b: i for i, b in enumerate(r.bots)}
    outcomes = Outcomes.from_results(_canonical(results), index, "deal")  # as the fit read them
    side = going_out_sides(outcomes, len(r.bots), r.bots)
    if side.any() and (side == 0).any():
        return bound_one_sided(r, outcomes, side)
    return r


@dataclass(frozen=True)
class BlockFit:
    """One block's fit for :meth:`SettledState.look_block`: the deal-clustered fit and the same
    fit's model-based (Fisher) covariance, ``bread``; a pair's variance is the larger of the
    two (see :func:`fit_block`)."""

    ratings: Ratings
    bread: np.ndarray

    def pair_var(self, i: int, j: int) -> float:
        c, b = self.ratings.cov, self.bread
        return max(
            float(c[i, i] + c[j, j] - 2.0 * c[i, j]), float(b[i, i] + b[j, j] - 2.0 * b[i, j])
        )


def fit_block(
    results: Sequence[HandResult],
    bots: Sequence[str],
    *,
    loser_weight: float | None = None,
) -> BlockFit | None:
    """The per-block fit of :meth:`SettledState.look_block`: :func:`fit_hands` (with its prior
    fallback) over the bots the
    hands seat (in ``bots``' order; a block may leave decided bots out), with

    * ``loser_weight``: the weight of places 2-4 held at this value (the cumulative fit's at
      the look before, :attr:`SettledState.block_loser_weight`) instead of refitted on the
      block's hands alone, where it is barely identified;
    * each pair's variance the larger of the deal-clustered sandwich's and the model-based
      (Fisher information) one. Duplicate deals make the true variance smaller than the
      model-based one, and the sandwich sees that; but a block seats some bots at only a
      table or two, a handful of deals, and a sandwich from so few clusters can collapse. The
      sequential test weighs each block by its inverse variance, so a collapsed one counts
      many times over: in 100 A/A tournaments on pooled engine hands one bot was then "set
      apart" from all the others, and 14 declared an order (0 of 100 with this rule; 0 of 200
      in the full ``make bench-settled``, docs/tournaments.md).
    """
    seated = {f.bot for r in results for f in r.finishes}
    present = tuple(b for b in bots if b in seated)
    if len(present) < 2:
        return None
    r = fit_hands(results, present, known_loser_weight=loser_weight)
    if r is None:
        return None
    try:  # the same fit's model-based covariance: started at its maximum, one step
        plain = fit_plackett_luce(
            results,
            present,
            prior_sd_elo=r.prior_sd_elo,
            known_loser_weight=loser_weight,
            cluster=None,
            start=r.params,
        )
    except (ValueError, np.linalg.LinAlgError, FloatingPointError):
        return None
    if not (plain.converged and np.all(np.isfinite(plain.cov))):
        return None
    return BlockFit(r, plain.cov)


_fit = fit_hands
"""The old name (imported by :mod:`uno_tournament.settled_run`)."""


def advance(
    state: SettledState,
    plan_ids: Sequence[str],
    stored: Mapping[str, HandResult | None],
    look_every: int,
    *,
    by_block: bool = False,
) -> list[SettledDecision]:
    """Take every look that is due and return their decisions (oldest first).

    ``by_block`` (for a plan whose blocks are chosen from earlier hands, as
    :mod:`uno_tournament.adaptive` does, with ``look_every`` = a block's hands): each look also
    fits the new hands alone and updates the pairs with :meth:`SettledState.look_block`; the
    cumulative fit gives the ranking. Without it each look uses the cumulative fit
    (:meth:`SettledState.look`), valid for a plan fixed in advance.

    Look ``k`` is taken on exactly the first ``k * look_every`` hands of the plan's order (the
    last one on the whole plan), once every one of them is in ``stored`` (``None``: stored but
    left out of the ratings by the forfeit policy). The looks are therefore a function of the
    stored hands alone, not of when they arrived: a run resumed after kill -9 from a saved
    state, or another process reading the same store, takes the same looks and reaches the
    same decisions. Nothing is looked at after the look that settled the ranking."""
    if look_every < 1:
        raise ValueError("look_every must be at least 1")
    out: list[SettledDecision] = []
    while state.settled_at is None and state.through < len(plan_ids):
        upto = min(state.through + look_every, len(plan_ids))
        prefix = plan_ids[:upto]
        if any(h not in stored for h in prefix):
            break
        results = [r for h in prefix if (r := stored[h]) is not None]
        per_bot = dict.fromkeys(state.bots, 0)
        for r in results:
            for f in r.finishes:
                if f.bot in per_bot:
                    per_bot[f.bot] += 1
        new_results = [r for h in plan_ids[state.through : upto] if (r := stored[h]) is not None]
        state.through = upto
        if state.drop_gone:
            # a bot the stand-in played at every seat it had in these hands (given up on, under
            # forfeit "exclude") is left out of the ranking and the first looks' hand count
            # until hands rate it again: its count would stay below min_hands_per_bot, or its
            # pairs open, for ever, and the run would take no look to its budget (an examination)
            rated_now = {f.bot for r in new_results for f in r.finishes}
            out_now = {b for r in new_results for b in r.excluded}
            gone = (set(state.gone) | out_now) - rated_now
            state.gone = tuple(b for b in state.bots if b in gone)
        # a bot with no rated hand so far (its every seat played by the stand-in, which the
        # forfeit policy "exclude" leaves out) has no rating: left out of the fit and the
        # ranking, not given the fit's arbitrary value for a bot it never saw (an examination's
        # bot that crashed at once was "ranked first", and every look was skipped for it)
        rated = tuple(b for b in state.bots if per_bot[b] > 0)
        fitted = fit_hands(results, rated) if len(rated) >= 2 else None
        if fitted is None:
            ranking = tuple(state.bots)
            out.append(
                SettledDecision(
                    upto, ranking, state._adjacent(ranking), False, "no usable fit; look skipped"
                )
            )
            continue
        if by_block:
            dec = state.look_next_block(new_results, fitted, upto, per_bot)
        else:
            dec = state.look(fitted, per_bot)
        out.append(dec)
        if dec.settled:
            state.settled_at = upto
    return out


def left_out(st: SettledState, ranking: Sequence[str]) -> str:
    """The stop line's note on the bots the looks left out: no rated hand at all, or none since
    the stand-in took every seat of theirs (forfeit "exclude" leaves its seats out)."""
    why = {False: "no rated hand, every seat", True: "every later seat"}
    words = [
        f"{', '.join(out)} left out: {why[g]} played by the stand-in" + " (given up on)" * g
        for g in (False, True)
        if (out := [b for b in st.bots if b not in ranking and (b in st.gone) == g])
    ]
    return f" ({'; '.join(words)})" if words else ""


def stop_line(decision: SettledDecision, *, budget_reached: bool) -> str:
    """The run's last word on the sequential test: ``stopped: settled (7 of 7 pairs decided)``,
    ``stopped: budget, 2 pairs open: a~b, c~d`` or ``running: 5 of 7 pairs decided, ...``."""
    n = len(decision.adjacent)
    if decision.settled:
        return f"stopped: settled ({n} of {n} pairs decided)"
    opened = decision.open_pairs
    if budget_reached:
        pairs = "pair" if len(opened) == 1 else "pairs"
        return f"stopped: budget, {len(opened)} {pairs} open: {', '.join(opened)}"
    return f"running: {decision.summary()}"
