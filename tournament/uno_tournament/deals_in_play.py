"""At most one hand of a deal in play at a time.

The four rotations of a duplicate deal are four matches of the same cards. Played at the same
time at one server, a bot seated in one of them learned the cards of another still in play when
it ended: ``HandEndedEvent`` publishes the hand's seed (the whole deck, in order) and every seat's
remaining cards. An examination's bot dealt the seed it was sent and read every opponent's
hand, live, in 9 of its 48 hands. Played one after another, what a bot learns at a hand's end
serves only a bot that remembers across hands, which a competition's rules can forbid
(docs/tournaments.md).

The runner's tables take their next hand through :meth:`DealsInPlay.pick`: the first hand in
the queue (within a window) whose deal has no hand in play, so the tables stay busy with other
deals while one deal's rotation is played.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from typing import Protocol, TypeVar

WINDOW = 512
"""How far into the queue a table looks for a hand of a free deal (a deal's four rotations are
next to each other in the plan's order, so a free deal is a few hands away)."""


class _Spec(Protocol):
    @property
    def deal_id(self) -> str: ...


S = TypeVar("S", bound=_Spec)


class DealsInPlay:
    """The deals with a hand in play, and which table (task) holds each."""

    def __init__(self) -> None:
        self._held: dict[str, asyncio.Task[object] | None] = {}
        self._released: asyncio.Future[None] | None = None

    def free(self, spec: _Spec) -> bool:
        """No other table plays a hand of ``spec``'s deal (this table may)."""
        return self._held.get(spec.deal_id, asyncio.current_task()) is asyncio.current_task()

    def index(self, queue: deque[S]) -> int | None:
        """The place in ``queue`` of its first hand whose deal is free (None: none in the
        window)."""
        for i, spec in enumerate(itertools.islice(queue, WINDOW)):
            if self.free(spec):
                return i
        return None

    def hold(self, spec: _Spec) -> None:
        """``spec``'s deal is played by this table until :meth:`release`."""
        self._held[spec.deal_id] = asyncio.current_task()

    def pick(self, queue: deque[S]) -> S | None:
        """Take the first hand of ``queue`` whose deal is free, and hold its deal."""
        i = self.index(queue)
        if i is None:
            return None
        spec = queue[i]
        del queue[i]
        self.hold(spec)
        return spec

    def release(self, spec: _Spec) -> None:
        """``spec``'s deal has no hand in play any more (if this table held it)."""
        if self._held.get(spec.deal_id, None) is asyncio.current_task():
            del self._held[spec.deal_id]
            done, self._released = self._released, None
            if done is not None and not done.done():
                done.set_result(None)

    async def wait(self) -> None:
        """Until a deal is released. A cancelled waiter leaves the others waiting (the future
        is awaited through ``asyncio.wait``, which never cancels it)."""
        if self._released is None:
            self._released = asyncio.get_running_loop().create_future()
        await asyncio.wait({self._released})
