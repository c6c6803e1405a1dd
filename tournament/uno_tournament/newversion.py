"""The new-version test: is NEW better than OLD by ``delta1`` Elo, or not better than ``delta0``?

The SPRT users know from fastchess and cutechess, in a four-seat field. Both versions play
against a field of other bots (:func:`newversion_tables` seats NEW and OLD at every table, so
every hand compares them directly on the same cards, with two field bots in turn); after every
refit the runner hands the fitted :class:`~uno_tournament.ratings.Ratings` to
:meth:`NewVersionState.look`, which returns ``"H1"`` (NEW is better by ``delta1``), ``"H0"`` (NEW is
not better than ``delta0``) or ``"continue"``.

API (for the runner)
--------------------
* ``NewVersionState(candidate, baseline, delta0=0.0, delta1=10.0, alpha=0.05, beta=0.05,
  min_hands=96, max_hands=0)``; :meth:`~NewVersionState.to_dict` /
  :meth:`~NewVersionState.from_dict` (JSON; a resumed run continues the same test);
* :meth:`~NewVersionState.look` ``(ratings) -> NewVersionDecision`` (the decision is final once
  it is ``H0`` or ``H1``; later looks return it unchanged); the budget gives ``"budget"``;
* :meth:`~NewVersionState.progress_line` -> ``"LLR: 1.23 (-2.94, 2.94) [0.00, 10.00]"``, as
  fastchess prints it, followed by the fitted gap and the hands;
* :func:`newversion_tables` ``(candidate, baseline, field, n_tables, block, seed)``: the tables of a
  block (pass them to :func:`uno_tournament.adaptive.block_hands`).

Method: a generalized SPRT on the fitted gap in information time
----------------------------------------------------------------
With ``d_hat = elo[NEW] - elo[OLD]`` from the Plackett-Luce fit and ``t = 1 / se**2`` its
information (the deal-clustered sandwich), the score ``S = d_hat * t`` is, asymptotically, a
Brownian motion with drift ``d`` in ``t`` (the canonical joint distribution of sequential
maximum-likelihood estimates; the same picture as :mod:`uno_tournament.settled`). The log
likelihood ratio of drift ``delta1`` against drift ``delta0`` of that process is::

    LLR = (delta1 - delta0) * (S - (delta0 + delta1) / 2 * t)
        = (delta1 - delta0) * t * (d_hat - (delta0 + delta1) / 2)

and Wald's bounds ``A = log(beta / (1 - alpha))``, ``B = log((1 - beta) / alpha)`` stop the test:
``LLR >= B`` accepts H1, ``LLR <= A`` accepts H0. This is what fastchess does with the normalized
Elo of pentanomial counts (there the statistic is the pentanomial mean and its variance); here the
statistic is the fitted gap, which takes the seats, the deal and the other two bots at the table
out of the comparison. Wald's bounds hold for a process looked at continuously; looking once a
block only makes the test stop a little later (overshoot), which lowers both error rates. At
``max_hands`` the test stops undecided (a truncated SPRT), and says so.

Why its plan is fixed (no scheduling for information)
-----------------------------------------------------
The issue's scheduling for information sends each block to the pairs still open. A new-version
test has one question, the NEW-OLD gap, and its plan already gives that pair all the direct
information a table can: NEW and OLD sit at every table of every block, on the same cards. What
an adaptive plan could still choose is which two field bots join them, which changes the
information about the gap only through the indirect comparisons (a few per cent). It would cost
the validity argument above: the GSPRT reads the **cumulative** fit, whose ``d_hat * t`` is a
martingale in information time for a plan fixed in advance but not when the tables follow the
data (:mod:`uno_tournament.settled` found the share of false claims rising several-fold under
adaptive tables, and had to combine per-block fits). So the plan stays fixed, and
``--candidate/--baseline`` needs no recorded block tables (its sequential record has none).

When the results bound a rating on one side only
------------------------------------------------
A candidate that crashes on every decision under the "last" forfeit policy never goes out first:
maximum likelihood puts it at minus infinity, and the prior that keeps the fit finite gives a gap
whose standard error is the prior's, so the LLR stayed near 0 and an examination's crashing
candidate ended "budget, undecided (LLR -0.39)" after 480 forfeited hands. There is no gap for
the LLR to use then, but there are limits: the one-sided 97.5% bound of the one-sided bot
(:mod:`uno_tournament.rating_bounds`) and the 95% interval's end of the other, whose difference
bounds the gap on one side with at most 5% error (:meth:`Ratings.diff_ci`). The test accepts H0
when that upper limit of the gap is at most ``delta0``, H1 when the lower limit is at least
``delta1``, and otherwise plays on; only if the error asked of that decision (beta for H0, alpha
for H1) is at least :data:`BOUND_ERROR`. The bound falls as one-sided hands accumulate, and the
bot leaves the one-sided state for good the first time it goes out ahead, so the looks add
little to that error. The stop line says the decision came from the bound, not the LLR.

When the gap is far outside ``[delta0, delta1]``
------------------------------------------------
The LLR is the quadratic picture of the likelihood near the two hypotheses; far from them it can
stall. A candidate given up on after a few good hands (restarted, crashed, a stand-in playing
each of its seats as a forfeit) is last in almost every hand: its fitted rating runs away and
its information shrinks with it (a bot that is always last says little about *how* bad it is),
so ``(gap - mid) / se**2`` stops growing. An examination's candidate stood at a gap of -599 Elo
(standard error 58) with the LLR stuck at -1.8 for 1,500 hands, and the run ended "undecided".
So each look also reads the gap's **confidence sequence** (the normal mixture of
:mod:`uno_tournament.settled`, valid at every look at once): H0 is accepted when its upper limit
is at most ``delta0``, H1 when its lower limit is at least ``delta1``. Each side is taken at
:data:`SEQUENCE_SHARE` of the error asked of it (beta for H0, alpha for H1), so in the worst case
the two rules together err at most ``1.05 x`` the SPRT's own rate. Near the hypotheses the
SPRT decides first; a gap of a hundred Elo or more beyond them the sequence may decide sooner,
which is what it is for. The stop line says which
rule decided. (A state recorded before this rule has ``sequence`` false and is continued, and
verified, without it.)

``make bench-settled`` checks the operating characteristic on engine-played hands: the share of
tests that accept H1 when the true gap is ``delta0`` (at most alpha), the share that accept H0 when
it is ``delta1`` (at most beta), and the mean hands against a fixed-size run of the same power
(``t_fixed = ((z_alpha + z_beta) / (delta1 - delta0))**2``, one-sided).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .rating_model import HandResult, Ratings
from .settled import half_width, tune_rho

__all__ = [
    "NewVersionDecision",
    "NewVersionState",
    "fixed_information",
    "newversion_tables",
    "no_rated_note",
    "stop_line_of",
]

Verdict = Literal["H0", "H1", "continue", "budget"]
BOUND_ERROR = 0.05
"""The error of a decision taken from one-sided limits (two 2.5% ends): taken only when the error
asked of it (beta for H0, alpha for H1) is at least this."""
SEQUENCE_SHARE = 0.05
"""The share of the error asked of a decision (beta for H0, alpha for H1) given to the
confidence sequence that decides a gap far outside ``[delta0, delta1]`` (see the module
docstring)."""
SEQUENCE_TIGHTEST = 200.0
"""Elo: the sequence is tightest where its half-width is this (fixed before any hand, so any
value is valid). The rule is for gaps far outside ``[delta0, delta1]``, seen with little
information (standard errors of 50-150 Elo); near the hypotheses the SPRT decides first."""
STATE_VERSION = 1
SEATS = 4


def _upper_quantile(p: float) -> float:
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(mid / math.sqrt(2.0)) > p:
            lo = mid
        else:
            hi = mid
    return hi


def fixed_information(delta0: float, delta1: float, alpha: float, beta: float) -> float:
    """Information (1/Elo^2) a single-look, one-sided z test of ``d <= delta0`` against
    ``d >= delta1`` needs for errors alpha and beta: ``((z_alpha + z_beta) / (delta1 -
    delta0))**2``."""
    z = _upper_quantile(alpha) + _upper_quantile(beta)
    return (z / (delta1 - delta0)) ** 2


@dataclass(frozen=True)
class NewVersionDecision:
    verdict: Verdict
    llr: float
    hands: int
    gap: float
    se: float
    looked: bool

    @property
    def done(self) -> bool:
        return self.verdict != "continue"


@dataclass
class NewVersionState:
    """The whole state of one new-version test (JSON through :meth:`to_dict`)."""

    candidate: str
    baseline: str
    delta0: float = 0.0
    delta1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    min_hands: int = 96
    """Hands before the first look (the Gaussian picture is asymptotic)."""
    max_hands: int = 0
    """The budget (0: none)."""
    llr: float = 0.0
    gap: float = math.nan
    se: float = math.nan
    hands: int = 0
    looks: int = 0
    verdict: Verdict = "continue"
    decided_at: int | None = None
    bounded: str = ""
    """At the last look, why the results bound the gap on one side only ('' if they did not:
    the LLR was taken)."""
    low: float = math.nan
    """At the last look, if :attr:`bounded`: the gap's lower limit (Elo; -inf if none)."""
    high: float = math.nan
    """At the last look, if :attr:`bounded`: the gap's upper limit (Elo; +inf if none)."""
    unrated: str = ""
    """At the last look due, the candidate or baseline that had no rated hand (every seat of it
    played by the stand-in, left out under forfeit "exclude"): no look was taken."""
    sequence: bool = True
    """The rules of 2026-12-06: the gap's confidence sequence decides too (see the module
    docstring), and a candidate or baseline given up on stops the test (:func:`given_up`);
    False in a state recorded before them, which continues without them."""
    limit: float = math.nan
    """If the confidence sequence decided: its limit of the gap that did (Elo; the upper for
    H0, the lower for H1)."""
    gone: str = ""
    """The candidate or baseline the test stopped for, undecided: given up on (see
    :func:`given_up`)."""

    def __post_init__(self) -> None:
        if not self.candidate or not self.baseline or self.candidate == self.baseline:
            raise ValueError("candidate and baseline must be two different bots")
        if not (math.isfinite(self.delta0) and math.isfinite(self.delta1)):
            raise ValueError("delta0 and delta1 must be finite")
        if not self.delta1 > self.delta0:
            raise ValueError(f"delta1 ({self.delta1:g}) must exceed delta0 ({self.delta0:g})")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0.0 < v < 0.5:
                raise ValueError(f"{name} must be within (0, 0.5), got {v}")
        if self.min_hands < 0 or self.max_hands < 0:
            raise ValueError("min_hands and max_hands must be at least 0")

    @property
    def lower(self) -> float:
        """Wald's lower bound, ``log(beta / (1 - alpha))``: at or below it, H0."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Wald's upper bound, ``log((1 - beta) / alpha)``: at or above it, H1."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr_of(self, gap: float, se: float) -> float:
        t = 1.0 / se**2
        return (self.delta1 - self.delta0) * t * (gap - (self.delta0 + self.delta1) / 2.0)

    def look(self, ratings: Ratings) -> NewVersionDecision:
        """Update from a refit and decide (a decision already made stands)."""
        if self.verdict in ("H0", "H1"):
            return self._decision(False)
        hands = int(ratings.n_hands)
        try:
            i, j = ratings.index(self.candidate), ratings.index(self.baseline)
        except (ValueError, KeyError) as exc:
            raise ValueError("the fit does not rate both the candidate and the baseline") from exc
        gap = float(ratings.elo[i] - ratings.elo[j])
        var = float(ratings.cov[i, i] + ratings.cov[j, j] - 2.0 * ratings.cov[i, j])
        # a rating the results bound on one side only has no estimate for the LLR to use: its
        # limits decide, or the test plays on (see the module docstring)
        sides = ratings.sides
        if hands >= self.min_hands and (sides[i] or sides[j]):
            return self._look_bounded(ratings, hands, int(sides[i]), int(sides[j]))
        if hands < self.min_hands or not (math.isfinite(gap) and var > 0 and math.isfinite(var)):
            self.hands = hands
            if self.max_hands and hands >= self.max_hands:
                self.verdict, self.decided_at = "budget", hands
            return self._decision(False)
        self.bounded, self.low, self.high = "", math.nan, math.nan
        self.gap, self.se, self.hands = gap, math.sqrt(var), hands
        self.llr = self.llr_of(gap, self.se)
        self.looks += 1
        low, high = self.sequence_limits(gap, self.se)
        if self.llr >= self.upper:
            self.verdict, self.decided_at = "H1", hands
        elif self.llr <= self.lower:
            self.verdict, self.decided_at = "H0", hands
        elif high <= self.delta0:
            self.verdict, self.decided_at, self.limit = "H0", hands, high
        elif low >= self.delta1:
            self.verdict, self.decided_at, self.limit = "H1", hands, low
        elif self.max_hands and hands >= self.max_hands:
            self.verdict, self.decided_at = "budget", hands
        return self._decision(True)

    def sequence_limits(self, gap: float, se: float) -> tuple[float, float]:
        """The gap's confidence-sequence limits at this look: the lower at ``SEQUENCE_SHARE x
        alpha``, the upper at ``SEQUENCE_SHARE x beta`` (``(-inf, inf)`` without the rule)."""
        if not self.sequence:
            return -math.inf, math.inf
        t = 1.0 / se**2
        out = []
        for error in (self.alpha, self.beta):
            a = SEQUENCE_SHARE * error
            out.append(half_width(t, tune_rho(a, SEQUENCE_TIGHTEST), a))
        return gap - out[0], gap + out[1]

    def _look_bounded(
        self, ratings: Ratings, hands: int, side_new: int, side_old: int
    ) -> NewVersionDecision:
        """A look at a fit in which the candidate's or the baseline's rating is bounded on one
        side only: the gap's limits decide (H0 if the upper is at most ``delta0``, H1 if the
        lower is at least ``delta1``), or the test plays on."""
        _, low, high = ratings.diff_ci(self.candidate, self.baseline)
        why = []
        for name, side in ((self.candidate, side_new), (self.baseline, side_old)):
            if side < 0:
                why.append(f"{name} never went out ahead of the others")
            elif side > 0:
                why.append(f"{name} went out ahead of the others whenever they met")
        self.hands, self.gap, self.se = hands, math.nan, math.nan
        self.bounded = "; ".join(why)
        self.low = low if not math.isnan(low) else -math.inf
        self.high = high if not math.isnan(high) else math.inf
        self.looks += 1
        if self.high <= self.delta0 and self.beta >= BOUND_ERROR:
            self.verdict, self.decided_at = "H0", hands
        elif self.low >= self.delta1 and self.alpha >= BOUND_ERROR:
            self.verdict, self.decided_at = "H1", hands
        elif self.max_hands and hands >= self.max_hands:
            self.verdict, self.decided_at = "budget", hands
        return self._decision(True)

    def limits_text(self) -> str:
        """The one-sided look's words: ``new never went out ahead of the others: the gap is at
        most -85.2 Elo``."""
        if self.high < math.inf and self.low > -math.inf:
            span = f"within [{self.low:+.1f}, {self.high:+.1f}] Elo"
        elif self.high < math.inf:
            span = f"at most {self.high:+.1f} Elo"
        elif self.low > -math.inf:
            span = f"at least {self.low:+.1f} Elo"
        else:
            span = "not bounded either way"
        return f"{self.bounded}: the gap is {span}, one-sided limits at 95%, no LLR"

    def limits_note(self) -> str:
        """Why one-sided limits have not decided though they could: ``these limits decide only
        when alpha >= 0.05, this run's is 0.01`` ('' when the LLR was read, or the error asked
        of the decision the limits point to allows it)."""
        if not self.bounded:
            return ""
        errors = {"alpha": self.alpha, "beta": self.beta}
        if self.high <= self.delta0:
            asked = ["beta"]  # the limits point to H0
        elif self.low >= self.delta1:
            asked = ["alpha"]
        else:
            asked = ["alpha", "beta"]
        low = [n for n in asked if errors[n] < BOUND_ERROR]
        if not low:
            return ""
        name = low[0] if self.alpha != self.beta else "alpha"
        return (
            f"these limits decide only when {name} >= {BOUND_ERROR:g}, this run's is "
            f"{errors[name]:g}"
        )

    def hands_to_decide(self, hands: int) -> float | None:
        """Hands past ``hands`` (the last look's) until the LLR reaches the bound it moves
        towards, at the last look's gap and information per hand; None without an LLR."""
        mid = (self.delta0 + self.delta1) / 2.0
        if self.bounded or not (math.isfinite(self.gap) and math.isfinite(self.se)):
            return None
        if self.gap == mid:
            return None
        bound = self.upper if self.gap > mid else self.lower
        t_need = bound / ((self.delta1 - self.delta0) * (self.gap - mid))
        return max(0.0, hands * t_need * self.se**2 - hands)

    def budget_hint(self) -> str:
        """Why a gap far outside ``[delta0, delta1]`` ran to the budget undecided (more than
        that interval's width beyond it), and what would decide it: '' otherwise."""
        width = self.delta1 - self.delta0
        if self.verdict != "budget" or self.bounded or not math.isfinite(self.gap):
            return ""
        if self.delta0 - width < self.gap < self.delta1 + width:
            return ""
        margin = 1.959964 * self.se  # only a gap whose 95% interval is outside too is "far"
        if self.delta0 - margin <= self.gap <= self.delta1 + margin:
            return ""
        more = self.hands_to_decide(self.hands)
        h1 = self.gap > self.delta1
        side = f"beyond delta1 = {self.delta1:g}" if h1 else f"below delta0 = {self.delta0:g}"
        name = "log((1-beta)/alpha)" if h1 else "log(beta/(1-alpha))"
        bound = self.upper if h1 else self.lower
        rate = f", about {math.ceil(more)} more hands at this rate" if more is not None else ""
        return (
            f"the gap {self.gap:+.0f} Elo is far {side}, but the GSPRT weighs delta1 = "
            f"{self.delta1:g} against delta0 = {self.delta0:g}: its LLR, (delta1 - delta0) x "
            f"(gap - (delta0 + delta1)/2) / se^2, must still reach {name} = {bound:.2f}{rate}; "
            "a larger delta1 (indifference_elo) decides sooner"
        )

    def _decision(self, looked: bool) -> NewVersionDecision:
        return NewVersionDecision(self.verdict, self.llr, self.hands, self.gap, self.se, looked)

    def progress_line(self) -> str:
        """``LLR: 1.23 (-2.94, 2.94) [0.00, 10.00]`` and the gap with its 95% margin, as
        fastchess prints them."""
        line = (
            f"LLR: {self.llr:.2f} ({self.lower:.2f}, {self.upper:.2f}) "
            f"[{self.delta0:.2f}, {self.delta1:.2f}]"
        )
        if self.bounded:
            line = f"{self.candidate} - {self.baseline}: {self.limits_text()}"
            note = self.limits_note()
            line += f" ({note})" if note else ""
        elif self.unrated:
            line += f", {self.unrated}: no rated hand (every seat played by the stand-in)"
        elif math.isfinite(self.gap):
            # the margin of a 95% interval, as fastchess's "Elo: x +/- y" (it was one standard
            # error, under a line the docs called fastchess's)
            ci = 1.959964 * self.se
            line += f", {self.candidate} - {self.baseline}: {self.gap:+.1f} +- {ci:.1f} Elo (95%)"
        line += f", {self.hands} hands"
        if self.verdict == "H1":
            line += f": H1 accepted, {self.candidate} is better by {self.delta1:g}"
        elif self.verdict == "H0":
            line += f": H0 accepted, {self.candidate} is not better than {self.delta0:g}"
        elif self.verdict == "budget" and self.gone:
            line += f": stopped, undecided: {self.gone} given up on"
        elif self.verdict == "budget":
            line += ": budget reached, undecided"
        if self.verdict in ("H0", "H1") and not math.isnan(self.limit):
            line += " (by the gap's confidence sequence)"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "method": "GSPRT on the fitted gap in information time, Wald bounds",
            "candidate": self.candidate,
            "baseline": self.baseline,
            "delta0": self.delta0,
            "delta1": self.delta1,
            "alpha": self.alpha,
            "beta": self.beta,
            "min_hands": self.min_hands,
            "max_hands": self.max_hands,
            "llr": self.llr,
            "gap": None if math.isnan(self.gap) else self.gap,
            "se": None if math.isnan(self.se) else self.se,
            "hands": self.hands,
            "looks": self.looks,
            "verdict": self.verdict,
            "decided_at": self.decided_at,
            "bounded": self.bounded,
            "low": _finite_or_text(self.low),
            "high": _finite_or_text(self.high),
            "unrated": self.unrated,
            "sequence": self.sequence,
            "limit": _finite_or_text(self.limit),
            "gone": self.gone,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NewVersionState:
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"new-version test state version {data.get('version')!r} is unknown")
        if data.get("verdict") not in ("H0", "H1", "continue", "budget"):
            raise ValueError(f"new-version test state: verdict {data.get('verdict')!r}"[:120])
        return cls(
            str(data["candidate"]),
            str(data["baseline"]),
            delta0=float(data["delta0"]),
            delta1=float(data["delta1"]),
            alpha=float(data["alpha"]),
            beta=float(data["beta"]),
            min_hands=int(data["min_hands"]),
            max_hands=int(data["max_hands"]),
            llr=float(data["llr"]),
            gap=math.nan if data["gap"] is None else float(data["gap"]),
            se=math.nan if data["se"] is None else float(data["se"]),
            hands=int(data["hands"]),
            looks=int(data["looks"]),
            verdict=data["verdict"],
            decided_at=None if data["decided_at"] is None else int(data["decided_at"]),
            bounded=str(data.get("bounded") or ""),
            low=_float_of(data.get("low")),
            high=_float_of(data.get("high")),
            unrated=str(data.get("unrated") or ""),
            sequence=data.get("sequence") is True,
            limit=_float_of(data.get("limit")),
            gone=str(data.get("gone") or ""),
        )


def no_rated_note(nv: NewVersionState) -> str:
    """The note of a look not taken because the candidate or the baseline has no rated hand."""
    return (
        f"{nv.unrated} has no rated hand (every seat played by the stand-in, which forfeit "
        '"exclude" leaves out of the ratings); no look taken'
    )


def _by(delta0: float) -> str:
    """ " by 5 Elo", or nothing for 0 ("not better than old by 0 Elo" read oddly)."""
    return f" by {delta0:g} Elo" if delta0 else ""


def stop_line_of(nv: NewVersionState, at: int | None) -> str:
    """The run's stop line for the test's verdict (``at``: the hands at the decision)."""
    if nv.bounded:  # the last look's fit bounded the gap on one side only: its limits spoke
        if nv.verdict == "H1":
            head = f"H1 accepted, {nv.candidate} is better than {nv.baseline} by {nv.delta1:g} Elo"
        elif nv.verdict == "H0":
            head = f"H0 accepted, {nv.candidate} is not better than {nv.baseline}{_by(nv.delta0)}"
        else:
            head, at = "budget, undecided", nv.hands
        return f"stopped: {head} ({nv.limits_text()}) after {at} hands"
    if nv.verdict in ("H0", "H1") and not math.isnan(nv.limit):
        return f"stopped: {_sequence_words(nv)} after {at} hands"
    if nv.verdict == "H1":
        return (
            f"stopped: H1 accepted, {nv.candidate} is better than {nv.baseline} by "
            f"{nv.delta1:g} Elo (LLR {nv.llr:.2f} >= {nv.upper:.2f}) after {at} hands"
        )
    if nv.verdict == "H0":
        return (
            f"stopped: H0 accepted, {nv.candidate} is not better than {nv.baseline}"
            f"{_by(nv.delta0)} (LLR {nv.llr:.2f} <= {nv.lower:.2f}) after {at} hands"
        )
    if nv.gone:
        return (
            f"stopped: undecided: {nv.gone} given up on (the stand-in played every seat of it in "
            'the last look\'s hands, which forfeit "exclude" leaves out), so no later hand can '
            f"move the test (LLR {nv.llr:.2f} within ({nv.lower:.2f}, {nv.upper:.2f})) after "
            f"{at} hands"
        )
    if nv.unrated:
        return f"stopped: budget, undecided: {no_rated_note(nv)} after {nv.hands} hands"
    return (
        f"stopped: budget, undecided (LLR {nv.llr:.2f} within ({nv.lower:.2f}, "
        f"{nv.upper:.2f})) after {nv.hands} hands"
    )


def given_up(nv: NewVersionState, hands: Sequence[HandResult]) -> str:
    """The candidate or the baseline (", "-joined) that the stand-in played at every seat it had
    in ``hands`` (a look's new hands), which forfeit "exclude" leaves out: given up on, so no
    later hand can move the test ('' if none; always '' for a state recorded before this rule,
    :attr:`NewVersionState.sequence`). An examination's candidate, given up on after 145 hands,
    was played to the budget of 480, "about 3600 hands still expected" and growing."""
    if not nv.sequence:
        return ""
    rated = {f.bot for r in hands for f in r.finishes}
    out = {b for r in hands for b in r.excluded}
    return ", ".join(b for b in (nv.candidate, nv.baseline) if b in out and b not in rated)


def gone_stop(nv: NewVersionState, gone: str, at: int) -> dict[str, Any]:
    """The stop of a test whose candidate or baseline was given up on (:func:`given_up`)."""
    nv.gone, nv.verdict, nv.decided_at = gone, "budget", nv.hands
    return {"reason": "given_up", "hands": at, "line": stop_line_of(nv, at)}


def _elo(x: float) -> str:
    """A limit in Elo, with a decimal near 0 (an examination read "at most -0 Elo")."""
    return f"{x:+.1f}" if abs(x) < 9.95 else f"{x:+.0f}"


def _sequence_words(nv: NewVersionState) -> str:
    """A decision of the confidence sequence, in words."""
    if nv.verdict == "H0":
        head = f"H0 accepted, {nv.candidate} is not better than {nv.baseline}{_by(nv.delta0)}"
        side, error = f"at most {_elo(nv.limit)}", SEQUENCE_SHARE * nv.beta
    else:
        head = f"H1 accepted, {nv.candidate} is better than {nv.baseline} by {nv.delta1:g} Elo"
        side, error = f"at least {_elo(nv.limit)}", SEQUENCE_SHARE * nv.alpha
    return (
        f"{head} (the gap, {nv.gap:+.0f} Elo, is {side} Elo by its confidence sequence at "
        f"{error:g}; the LLR, {nv.llr:.2f}, stalls this far from delta0 and delta1)"
    )


def _finite_or_text(x: float) -> float | str | None:
    """A limit for JSON: the number, "inf"/"-inf", or None for NaN (no limit taken)."""
    if math.isnan(x):
        return None
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _float_of(v: Any) -> float:
    """:func:`_finite_or_text`'s inverse (``float`` reads "inf" and "-inf")."""
    return math.nan if v is None else float(v)


def newversion_tables(
    candidate: str,
    baseline: str,
    field: Sequence[str],
    n_tables: int,
    block: int,
    seed: int,
) -> list[tuple[str, ...]]:
    """The tables of block ``block``: NEW and OLD at every table with two field bots, the
    field's pairs in a seeded order that changes every block and covers every pair once before
    any repeats (so every field bot plays as often as the others, give or take a table)."""
    others = list(dict.fromkeys(field))
    if candidate in others or baseline in others or candidate == baseline:
        raise ValueError("the field must not contain the candidate or the baseline")
    if len(others) < 2:
        raise ValueError("the field needs at least two bots")
    if n_tables < 1 or block < 0:
        raise ValueError("n_tables must be at least 1 and block at least 0")
    pairs = list(itertools.combinations(others, 2))
    digest = hashlib.sha256(f"newversion/{seed}".encode()).digest()
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(pairs)
    start = block * n_tables
    return [(candidate, baseline, *pairs[(start + k) % len(pairs)]) for k in range(n_tables)]
