"""The bot's one way out of its network namespace (standard library only; run with ``-I -S``).

``inner PORT SOCKET -- COMMAND...`` runs inside the sandbox: it listens on ``127.0.0.1:PORT`` of
the bot's own network namespace, relays every connection to the Unix socket ``SOCKET`` (bound
into the sandbox from the runner's side), and once it listens runs ``COMMAND`` in its place. So
a bot keeps the ``{addr}`` it would have without the sandbox, and can reach nothing else.

``host SOCKET HOST:PORT`` runs on the runner's side: it listens on the Unix socket and relays to
the game server's TCP port.

Both use ``socat`` (Debian package ``socat``) when it is installed, and a small relay of their own
otherwise (two threads per connection).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import threading
import time


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(262144):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            src.shutdown(socket.SHUT_RD)


def _serve(listener: socket.socket, connect: tuple[int, object]) -> None:
    family, address = connect
    while True:
        conn, _ = listener.accept()
        try:
            out = socket.socket(family, socket.SOCK_STREAM)
            out.connect(address)  # type: ignore[arg-type]
        except OSError:
            conn.close()
            continue
        for s in (conn, out):
            if s.family != socket.AF_UNIX:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_pipe, args=(conn, out), daemon=True).start()
        threading.Thread(target=_pipe, args=(out, conn), daemon=True).start()


def _listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:``port`` in this network namespace."""
    want = f"0100007F:{port:04X}"
    try:
        with open("/proc/net/tcp") as f:
            return any(ln.split()[1] == want and ln.split()[3] == "0A" for ln in f.readlines()[1:])
    except OSError:
        return False


def inner(port: int, sock: str, command: list[str]) -> None:
    socat = shutil.which("socat")
    if socat:
        pid = os.fork()
        if pid == 0:
            os.execv(
                socat,
                [
                    "socat",
                    f"TCP4-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,nodelay",
                    f"UNIX-CONNECT:{sock}",
                ],
            )
        deadline = time.monotonic() + 5.0
        while not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.002)
    else:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        if os.fork() == 0:
            _serve(listener, (socket.AF_UNIX, sock))
            os._exit(0)
        listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"cannot start {command[0]}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)


def host(sock: str, target: str) -> None:
    hostname, _, port = target.rpartition(":")
    hostname = hostname.strip("[]")
    socat = shutil.which("socat")
    if socat:
        os.execv(
            socat,
            [
                "socat",
                f"UNIX-LISTEN:{sock},fork,mode=600",
                f"TCP:{target if ':' not in hostname else '[' + hostname + ']:' + port},nodelay",
            ],
        )
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock)
    os.chmod(sock, 0o600)
    listener.listen(256)
    info = socket.getaddrinfo(hostname, int(port), type=socket.SOCK_STREAM)[0]
    _serve(listener, (info[0], info[4]))


def main(argv: list[str]) -> None:
    if len(argv) >= 4 and argv[0] == "inner" and argv[3] == "--":
        inner(int(argv[1]), argv[2], argv[4:])
    elif len(argv) == 3 and argv[0] == "host":
        host(argv[1], argv[2])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
