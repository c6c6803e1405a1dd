"""A small Chrome DevTools Protocol client over aiohttp's websocket: start Debian's headless
Chromium, drive one page, and record its network traffic (responses and server-sent events).

Used by the browser test and by ``make screenshots``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = os.environ.get("UNO_ARENA_CHROMIUM", "/usr/bin/chromium")
WAIT_S = 120.0
"""How long a wait for the browser (its start, a page condition, a response body) may take
before the test fails: a guard against a hang, far above what a loaded 2-core machine needs.
No test asserts that anything happens within a time."""
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)


def chromium_path() -> str | None:
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    return shutil.which("chromium")


def need_chromium(*, module: bool = False) -> None:
    """Skip the calling test (or module) when Chromium is missing, and fail it under CI=true,
    where .ci/run installs Debian's chromium: a browser test must not pass there unrun."""
    import pytest

    if chromium_path() is not None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("the browser test needs Debian's chromium (.ci/run installs it)")
    pytest.skip("chromium not installed: apt-get install chromium", allow_module_level=module)


class CdpError(RuntimeError):
    pass


# What Chromium answers a Runtime.evaluate that meets a navigation: the target's document
# went away (or had not yet got a context) while the call was in flight.
NAVIGATING = (
    "Inspected target navigated or closed",
    "Execution context was destroyed",
    "Cannot find context with specified id",
)


@dataclass
class Traffic:
    """What the page received: response bodies by URL and every server-sent event."""

    responses: list[tuple[str, str, str]] = field(default_factory=list)
    """(url, mime type, body) of each response whose body could be read."""
    sse: list[tuple[str, str]] = field(default_factory=list)
    """(event name, data) of each server-sent event message, in order."""


class Page:
    """One page of the browser, driven over its websocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.traffic = Traffic()
        self._mime: dict[str, tuple[str, str]] = {}
        self._reader = asyncio.create_task(self._read())
        self._bodies: set[asyncio.Task[None]] = set()

    async def _read(self) -> None:
        async for msg in self.ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            if "id" in data:
                fut = self._pending.pop(data["id"], None)
                if fut is not None and not fut.done():
                    if "error" in data:
                        fut.set_exception(CdpError(str(data["error"])))
                    else:
                        fut.set_result(data.get("result", {}))
                continue
            method = data.get("method")
            params = data.get("params", {})
            if method == "Network.eventSourceMessageReceived":
                self.traffic.sse.append((params.get("eventName", ""), params.get("data", "")))
            elif method == "Network.responseReceived":
                resp = params["response"]
                self._mime[params["requestId"]] = (resp["url"], resp.get("mimeType", ""))
            elif method == "Network.loadingFinished":
                rid = params["requestId"]
                if rid in self._mime:
                    task = asyncio.create_task(self._body(rid))
                    self._bodies.add(task)
                    task.add_done_callback(self._bodies.discard)

    async def _body(self, rid: str) -> None:
        url, mime = self._mime.pop(rid)
        with contextlib.suppress(CdpError):
            res = await self.send("Network.getResponseBody", {"requestId": rid})
            body = res.get("body", "")
            if res.get("base64Encoded"):
                body = base64.b64decode(body).decode("utf-8", "replace")
            self.traffic.responses.append((url, mime, body))

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        i = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[i] = fut
        await self.ws.send_str(json.dumps({"id": i, "method": method, "params": params or {}}))
        return await asyncio.wait_for(fut, WAIT_S)

    async def evaluate(self, expression: str) -> Any:
        res = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in res:
            raise CdpError(str(res["exceptionDetails"]))
        return res.get("result", {}).get("value")

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url})

    async def wait_for(self, expression: str, timeout: float = WAIT_S) -> Any:
        end = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                value = await self.evaluate(expression)
            except CdpError as e:
                # A click or a script that navigates tears down the document the expression
                # was sent to; Chromium answers that call with an error, not a value. The
                # page is not wrong, it is between documents: ask the new one.
                if not any(m in str(e) for m in NAVIGATING):
                    raise
                value = None
            if value:
                return value
            if asyncio.get_running_loop().time() > end:
                raise TimeoutError(f"page never satisfied: {expression}")
            await asyncio.sleep(0.05)

    async def screenshot(self, path: Path, width: int, height: int) -> None:
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        res = await self.send("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(res["data"]))

    async def settle(self) -> None:
        """Wait for the bodies of finished responses to be read."""
        if self._bodies:
            await asyncio.wait(self._bodies, timeout=WAIT_S)

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        await self.ws.close()


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Page]:
    """Headless Chromium with a fresh profile; yields its first page, network recording on."""
    exe = chromium_path()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    profile = tempfile.mkdtemp(prefix="uno-chromium-")
    proc = await asyncio.create_subprocess_exec(
        exe,
        *FLAGS,
        f"--user-data-dir={profile}",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    session = aiohttp.ClientSession()
    page: Page | None = None
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        end = asyncio.get_running_loop().time() + WAIT_S
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.returncode is not None:
                raise CdpError(f"chromium exited with {proc.returncode}")
            if asyncio.get_running_loop().time() > end:
                raise CdpError(f"chromium did not open its DevTools port in {WAIT_S:.0f} s")
            await asyncio.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        async with session.get(f"http://127.0.0.1:{port}/json/list") as res:
            targets = await res.json()
        url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        ws = await session.ws_connect(url, max_msg_size=0)
        page = Page(ws)
        for domain in ("Page", "Runtime", "Network"):
            await page.send(f"{domain}.enable")
        yield page
    finally:
        if page is not None:
            await page.close()
        await session.close()
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
