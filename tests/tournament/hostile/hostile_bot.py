"""A hostile bot: the SDK's random bot that, once its first decision is asked for (so the
tournament is running), attacks the machine in one way (``--attack``), in a thread, while it
keeps playing.

Every attempt prints one line to stdout: ``HOSTILE <attack>: BLOCKED <what>: <why>`` when it
failed, ``HOSTILE <attack>: LEAKED <what>`` when it got through, ``HOSTILE <attack>: DONE
<what>`` for an attempt whose containment the test checks from outside (a limit, a log cap).

Attacks (``--target`` names the files, pids and ports to go after; a file the test writes after
the run started, ``targets.json`` in this folder, gives the runner's and the server's pids):

- ``fork``: a fork bomb;
- ``memory``: a memory balloon, 16 MiB at a time;
- ``spin``: 8 threads spinning (in hashlib, which releases the GIL, so they use 8 cores);
- ``store``: opens ``tournament.sqlite`` for writing, and the run folder's other files;
- ``read``: reads another bot's folder and the token file;
- ``disk``: writes 64 MiB to stdout (64 times its log's cap), then 1 GB to a file;
- ``net``: connects to another port on 127.0.0.1 and to an outside address (192.0.2.1, TEST-NET);
- ``signal``: sends SIGKILL to the runner's and the server's pids;
- ``setsid``: starts a child in its own session that sleeps for ever.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from uno_bot.examples.random_bot import RandomBot

HERE = Path(__file__).resolve().parent


def say(attack: str, text: str) -> None:
    print(f"HOSTILE {attack}: {text}", flush=True)


def attempt(attack: str, what: str, fn: Any) -> None:
    try:
        fn()
    except OSError as exc:
        say(attack, f"BLOCKED {what}: {errno.errorcode.get(exc.errno or 0, '?')} {exc.strerror}")
    except Exception as exc:
        say(attack, f"BLOCKED {what}: {type(exc).__name__} {exc}")
    else:
        say(attack, f"LEAKED {what}")


def fork_bomb(a: argparse.Namespace) -> None:
    code = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    subprocess.Popen([sys.executable, "-c", code])
    say("fork", "DONE fork bomb started")


def balloon(a: argparse.Namespace) -> None:
    hold = []
    for i in range(1, 1000):
        hold.append(bytearray(16 * 2**20))
        for j in range(0, 16 * 2**20, 4096):
            hold[-1][j] = 1
        if i % 8 == 0:
            say("memory", f"DONE holding {16 * i} MiB")
    say("memory", "LEAKED 16 GiB held")


def spin(a: argparse.Namespace) -> None:
    data = b"x" * 2**20

    def loop() -> None:
        while True:
            hashlib.sha256(data).digest()

    for _ in range(8):
        threading.Thread(target=loop, daemon=True).start()
    say("spin", "DONE 8 threads spinning")


def store(a: argparse.Namespace) -> None:
    run = Path(a.target["run"])

    def write_store() -> None:
        with open(run / "tournament.sqlite", "r+b") as f:
            f.seek(0)
            f.write(b"hostile")

    attempt("store", "open tournament.sqlite for writing", write_store)

    def list_run() -> None:
        names = os.listdir(run)
        if not {"tournament.sqlite", "logs"} & set(names):
            raise FileNotFoundError(errno.ENOENT, f"the run folder shows {len(names)} entries")

    attempt("store", "list the run folder", list_run)
    attempt("store", "create a file in the run folder", lambda: open(run / "evil", "wb").close())


def read(a: argparse.Namespace) -> None:
    attempt("read", "read another bot's folder", lambda: os.listdir(a.target["victim"]))
    attempt("read", "read another bot's file", lambda: Path(a.target["victim_file"]).read_bytes())
    attempt("read", "read the token file", lambda: Path(a.target["tokens"]).read_bytes())
    attempt("read", "read the organiser's home", lambda: os.listdir(a.target["home"]))
    attempt("read", "write to its own folder", lambda: open(HERE / "evil", "wb").close())


CHUNK = b"y" * (2**20 - 1) + b"\n"


def flood_stdout() -> None:
    """64 MiB to stdout, started when the bot starts: 64 times the log's cap, and short enough
    to end within the bot's first hands on a busy machine, so the file attack after it runs
    while the tournament does (1 GB could outlast a 48-hand run, and the limit went unseen)."""
    for _ in range(64):
        os.write(1, CHUNK)
    say("disk", "DONE 64 MiB written to stdout")


FLOOD = threading.Thread(target=flood_stdout, daemon=True)


def disk(a: argparse.Namespace) -> None:
    FLOOD.join()
    chunk = CHUNK

    def big_file() -> None:
        with open("/tmp/big" if a.target.get("scratch") else HERE / "big", "wb") as f:
            for _ in range(1024):
                f.write(chunk)

    # A Python process ignores SIGXFSZ, so its write fails with EFBIG (tried in a child); this
    # bot has SIGXFSZ at its default, as a C program has, so it is killed, and the keeper
    # reports the limit
    child = (
        "import errno, sys\n"
        "try:\n"
        "    with open('/tmp/big-child', 'wb') as f:\n"
        "        for _ in range(1024):\n"
        "            f.write(b'z' * 2**20)\n"
        "    print('HOSTILE disk: LEAKED write 1 GB to a file (Python)', flush=True)\n"
        "except OSError as e:\n"
        "    print('HOSTILE disk: BLOCKED write 1 GB to a file (Python): '\n"
        "          + errno.errorcode[e.errno], flush=True)\n"
    )
    subprocess.run([sys.executable, "-c", child], check=False)
    attempt("disk", "write 1 GB to a file", big_file)


def net(a: argparse.Namespace) -> None:
    def connect(host: str, port: int) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(3)
        t0 = time.monotonic()
        try:
            s.connect((host, port))
        finally:
            s.close()
            say("net", f"DONE connect {host}:{port} took {time.monotonic() - t0:.3f} s")

    attempt(
        "net",
        f"connect 127.0.0.1:{a.target['port']}",
        lambda: connect("127.0.0.1", a.target["port"]),
    )
    attempt("net", "connect 192.0.2.1:80", lambda: connect("192.0.2.1", 80))


def signals(a: argparse.Namespace) -> None:
    path = HERE / "targets.json"
    for _ in range(100):
        if path.exists():
            break
        time.sleep(0.1)
    try:
        pids = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        say("signal", f"DONE no targets ({exc})")
        return
    for who in ("runner", "server"):
        pid = int(pids[who])
        attempt("signal", f"SIGKILL the {who} (pid {pid})", lambda pid=pid: os.kill(pid, 9))


def setsid_child(a: argparse.Namespace) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True:\n    time.sleep(1000)\n", a.target["tag"]],
        start_new_session=True,
    )
    say("setsid", f"DONE setsid child {proc.pid} sleeps for ever")


ATTACKS = {
    "fork": fork_bomb,
    "memory": balloon,
    "spin": spin,
    "store": store,
    "read": read,
    "disk": disk,
    "net": net,
    "signal": signals,
    "setsid": setsid_child,
}


class HostileBot(RandomBot):
    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__()
        self.args = args
        self.started = False

    def decide(self, request: Any, state: Any) -> int:
        if not self.started:
            self.started = True
            fn = ATTACKS[self.args.attack]
            threading.Thread(target=fn, args=(self.args,), daemon=True).start()
        return super().decide(request, state)


def main() -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--attack", required=True, choices=sorted(ATTACKS))
    pre.add_argument("--target", default="{}", help="JSON: paths, ports and pids to attack")
    ns, rest = pre.parse_known_args(sys.argv[1:])
    ns.target = json.loads(ns.target)
    if ns.attack == "disk":
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        FLOOD.start()
    return HostileBot(ns).main(rest)


if __name__ == "__main__":
    raise SystemExit(main())
