"""At most one hand of a deal in play at a time (:mod:`uno_tournament.deals_in_play`).

An examination: the four rotations of a deal (the same cards) were played at once, and a bot
seated in one learned the cards of another still in play when it ended (``HandEndedEvent``
publishes the seed and every seat's remaining cards): its bot dealt the seed and read every
opponent's hand, live, in 9 of its 48 hands."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

from uno_server.cli import main as cli_main
from uno_tournament.deals_in_play import DealsInPlay

from .helpers import bot_entry, write_config


@dataclass(frozen=True)
class _Spec:
    hand_id: str
    deal_id: str


def _queue() -> deque[_Spec]:
    return deque(_Spec(f"d{d}/r{r}", f"d{d}") for d in range(3) for r in range(4))


@pytest.mark.asyncio
async def test_tables_take_hands_of_free_deals_and_wait_when_none_is() -> None:
    deals = DealsInPlay()
    queue = _queue()
    taken: list[list[str]] = []
    log: list[str] = []

    async def table(n: int) -> None:
        mine: list[str] = []
        taken.append(mine)
        while queue:
            spec = deals.pick(queue)
            if spec is None:
                await deals.wait()
                continue
            try:
                log.append(f"+{spec.deal_id}")
                mine.append(spec.hand_id)
                await asyncio.sleep(0)  # the hand is played: other tables run meanwhile
                await asyncio.sleep(0)
                log.append(f"-{spec.deal_id}")
            finally:
                deals.release(spec)

    await asyncio.wait_for(asyncio.gather(*(table(n) for n in range(5))), timeout=30)
    assert sorted(h for t in taken for h in t) == sorted(s.hand_id for s in _queue())
    playing: set[str] = set()
    most = 0
    for event in log:  # in the order the tables started and ended their hands
        deal = event[1:]
        if event[0] == "+":
            assert deal not in playing, log  # never a second hand of a deal in play
            playing.add(deal)
        else:
            playing.remove(deal)
        most = max(most, len(playing))
    assert most == 3, log  # the three deals were played side by side


@pytest.mark.asyncio
async def test_a_cancelled_waiter_leaves_the_others_waiting() -> None:
    deals = DealsInPlay()
    queue = deque([_Spec("d0/r0", "d0"), _Spec("d0/r1", "d0")])
    done = asyncio.Event()

    async def holder() -> None:  # a table playing d0/r0 until told to end it
        spec = deals.pick(queue)
        assert spec is not None and spec.hand_id == "d0/r0"
        await done.wait()
        deals.release(spec)

    table = asyncio.create_task(holder())
    await asyncio.sleep(0)
    assert deals.pick(queue) is None  # another table: its deal is in play
    a = asyncio.create_task(deals.wait())
    b = asyncio.create_task(deals.wait())
    await asyncio.sleep(0)
    a.cancel()
    await asyncio.sleep(0)
    assert not b.done()  # one waiter's cancel did not end the other's wait
    done.set()
    await asyncio.wait_for(asyncio.gather(table, b), timeout=10)
    assert deals.pick(queue) is not None


def test_a_run_never_plays_two_rotations_of_one_deal_at_once(tmp_path: Path) -> None:
    """Four bots and eight tables at once: each deal's four rotations were played side by
    side. In the stored hands, each rotation of a deal starts after the one before it ends."""
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)], concurrency=8)
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    rows = sqlite3.connect(tmp_path / "out" / "tournament.sqlite").execute(
        "SELECT deal_id, finished_at - duration_s, finished_at FROM hands"
    )
    by_deal: dict[str, list[tuple[float, float]]] = {}
    for deal, start, end in rows:
        by_deal.setdefault(deal, []).append((start, end))
    assert len(by_deal) == 6 and all(len(v) == 4 for v in by_deal.values()), by_deal
    side_by_side = 0
    for spans in by_deal.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert start >= end - 0.05, spans  # the next began after this one was stored
    starts = sorted(s for spans in by_deal.values() for s, _ in spans)
    ends = sorted(e for spans in by_deal.values() for _, e in spans)
    side_by_side = max(
        sum(1 for s in starts if s <= t) - sum(1 for e in ends if e <= t) for t in starts
    )
    assert side_by_side >= 2, by_deal  # other deals were played meanwhile
