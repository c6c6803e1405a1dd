"""Remote bots in a league: bots their authors run on their own machines (``league token add``).

A remote bot is registered with the league's game server by the SHA-256 of its token (the league
keeps no plaintext token). On its first connection it plays the gate a submission plays (N hands
against the three built-in bots, judged by :func:`.submit.judge`); accepted, it is in the ladder
as ``NAME@remote.N`` and seated while it has a live Play session. A remote bot that is away is
never given up on: its hands of the block are skipped, and it is seated again once it is back.

This is one job of ``league run`` (:mod:`.run`), cut out of it along its seam: what the league
does with connections it did not launch. :class:`RemoteBots` is the league runner's base class;
the runner owns the versions, the blocks and the ratings.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import grpc

from uno_server.gen.uno.v1 import admin_pb2

from .. import schedule
from ..player import Player, error_reason
from ..procs import BotProcess
from ..store import HandRecord, Store
from .matchmaking import block_specs
from .metrics import LeagueMetrics
from .quota import check_author
from .ratings import server_name
from .store import REMOTE, LeagueError, LeagueStore, Version
from .submit import GATE_HANDS, judge

__all__ = ["Remote", "RemoteBots", "Seated"]


@dataclass
class Seated:
    """A version the run has registered and launched (or, for a remote bot, admitted: it is
    run by its author, ``proc`` is None)."""

    version: Version
    name: str
    proc: BotProcess | None
    away_since: float | None
    """Since when it has not been connected (None: it is)."""


@dataclass
class Remote:
    """A remote bot's token, as the run knows it (the league keeps only its SHA-256)."""

    name: str
    author: str
    sha256: str
    registered: bool = False
    refused_session: str = ""
    """The session its last gate was refused in: it is gated again only on a new connection."""


class RemoteBots(Player, ABC):
    """A :class:`~uno_tournament.player.Player` that also seats remote bots: their tokens, their
    gate on the first connection, and what an absent one costs (nothing: its hands are
    skipped)."""

    # the league runner's state that the remote bots read and write (set by LeagueRunner)
    league: LeagueStore
    league_dir: Path
    league_metrics: LeagueMetrics | None
    seated: dict[int, Seated]
    by_name: dict[str, Seated]
    counts: dict[str, int]
    house_procs: dict[str, BotProcess]
    _waiting: str

    def _init_remote(self) -> None:
        self.remote: dict[str, Remote] = {}
        """The remote bots' tokens, registered with the server by their SHA-256."""
        self.given_up_remote: dict[str, str] = {}
        """Why each remote bot was last away (a gate that lost its bot is refused with it)."""
        self.away: set[str] = set()
        """Remote bots that left in the middle of a block: their hands of the block are skipped;
        they are seated again once they are back (never given up on)."""
        self._gate: tuple[set[str], list[HandRecord], Store, Path] | None = None
        """The gate being played: its hand ids, the hands, its store and folder."""

    @abstractmethod
    async def _launch_house(self) -> None:
        """Launch the house bots, who play the gates (the league runner does)."""

    async def _sync_tokens(self) -> None:
        """Register every remote bot's token with the server by its SHA-256 (the league keeps
        no plaintext token), the new ones too (``league token add`` while the league plays);
        forget the revoked ones (``league token revoke``): their next connection is refused
        with UNAUTHENTICATED / INVALID_TOKEN."""
        tokens = {n: (a, d) for n, a, d in self.league.tokens()}
        for name in [n for n in self.remote if n not in tokens]:
            r = self.remote.pop(name)
            self.away.discard(name)
            if r.registered:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self.admin.RetireBot(
                        admin_pb2.RetireBotRequest(bot_name=name), metadata=self.md, timeout=30
                    )
            self.say(f"remote bot {name}: token revoked; the server no longer admits it")
        for name, (author, digest) in tokens.items():
            r = self.remote.setdefault(name, Remote(name, author, digest))
            if r.registered:
                continue
            try:
                await self.admin.RegisterBot(
                    admin_pb2.RegisterBotRequest(bot_name=name, token_sha256=digest),
                    metadata=self.md,
                    timeout=30,
                )
            except grpc.aio.AioRpcError as err:
                if not r.refused_session:  # said once; looked at again every block
                    self.say(
                        f"remote bot {name}: the server refused its token: "
                        f"{err.code().name} {error_reason(err)}: {(err.details() or '')[:200]}"
                    )
                    r.refused_session = "-"
                continue
            r.registered = True
            if not any(v.remote for v in self.league.versions(name)):
                self.say(f"remote bot {name} ({author}): waiting for its first connection")

    def _admit(self, v: Version) -> None:
        """An accepted remote version enters the ladder: nothing to launch, its author runs
        it; it is seated while it has a live Play session."""
        seat = Seated(v, server_name(v), None, None)
        self.seated[v.id] = seat
        self.by_name[seat.name] = seat
        self.counts.setdefault(seat.name, 0)
        if self.league_metrics is not None:
            self.league_metrics.add_version(seat.name, v, self.counts[seat.name])
        self.say(f"{v.key} ({v.author}, remote) is in the ladder as bot {seat.name}")

    async def _sessions(self) -> dict[str, str]:
        """The connected bots and their session ids."""
        res = await self.admin.ListBots(admin_pb2.ListBotsRequest(), metadata=self.md, timeout=10)
        self.server_seen = time.monotonic()
        return {b.bot_name: b.session_id for b in res.bots if b.connected}

    def _to_gate(self, sessions: dict[str, str]) -> Remote | None:
        """A connected remote bot that has not passed a gate: none of its remote versions is
        active or retired, and its last refusal (if any) was in another session."""
        for r in sorted(self.remote.values(), key=lambda r: r.name):
            if not r.registered or r.name not in sessions:
                continue
            mine = [v for v in self.league.versions(r.name) if v.remote]
            if any(v.state != "refused" for v in mine):
                continue
            if r.refused_session == sessions[r.name]:
                continue  # refused in this connection: reconnect to be gated again
            try:  # a gate is a submission: a refused bot reconnecting got a gate each time,
                # past max_submissions_per_day (an examination: 3 gates against a limit of 2)
                check_author(self.league, r.author, r.name, self.league.settings())
            except LeagueError as exc:
                note = f"remote bot {r.name}: not gated ({exc})"
                if note != self._waiting:
                    self.say(note)
                    self._waiting = note
                continue
            return r
        return None

    async def _play_gate(self) -> bool:
        """The gate of a remote bot on its first connection, as a submission's (N hands
        against the three built-in bots, duplicate deals, rotated seats; 0 illegal actions, 0
        timeouts, and it stays connected); its verdict recorded like a submission's. True if
        a gate was played."""
        if self.stop_requested:
            return False
        sessions = await self._sessions()
        r = self._to_gate(sessions)
        if r is None:
            return False
        if not self.house_procs:
            await self._launch_house()
        house = [n for n in self.house_procs if n in sessions and n not in self.given_up]
        if len(house) < 3:
            note = f"remote bot {r.name}: its gate waits for the house bots to connect"
            if note != self._waiting:
                self.say(note)
                self._waiting = note
            return False
        self._waiting = ""
        attempt = sum(1 for v in self.league.versions(r.name) if v.remote) + 1
        version = f"remote.{attempt}"
        key = f"{r.name}@{version}"
        folder = self.league_dir / "gates" / key
        shutil.rmtree(folder, ignore_errors=True)
        gid = f"gate-{r.name}-{attempt}"
        gstore = Store.create(folder, {"tournament_id": gid, "config": self.config.to_dict()})
        table = (r.name, *house[:3])
        blocks = GATE_HANDS // (schedule.DEALS_PER_BLOCK * schedule.ROTATIONS)
        specs = [sp for b in range(blocks) for sp in block_specs(gid, 1, b, [table])]
        recs: list[HandRecord] = []
        self._gate = ({sp.hand_id for sp in specs}, recs, gstore, folder)
        self.say(
            f"remote bot {r.name} ({r.author}) connected: its gate, {len(specs)} hands against "
            f"the built-in bots"
        )
        self.away.discard(r.name)
        self.given_up_remote.pop(r.name, None)
        queue = deque(specs)
        loop = asyncio.get_running_loop()
        self._workers = [
            loop.create_task(self._worker(queue))
            for _ in range(min(self.config.concurrency, len(queue)))
        ]
        try:
            await asyncio.gather(*self._workers, return_exceptions=True)
        finally:
            self._workers = []
            self._gate = None
            gstore.close()
        if self.fatal is not None:
            return True
        if self.stop_requested and len(recs) < len(specs):
            self.say(f"remote bot {r.name}: gate stopped with the league; judged again next run")
            return True
        why = self.given_up_remote.pop(r.name, None)
        left = [f"its connection dropped during the gate ({why})"] if why else []
        self.away.discard(r.name)
        log = self.shard.server.log_path if self.shard and self.shard.server else None
        accepted, reason, gate = judge(recs, r.name, len(specs), folder, left, log)
        gate["remote"] = True
        if not accepted:
            r.refused_session = sessions.get(r.name, "")
            reason += "; fix the bot, then reconnect it to be gated again"
        self.league.record(
            name=r.name,
            version=version,
            author=r.author,
            language=REMOTE,
            folder="",
            manifest={"name": r.name, "version": version, "author": r.author, "remote": True},
            state="active" if accepted else "refused",
            reason=reason,
            gate=gate,
        )
        verdict = "accepted" if accepted else "refused"
        self.say(f"{key}: {verdict} ({reason})")
        return True

    def _give_up(self, bot: str, why: str, *, record: bool = True) -> None:
        """A remote bot that is away is not given up on: its hands of the block are skipped
        (its author's machine may be down), and it is seated again when it is back; a
        launched bot is given up on as in a tournament."""
        if bot in self.remote:
            if bot not in self.away:
                self.away.add(bot)
                self.given_up_remote[bot] = why
                self.say(
                    f"remote bot {bot}: away ({why}); its hands of this block are skipped; "
                    "it is seated again once it is back"
                )
            return
        super()._give_up(bot, why, record=record)

    def _unavailable(self, bot: str) -> bool:
        """A remote bot that went away between its check and its hand is played by the
        stand-in (the hand was made for it); without this, play() would wait for it for
        ever."""
        return bot in self.away or super()._unavailable(bot)

    async def _skip(self, spec: schedule.HandSpec) -> bool:
        """A hand with a remote bot that is away (not connected when its hand comes up) is
        skipped, not played with a stand-in: being absent costs no forfeit (a hand it leaves
        while playing is the server's takeover)."""
        remote = [b for b in spec.bots if b in self.remote]
        if remote and not self.away & set(remote):
            connected = await self._connected()
            for b in remote:
                if b not in connected:
                    self._give_up(b, "not connected")
        return bool(self.away & set(remote))
