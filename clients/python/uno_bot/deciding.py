"""Running ``decide`` against the deadline: the budget of a request, the fallback answer, the
worker threads of a sync ``decide``, and the client's part that awaits a decision, checks its
result and answers (the :class:`Deciding` half of :class:`~uno_bot.client.BotClient`).

Nothing here reads the stream: :class:`Deciding` calls the client's ``_answer`` and keeps its
tasks in the client's ``_tasks``, so that a RequestClosed or the end of a stream (handled by the
client) cancels them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, cast

from ._log import enum_name as _enum_name
from ._log import log
from .proto import bot_pb2

if TYPE_CHECKING:  # types only: the user API imports this module, not the other way round
    from .api import Bot, MatchState

__all__ = ["MAX_MARGIN_MS", "Deciding", "decide_budget", "fallback_action"]

MAX_MARGIN_MS: Final = 100
"""The safety margin kept back from ``time_left_ms``: min(100 ms, time_left_ms / 2)."""


def fallback_action(request: bot_pb2.DecisionRequest) -> int | None:
    """What the client answers when ``decide`` cannot: for a required request its
    ``default_action_id`` if set, else its first legal id; for an optional request (UNO window,
    late UNO, jump-in) nothing: ``None``, silence, which the server takes as "no"."""
    if not request.required:
        return None
    if request.HasField("default_action_id"):
        return request.default_action_id
    return request.legal_actions[0].id if request.legal_actions else None


def decide_budget(request: bot_pb2.DecisionRequest) -> float | None:
    """Seconds ``decide`` may take, counted from the moment the request arrived:
    ``time_left_ms - min(100, time_left_ms / 2)`` ms for a required request; ``None`` (no timer)
    for an optional one, or for a required one that carries no deadline at all."""
    if not request.required:
        return None
    left = request.time_left_ms
    if left <= 0:
        return None if not request.HasField("deadline") else 0.0
    return (left - min(MAX_MARGIN_MS, left / 2)) / 1000


class _DecidePool:
    """Daemon worker threads for sync ``decide`` calls. A new thread starts whenever every
    thread is busy, so a stuck decide never delays another seat's, and daemon threads never
    hold up the process when it exits."""

    def __init__(self, max_idle: int = 8) -> None:
        self._jobs: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._max_idle = max_idle
        self.started = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            if self._idle:
                self._idle -= 1
                spawn = False
            else:
                self.started += 1
                spawn = True
        self._jobs.put((loop, fut, fn, args))
        if spawn:
            threading.Thread(target=self._work, name="uno-bot-decide", daemon=True).start()
        return fut

    def _work(self) -> None:
        while True:
            loop, fut, fn, args = self._jobs.get()
            try:
                outcome: tuple[bool, Any] = (True, fn(*args))
            except BaseException as exc:
                outcome = (False, exc)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
                loop.call_soon_threadsafe(_settle, fut, outcome)
            del loop, fut, fn, args, outcome
            with self._lock:
                if self._idle >= self._max_idle:
                    return
                self._idle += 1


def _settle(fut: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if fut.done():
        return
    ok, value = outcome
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


class Deciding:
    """The decision half of :class:`~uno_bot.client.BotClient`: run ``decide`` for one request
    until its deadline, check what it returned, and answer it (or the fallback). The client
    provides the attributes declared here and :meth:`_answer` / :meth:`_task_done`."""

    bot: Bot
    _tasks: dict[str, asyncio.Task[None]]
    _received: dict[str, float]
    _pool: _DecidePool

    def _answer(self, req: bot_pb2.DecisionRequest, action_id: int, **_: Any) -> None:
        raise NotImplementedError

    def _task_done(self, request_id: str, task: asyncio.Task[None]) -> None:
        raise NotImplementedError

    def _state(self, match_id: str, seat: int) -> MatchState:
        raise NotImplementedError

    def budget(self, req: bot_pb2.DecisionRequest) -> float | None:
        """Seconds ``decide`` may take for ``req``, from the moment it arrived; None: no timer
        (see :func:`decide_budget`)."""
        return decide_budget(req)

    def _decide_inline(self, req: bot_pb2.DecisionRequest, st: MatchState) -> None:
        """:meth:`_handle_decision` for a sync decide that runs on the event loop (``threaded =
        False``): it is called and answered in one go. (It cannot be interrupted, which is why
        only a decide that takes microseconds should run inline.)"""
        if not req.required and not self.bot.answer_optional:
            return
        problem = ""
        result: Any = None
        try:
            result = self.bot.decide(req, st)
        except Exception as exc:
            log(
                logging.ERROR,
                "decide raised",
                match_id=req.match_id,
                seat=req.seat,
                request_id=req.request_id,
                exc_info=True,
            )
            problem = _raised(exc)
        if type(result) is not int and inspect.isawaitable(result):  # an awaitable after all
            task = asyncio.create_task(self._finish_awaitable(req, result), name=_task_name(req))
            self._tasks[req.request_id] = task
            task.add_done_callback(functools.partial(self._task_done, req.request_id))
            return
        if not problem:
            choice, problem = _check_choice(req, result)
        if problem:
            self._answer_fallback(req, problem)
        elif choice is not None:
            self._answer(req, choice)

    async def _finish_awaitable(self, req: bot_pb2.DecisionRequest, result: Any) -> None:
        budget = self.budget(req)
        try:
            value = await asyncio.wait_for(result, budget)
        except TimeoutError:
            self._answer_fallback(req, "decide did not return within its budget")
            return
        except Exception as exc:
            self._answer_fallback(req, _raised(exc))
            return
        choice, problem = _check_choice(req, value)
        if problem:
            self._answer_fallback(req, problem)
        elif choice is not None:
            self._answer(req, choice)

    def _answer_fallback(self, req: bot_pb2.DecisionRequest, problem: str) -> None:
        choice = fallback_action(req)
        log(
            logging.WARNING,
            "decide failed; answering the fallback"
            if choice is not None
            else "decide failed; leaving the optional request unanswered",
            match_id=req.match_id,
            seat=req.seat,
            request_id=req.request_id,
            prompt=_enum_name(bot_pb2.Prompt, req.prompt),
            problem=problem,
            fallback=choice,
        )
        if choice is not None:
            self._answer(req, choice)

    async def _handle_decision(self, req: bot_pb2.DecisionRequest) -> None:
        loop = asyncio.get_running_loop()
        received = self._received.get(req.request_id, loop.time())
        st = self._state(req.match_id, req.seat)
        fields: dict[str, Any] = {
            "match_id": req.match_id,
            "seat": req.seat,
            "request_id": req.request_id,
        }
        if not req.required and not self.bot.answer_optional:
            return
        budget = self.budget(req)
        deadline = None if budget is None else received + budget
        choice, problem = await self._decide(req, st, deadline, fields)
        if problem:
            choice = fallback_action(req)
            log(
                logging.WARNING,
                "decide failed; answering the fallback"
                if choice is not None
                else "decide failed; leaving the optional request unanswered",
                **fields,
                prompt=_enum_name(bot_pb2.Prompt, req.prompt),
                problem=problem,
                fallback=choice,
                elapsed_ms=round((loop.time() - received) * 1000),
            )
        if choice is None:
            return
        log(
            logging.DEBUG,
            "answer",
            **fields,
            action_id=choice,
            elapsed_ms=round((loop.time() - received) * 1000),
        )
        self._answer(req, choice)

    async def _decide(
        self,
        req: bot_pb2.DecisionRequest,
        st: MatchState,
        deadline: float | None,
        fields: dict[str, Any],
    ) -> tuple[int | None, str]:
        """Run decide until ``deadline`` (loop time; None: no timer). Returns the choice and
        what went wrong ("" if nothing)."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        b = self.bot
        fut: asyncio.Future[Any]
        try:
            if b.is_async():
                fut = asyncio.ensure_future(cast("Awaitable[Any]", b.decide(req, st)))
            elif b.threaded:
                fut = self._pool.submit(b.decide, req, st)
            else:
                fut = loop.create_future()
                fut.set_result(b.decide(req, st))
        except Exception as exc:
            return None, _raised(exc)
        try:
            result = await self._await_until(fut, deadline)
            if inspect.isawaitable(result):  # a sync decide that returned an awaitable
                fut = asyncio.ensure_future(result)
                result = await self._await_until(fut, deadline)
        except TimeoutError:
            budget_ms = round(((deadline or started) - started) * 1000)
            self._drop_late(fut, fields, started)
            return None, f"decide did not return within its budget of {budget_ms} ms"
        except asyncio.CancelledError:
            self._drop_late(fut, fields, started)  # the request closed, or the stream ended
            raise
        except Exception as exc:
            log(logging.ERROR, "decide raised", **fields, exc_info=True)
            return None, _raised(exc)
        return _check_choice(req, result)

    @staticmethod
    async def _await_until(fut: asyncio.Future[Any], deadline: float | None) -> Any:
        if deadline is None:
            return await asyncio.shield(fut)
        timeout = max(0.0, deadline - asyncio.get_running_loop().time())
        done, _ = await asyncio.wait({fut}, timeout=timeout)
        if not done:
            raise TimeoutError
        return fut.result()

    @staticmethod
    def _drop_late(fut: asyncio.Future[Any], fields: dict[str, Any], started: float) -> None:
        """Abandon a decide that is still running. A coroutine is cancelled; a thread cannot be,
        so it runs on, and its result is dropped with one log line when it comes."""
        if fut.done():
            return
        if isinstance(fut, asyncio.Task):
            fut.cancel()
            return
        loop = asyncio.get_running_loop()

        def late(f: asyncio.Future[Any]) -> None:
            if f.cancelled():
                return
            log(
                logging.INFO,
                "late decide result dropped",
                **fields,
                after_ms=round((loop.time() - started) * 1000),
            )
            f.exception()  # retrieved: no "never retrieved" warning

        fut.add_done_callback(late)


def _check_choice(req: bot_pb2.DecisionRequest, result: Any) -> tuple[int | None, str]:
    """What decide returned, checked: (the action id, "") or (None, what is wrong with it);
    (None, "") is an optional request left unanswered."""
    if result is None:
        return None, "" if not req.required else "decide returned None for a required request"
    if isinstance(result, bool) or not isinstance(result, int):
        return None, f"decide returned {result!r}, not one of the legal action ids"
    for a in req.legal_actions:
        if a.id == result:
            return result, ""
    return None, f"decide returned {result!r}, not one of the legal action ids"


def _raised(exc: BaseException) -> str:
    return f"decide raised {type(exc).__name__}: {exc}"


def _task_prefix(match_id: str, seat: int) -> str:
    return f"uno-bot:{match_id}:{seat}"


def _task_name(req: bot_pb2.DecisionRequest) -> str:
    return _task_prefix(req.match_id, req.seat)
