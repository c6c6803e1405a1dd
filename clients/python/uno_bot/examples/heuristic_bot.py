"""A rule-of-thumb player written against the protocol view only (like the Go, TypeScript, Rust
and Java examples):

* UNO window: catch the offender when it can, else answer NO_CATCH (play goes on sooner);
  its own late UNO: call it;
* a Wild Draw Four played on it: challenge when its player still holds three cards or more (a
  bluff is then likely), else accept;
* a Wild flipped first, or a Wild it plays: name the colour it holds most;
* otherwise play rather than draw: the UNO call with a play that leaves one card; coloured cards
  before Wilds before Wild Draw Fours, higher-scoring cards first; but when an opponent is down
  to two cards or fewer, the highest-scoring card first (dump points before the hand ends);
* never bluff: a Wild Draw Four only without a card of the active colour;
* under seven-o, swap hands with the seat holding fewest cards;
* a jump-in chance: take it when it has the card; nothing to play: draw, pass or accept.

Chaos flags (for the cross-language chaos test): ``--overrun-every N --overrun-ms MS`` makes every
Nth decision sleep MS ms before answering, overrunning its deadline on purpose; the SDK then
answers the fallback in time. Both default to 0 (off).

Run::

    python -m uno_bot.examples.heuristic_bot --addr 127.0.0.1:50051 --token T --name py-heuristic
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import Counter
from collections.abc import Sequence

from uno_bot import (
    Bot,
    DecisionRequest,
    MatchState,
    card_points,
    configure_logging,
    fallback_action,
    parse_args,
)
from uno_bot.proto import bot_pb2, cards_pb2, game_pb2
from uno_bot.sdk import fail, run_main

COLORS = (cards_pb2.COLOR_RED, cards_pb2.COLOR_YELLOW, cards_pb2.COLOR_GREEN, cards_pb2.COLOR_BLUE)
WILD_RANKS = (cards_pb2.RANK_WILD, cards_pb2.RANK_WILD_DRAW_FOUR)
ATTACKS = (cards_pb2.RANK_SKIP, cards_pb2.RANK_DRAW_TWO, cards_pb2.RANK_WILD_DRAW_FOUR)
LOW = 2
"""An opponent with this many cards or fewer may go out soon."""


def favourite_color(hand: Sequence[cards_pb2.Card]) -> int:
    """The colour the hand holds most (Wilds not counted); ties and an all-Wild hand go to the
    first in red, yellow, green, blue order."""
    counts = Counter(c.color for c in hand if c.color in COLORS)
    return max(COLORS, key=lambda c: (counts[c], -COLORS.index(c)))


def best_play(request: DecisionRequest) -> game_pb2.LegalAction | None:
    """The preferred legal card play, or None if there is none the bot wants to make."""
    view = request.view
    counts = Counter(c.color for c in view.hand)
    fav = favourite_color(view.hand)
    cards_of = {s.seat: s.card_count for s in view.seats}
    n = max(len(view.seats), 1)
    step = -1 if view.direction == game_pb2.DIRECTION_DECREASING else 1
    next_low = 0 < cards_of.get((view.seat + step) % n, 99) <= LOW
    someone_low = any(0 < s.card_count <= LOW for s in view.seats if s.seat != view.seat)
    best: tuple[tuple[int, ...], game_pb2.LegalAction] | None = None
    for a in request.legal_actions:
        if a.kind != game_pb2.ACTION_KIND_PLAY:
            continue
        card = a.card
        if card.rank == cards_pb2.RANK_WILD_DRAW_FOUR and counts[view.active_color] > 0:
            continue  # it would be a bluff
        if card.rank in WILD_RANKS and a.color != fav:
            continue  # name the colour held most
        wild = card.rank in WILD_RANKS
        attack = card.rank in ATTACKS and next_low  # stop the next seat going out
        # keep Wilds for later; among coloured cards play from the colour held most, so that
        # the lone cards of other colours stay as ways out
        keep = 0 if wild else 1 + counts[card.color]
        points = card_points(card)
        target = -cards_of.get(a.target_seat, 0) if a.HasField("target_seat") else 0
        if someone_low:  # dump points before somebody goes out
            key = (int(a.uno), int(attack), points, keep, target)
        else:
            key = (int(a.uno), int(attack), keep, points, target)
        if best is None or key > best[0]:
            best = (key, a)
    return None if best is None else best[1]


def bluff_likely(view: game_pb2.SeatView) -> bool:
    """Whether the Wild Draw Four just played on this seat was likely a bluff: its player held
    three cards or more after it, so probably one of the colour it replaced. A failed challenge
    costs 2 more cards than accepting, a caught bluff saves 4."""
    penalty = view.pending_penalty
    if not penalty.HasField("offender"):
        return False
    held = {s.seat: s.card_count for s in view.seats}
    return held.get(penalty.offender, 0) >= 3


def choose(request: DecisionRequest) -> int | None:
    """The heuristic's action id for ``request``; None to leave an optional request alone."""
    legal = request.legal_actions

    def first(*kinds: int) -> int | None:
        for kind in kinds:
            for a in legal:
                if a.kind == kind:
                    return a.id
        return None

    prompt = request.prompt
    if prompt == bot_pb2.PROMPT_UNO_WINDOW:
        return first(game_pb2.ACTION_KIND_CATCH, game_pb2.ACTION_KIND_NO_CATCH)
    if prompt == bot_pb2.PROMPT_LATE_UNO:
        return first(game_pb2.ACTION_KIND_CALL_UNO)
    if prompt == bot_pb2.PROMPT_WILD_DRAW_FOUR:
        answer = first(
            game_pb2.ACTION_KIND_CHALLENGE
            if bluff_likely(request.view)
            else game_pb2.ACTION_KIND_ACCEPT,
            game_pb2.ACTION_KIND_ACCEPT,
        )
        if answer is not None:
            return answer
    if prompt == bot_pb2.PROMPT_CHOOSE_COLOR:
        fav = favourite_color(request.view.hand)
        for a in legal:
            if a.kind == game_pb2.ACTION_KIND_CHOOSE_COLOR and a.color == fav:
                return a.id
    play = best_play(request)
    if play is not None:
        return play.id
    if prompt == bot_pb2.PROMPT_JUMP_IN:
        return None
    chosen = first(
        game_pb2.ACTION_KIND_DRAW,
        game_pb2.ACTION_KIND_PASS,
        game_pb2.ACTION_KIND_ACCEPT,
        game_pb2.ACTION_KIND_NO_CATCH,
    )
    return chosen if chosen is not None else fallback_action(request)


class HeuristicBot(Bot):
    """The example heuristic; ``overrun_every``/``overrun_ms``: every Nth decide sleeps that
    long first (chaos testing). decide runs in the SDK's worker threads (``threaded``)."""

    name = "py-heuristic"
    version = "0.1.0"

    def __init__(self, overrun_every: int = 0, overrun_ms: int = 0) -> None:
        self.overrun_every = overrun_every
        self.overrun_ms = overrun_ms
        self._calls = 0
        self._lock = threading.Lock()

    def decide(self, request: DecisionRequest, state: MatchState) -> int | None:
        if self.overrun_every > 0:
            with self._lock:
                self._calls += 1
                overrun = self._calls % self.overrun_every == 0
            if overrun:
                time.sleep(self.overrun_ms / 1000)
        return choose(request)


def add_chaos_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--overrun-every",
        type=int,
        default=0,
        metavar="N",
        help="every Nth decision overruns its deadline (0: never)",
    )
    parser.add_argument(
        "--overrun-ms", type=int, default=0, metavar="MS", help="how long an overrun sleeps"
    )


def bot_from_args(ns: argparse.Namespace) -> HeuristicBot:
    if ns.overrun_every < 0 or ns.overrun_ms < 0:
        raise fail("--overrun-every and --overrun-ms must be 0 or more")
    return HeuristicBot(ns.overrun_every, ns.overrun_ms)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m uno_bot.examples.heuristic_bot", description=__doc__.splitlines()[0]
    )
    add_chaos_arguments(p)
    ns, cfg = parse_args(argv, default_name=HeuristicBot.name, parser=p)
    heuristic = bot_from_args(ns)
    configure_logging(ns.log_level, json=ns.log_json)
    return run_main(heuristic, cfg)


if __name__ == "__main__":
    raise SystemExit(main())
