"""The Python SDK's local-socket shortcut (``UNO_ARENA_LOCAL_SOCKET``): the tournament's sandbox
names the game server's Unix socket, and a plaintext connection goes there instead of through
the relay behind ``--addr``. TLS connections, and a variable that names no socket, keep the
address."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from tests.clients.test_python_sdk import (
    TOKEN,
    FakeBotService,
    FakeStream,
    RecordingBot,
    free_port,
    run_async,
    simple_request,
)
from uno_bot import BotClient, ClientConfig
from uno_bot.client import LOCAL_SOCKET_ENV
from uno_bot.proto import bot_pb2_grpc


def _client(addr: str, **config: Any) -> BotClient:
    return BotClient(RecordingBot(), ClientConfig(addr=addr, token=TOKEN, name="t", **config))


def test_the_target_is_the_socket_only_for_a_plaintext_connection_to_a_real_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sock = tmp_path / "server.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock))
    try:
        monkeypatch.delenv(LOCAL_SOCKET_ENV, raising=False)
        assert _client("127.0.0.1:7").target == "127.0.0.1:7"
        monkeypatch.setenv(LOCAL_SOCKET_ENV, str(sock))
        assert _client("127.0.0.1:7").target == f"unix:{sock}"
        assert _client("https://127.0.0.1:7").target == "127.0.0.1:7"  # TLS: the address
        assert _client("127.0.0.1:7", tls=True).target == "127.0.0.1:7"
        plain = tmp_path / "not-a-socket"
        plain.write_text("")
        monkeypatch.setenv(LOCAL_SOCKET_ENV, str(plain))
        assert _client("127.0.0.1:7").target == "127.0.0.1:7"
        monkeypatch.setenv(LOCAL_SOCKET_ENV, str(tmp_path / "missing.sock"))
        assert _client("127.0.0.1:7").target == "127.0.0.1:7"
    finally:
        listener.close()


def test_a_bot_plays_through_the_socket_while_its_address_is_dead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing listens at the address: the answer can only have come through the socket."""
    sock = tmp_path / "server.sock"
    monkeypatch.setenv(LOCAL_SOCKET_ENV, str(sock))
    seen: dict[str, Any] = {}

    async def script(stream: FakeStream, index: int) -> bool:
        seen["peer"] = stream.context.peer()
        await stream.handshake()
        await stream.send(simple_request("r1"))
        seen["action"] = await stream.recv_action()
        return True

    async def main() -> None:
        server = grpc.aio.server()
        service = FakeBotService(script)
        bot_pb2_grpc.add_BotServiceServicer_to_server(service, server)
        server.add_insecure_port(f"unix:{sock}")
        await server.start()
        client = _client(f"127.0.0.1:{free_port()}", backoff_initial=0.02, backoff_max=0.1)
        task = asyncio.create_task(client.run())
        try:
            await asyncio.wait_for(service.done.wait(), 12)
            if service.error is not None:
                raise service.error
        finally:
            client.stop()
            await asyncio.wait_for(asyncio.gather(task, return_exceptions=True), 5)
            await server.stop(None)

    run_async(main())
    assert seen["action"].request_id == "r1"
    assert seen["peer"].startswith("unix:")
