"""Helpers of the web view tests: read server-sent events, find every card in a message, and
check a message against the engine's truth."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from tests.play.live import public_now
from uno_server.service.table import Table


async def sse(resp: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, Any]]:
    """(event, parsed data) of a text/event-stream response."""
    event, data = "message", list[str]()
    async for raw in resp.content:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", list[str]()
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def cards_in(obj: Any) -> list[int]:
    """Every card code anywhere in a JSON value (a card is an object with a ``code``)."""
    out: list[int] = []
    if isinstance(obj, dict):
        if "code" in obj and "label" in obj:
            out.append(int(obj["code"]))
        for v in obj.values():
            out += cards_in(v)
    elif isinstance(obj, list):
        for v in obj:
            out += cards_in(v)
    return out


def check_state(state: dict[str, Any], table: Table) -> int:
    """No card in a table state that the engine has not shown to everyone by ``state.seq``;
    no hand revealed while a hand runs. Returns how many cards the state names."""
    public = public_now(table, state["seq"])
    codes = cards_in(state)
    hidden = sorted(set(codes) - public)
    assert not hidden, f"seq {state['seq']}: hidden card codes in the state: {hidden}"
    if state["phase"] != "over":
        assert all(s["revealed"] is None for s in state["seats"])
    return len(codes)
