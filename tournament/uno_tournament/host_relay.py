"""The runner's end of a confined bot's way out to the game server (:class:`HostRelay`), apart
from :mod:`uno_tournament.sandbox`, which builds the confinement itself: the bots' relay inside
the sandbox (``sandbox_relay.py inner``) reaches this one's Unix socket, and it the server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
from typing import ClassVar

from .sandbox import KEEPER, RELAY, MiB


class HostRelay:
    """The runner's end of the bots' way out: a Unix socket in a private folder, relayed to
    the game server's TCP address. One per server address, shared by the bots of a shard.

    Where the game server itself listens on a Unix socket (a server the runner started, see
    :meth:`serve_direct`), no relay runs on this side: the bots' relay inside the sandbox
    reaches the server's own socket, one hop instead of two."""

    _all: ClassVar[dict[str, HostRelay]] = {}
    _direct: ClassVar[dict[str, str]] = {}

    def __init__(self, target: str, socket_dir: str = "") -> None:
        self.target = target
        self.direct = bool(socket_dir)
        self.dir = socket_dir or tempfile.mkdtemp(prefix="uno-arena-sock-")
        if not self.direct:
            os.chmod(self.dir, 0o700)
        self.socket = os.path.join(self.dir, "server.sock")
        self.proc: asyncio.subprocess.Process | None = None
        self.users = 0

    @classmethod
    def serve_direct(cls, target: str, socket_dir: str) -> None:
        """The server at ``target`` also listens on ``socket_dir/server.sock``: bots of that
        server need no relay on this side (until :meth:`forget_direct`)."""
        cls._direct[target] = socket_dir

    @classmethod
    def forget_direct(cls, target: str) -> None:
        cls._direct.pop(target, None)

    @property
    def alive(self) -> bool:
        """Whether bots can reach the server through this end (a direct socket is the
        server's own: it lives as long as the server)."""
        if self.direct:
            return os.path.exists(self.socket)
        return self.proc is not None and self.proc.returncode is None

    @classmethod
    async def acquire(cls, target: str) -> HostRelay:
        relay = cls._all.get(target)
        if relay is None or not relay.alive:
            direct = cls._direct.get(target, "")
            if direct and not os.path.exists(os.path.join(direct, "server.sock")):
                cls._direct.pop(target, None)  # that server has stopped: relay as before
                direct = ""
            relay = cls(target, direct)
            if not direct:
                await relay._start()
            cls._all[target] = relay
        relay.users += 1
        return relay

    async def release(self) -> None:
        self.users -= 1
        if self.users <= 0:
            if HostRelay._all.get(self.target) is self:
                HostRelay._all.pop(self.target, None)
            await self.close()

    async def _start(self) -> None:
        keeper = {
            "ppid": os.getpid(),
            "cwd": self.dir,
            "argv": [sys.executable, "-I", "-S", RELAY, "host", self.socket, self.target],
            "log": os.path.join(self.dir, "relay.log"),
            "log_max": MiB,
            "status": os.path.join(self.dir, "relay.status"),
        }
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-S",
            KEEPER,
            json.dumps(keeper),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            close_fds=True,
        )
        for _ in range(500):
            if os.path.exists(self.socket):
                return
            if self.proc.returncode is not None:
                break
            await asyncio.sleep(0.01)
        raise OSError(f"the sandbox relay to {self.target} did not start")

    async def close(self) -> None:
        if self.direct:
            return  # the server's own folder: the server's owner removes it
        proc = self.proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------- the bwrap command
