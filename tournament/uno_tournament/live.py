"""The live progress display (rich): a bar with hands done and to go, ETA, hands per second and
the current top bots (the last live Plackett-Luce refit, or the sequential Elo before it; a bot
given up on is marked)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from .progress import Progress as RunProgress


class _View:
    def __init__(
        self,
        prog: RunProgress,
        top: Callable[[int], list[tuple[str, float]]],
        extra: Callable[[], str] | None = None,
    ) -> None:
        self.prog = prog
        self.top = top
        self.extra = extra
        """A sequential run's line: the pairs open and the hands still expected."""
        self.bar = Progress(
            TextColumn("[bold]hands"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TextColumn("{task.fields[togo]} to go"),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("{task.fields[retries]}"),
        )
        self.task = self.bar.add_task(
            "hands", total=prog.planned, togo=0, rate=0.0, eta="?", retries=""
        )

    def __rich__(self) -> RenderableType:
        p = self.prog
        eta = p.eta_s()
        self.bar.update(
            self.task,
            completed=p.done,
            togo=p.planned - p.done,
            rate=p.rate(),
            eta="?" if eta is None else _fmt(eta),
            retries=f"{p.retries} retries" if p.retries else "",
        )
        t = Table(title="live ranking", title_justify="left", box=None)
        t.add_column("#", justify="right")
        t.add_column("bot")
        t.add_column("Elo", justify="right")
        for i, (bot, elo) in enumerate(self.top(5), start=1):
            t.add_row(str(i), bot, f"{elo:+.0f}")
        line = self.extra() if self.extra is not None else ""
        if line:
            return Group(self.bar, Text(line), t)
        return Group(self.bar, t)


def _fmt(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


async def live_display(
    prog: RunProgress,
    top: Callable[[int], list[tuple[str, float]]],
    stream: TextIO,
    extra: Callable[[], str] | None = None,
) -> None:
    view = _View(prog, top, extra)
    with Live(view, console=Console(file=stream), refresh_per_second=4, transient=False):
        while True:
            await asyncio.sleep(0.5)
