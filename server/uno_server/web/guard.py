"""Connection caps for the HTTP pages a process serves beside its game server.

``uno-arena serve --web-port/--metrics-port``, a tournament runner's and a league's metrics page
and a league's standings share the process's file descriptors with the gRPC server that bots
reach. Without a cap, a client that opened silent connections to one of these ports by the
thousand took every descriptor, and the game server then accepted nobody (the gRPC port's own
cap, :func:`uno_server.service.server.connection_cap`, keeps 256 descriptors for the process's
files, logs and these pages). Here each page takes at most a fixed number of connections at
once; the next is answered ``503`` and closed at once, and a connection that sends nothing is
closed after :data:`SILENT_SECONDS`.

- the web view (aiohttp): :data:`WEB_CONNECTIONS`, through :class:`CappedRunner`;
- a metrics page (Prometheus's text format, a thread per connection): :data:`METRICS_CONNECTIONS`,
  through :func:`start_metrics_server`.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

WEB_CONNECTIONS = 128
"""Connections the web view holds at once (browsers, ``curl``, event streams)."""

METRICS_CONNECTIONS = 16
"""Connections a metrics page holds at once (a scrape is one short request)."""

SILENT_SECONDS = 15.0
"""A connection that sends no request for this long is closed (the web view's keep-alive
wait, and the metrics page's wait for each read)."""

BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\nContent-Length: 53\r\n\r\n"
    b"too many connections to this port; try again shortly\n"
)


class _Busy(asyncio.Protocol):
    """A connection over the cap: told so, and closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(BUSY)
        transport.close()


class _CappedServer(web.Server):
    """aiohttp's connection factory, counting the connections it has open."""

    def __init__(self, *args: Any, cap: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cap = cap
        self.open = 0
        self.refused = 0

    def __call__(self) -> Any:
        if self.open >= self.cap:
            self.refused += 1
            return _Busy()
        self.open += 1
        return super().__call__()

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self.open -= 1
        super().connection_lost(handler, exc)


class CappedRunner(web.AppRunner):
    """An :class:`aiohttp.web.AppRunner` whose sites take at most ``cap`` connections at once,
    and close one that sends nothing for :data:`SILENT_SECONDS`."""

    def __init__(self, app: web.Application, *, cap: int = WEB_CONNECTIONS, **kwargs: Any):
        kwargs.setdefault("keepalive_timeout", SILENT_SECONDS)
        super().__init__(app, **kwargs)
        self.cap = cap

    async def _make_server(self) -> web.Server:
        base = await super()._make_server()
        # the same handler and settings, in the counting factory
        return _CappedServer(
            base.request_handler,
            request_factory=base.request_factory,
            handler_cancellation=base.handler_cancellation,
            loop=asyncio.get_running_loop(),
            cap=self.cap,
            **base._kwargs,
        )


# ---------------------------------------------------------------------- metrics page


def start_metrics_server(
    port: int, addr: str, registry: Any, *, cap: int = METRICS_CONNECTIONS
) -> Any:
    """Serve ``registry`` in Prometheus's text format on ``addr:port`` from a daemon thread, as
    :func:`prometheus_client.start_http_server` does, with at most ``cap`` connections at once.
    Returns the server (``server_address``, ``shutdown()``, ``server_close()``); an ``OSError``
    if the port cannot be had."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from prometheus_client.exposition import ThreadingWSGIServer, make_wsgi_app

    class Handler(WSGIRequestHandler):
        timeout = SILENT_SECONDS  # each read waits this long at most

        def log_message(self, format: str, *args: Any) -> None:
            """Nothing: a scrape every few seconds is not news."""

    class Server(ThreadingWSGIServer):
        slots = threading.BoundedSemaphore(cap)

        def process_request(self, request: Any, client_address: Any) -> None:
            if not self.slots.acquire(blocking=False):
                try:
                    request.settimeout(1.0)
                    request.sendall(BUSY)
                except OSError:
                    pass
                self.shutdown_request(request)
                return
            try:
                super().process_request(request, client_address)
            except BaseException:
                self.slots.release()
                raise

        def handle_error(self, request: Any, client_address: Any) -> None:
            if not isinstance(sys.exc_info()[1], OSError):  # silent or gone: not news
                super().handle_error(request, client_address)

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.slots.release()

    infos = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, sockaddr = infos[0]
    Server.address_family = family
    httpd = make_server(
        str(sockaddr[0]), port, make_wsgi_app(registry), Server, handler_class=Handler
    )
    threading.Thread(target=httpd.serve_forever, name=f"metrics:{port}", daemon=True).start()
    return httpd
