"""``make bench-server-profile``: where the server's CPU per move goes, from a py-spy profile.

It runs the service part of ``make bench-server`` (16 tables of four Python SDK random bots in a
second process) under ``py-spy record --gil --native``, which samples the server's stacks, the
compiled (mypyc) engine and service modules included, while a thread holds the GIL. Each sample of
the event loop's thread is given to one part of the per-move path, by the deepest frame on its
stack that names one:

- receive: the bot stream's reader (``BotServicer._read``), decoding, the input limits;
- engine: the rules engine (``uno_server/engine``), applying moves and listing legal actions;
- view: what a seat may see: its SeatView and its new events, redacted and encoded;
- serialise: assembling DecisionRequests, batches and other messages into bytes;
- send: queueing for a bot stream and its writer task (``BotServicer._write``), including the
  Python side of gRPC's write;
- bookkeeping: the table's per-move state (requests, deadlines, records, latency and move
  metrics);
- matches: what each match costs once: CreateMatch, the deal (in a worker thread), MatchStarted,
  MatchEnded, the summary for the retention and freeing the table (the bench plays single-hand
  matches of about 60 moves back to back);
- event loop: asyncio and grpc.aio's Python side waking tasks, with no part of ours on the stack;
- bench driver: the benchmark's own code in the server's process (collecting each finished
  match's round trips; the CreateMatch driver runs in the clients' process).

The event loop thread's CPU time per move (measured by the benchmark itself) is split in the
proportions of its samples; the rest of the process's CPU per move ran in other threads (gRPC's
C core, the deal pool) and is its own row, so the rows add up to the measured CPU per move.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable

from uno_server.engine._build import COMPILED_MODULES as ENGINE_COMPILED
from uno_server.service._build import COMPILED_MODULES as SERVICE_COMPILED

PARTS = (
    "receive",
    "engine",
    "view",
    "serialise",
    "send",
    "bookkeeping",
    "matches",
    "event loop",
    "bench driver",
)
NATIVE = "other threads"  # gRPC's C core, the deal pool

# (part, predicate on one py-spy frame "function (path:line)"): the deepest frame that matches
# any rule names the part; rules are tried in this order for each frame.
_VIEW_FUNCS = (
    "seat_view ",
    "_seat_state ",
    "SeatLog.event_fields_for ",
    "SeatLog.events_for ",
    "SeatLog._event_field ",
    "SeatLog.flush ",
    "SeatLog._to_proto ",
    "SeatLog._convert ",
    "SeatLog.spectator_event ",
    "Table.spectator_event ",
    "public_event ",
    "event_to_proto ",
    "redact ",
    "remap_event ",
)
_SERIALISE_FUNCS = (
    "decision_request ",
    "request_static ",
    "batch ",
    "serialize ",
    "event_field ",
    "SerializeToString",
    "FromString",
    "CopyFrom",
    "_parse ",
)

_SEND_FUNCS = ("BotServicer._write ", "BotSession.send ")
_MATCH_FUNCS = (
    "AdminServicer.",
    "Arena.create ",
    "Arena.run_deal ",
    "Arena.prune ",
    "Arena._on_finish ",
    "Arena.new_match_id ",
    "Table.__post_init__ ",
    "Table.__init__ ",
    "Table._begin_hand ",
    "Table._match_started ",
    "Table.match_ended ",
    "Table.send_match_ended ",
    "Table._finish ",
    "Table.info ",
)


_ENGINE_MODULES = frozenset(ENGINE_COMPILED)
_SERVICE_MODULES = frozenset(SERVICE_COMPILED)
_NATIVE_MODULES = _ENGINE_MODULES | _SERVICE_MODULES
_WIRE_VIEW = frozenset({"seat_view", "_seat_state", "_play_order", "_card_message", "public_event"})
"""The compiled wire encoder's functions that build what a seat sees; its others serialise."""
_GENERATOR = re.compile(r"(?P<fn>.+?)_gen(?:___\w*)?")
_METHOD_OF = re.compile(r"(?P<method>.+)_(?P<cls>[A-Z]\w*)")


def from_native(frame: str) -> str | None:
    """The frame a compiled (mypyc) C function stands for, in py-spy's form for Python code
    (``Table._play_hand (uno_server/service/table.py)``), or None for any other frame.

    mypyc names a function ``CPyDef_<module>___<Class>___<method>`` (``CPyPy_`` for its Python
    entry point), the body of a coroutine ``<method>_<Class>_gen___<helper>``, and a module
    compiled alone without the module prefix (the wire encoder's first builds). Attributing the
    compiled frames as their sources keeps the profile's parts the same in either build."""
    if not frame.startswith(("CPyDef_", "CPyPy_")):
        return None
    name = frame.split(" ", 1)[0].split("_", 1)[1]
    module, sep, rest = name.partition("___")
    if not sep or module not in _NATIVE_MODULES:
        module, rest = "wire", name
    generator = _GENERATOR.fullmatch(rest)
    if generator is not None:
        method = _METHOD_OF.fullmatch(generator["fn"])
        rest = f"{method['cls']}.{method['method']}" if method else generator["fn"]
    qualname = rest.replace("___", ".")
    package = "engine" if module in _ENGINE_MODULES else "service"
    return f"{qualname} (uno_server/{package}/{module}.py)"


def part_of(frame: str) -> str | None:
    """The part one stack frame belongs to, or None if it names none (a helper, asyncio...)."""
    native = from_native(frame)
    if native is not None:
        if "service/wire.py" in native:  # compiled, each of the encoder's functions is a part
            name = native.split(" ", 1)[0]
            return "view" if name in _WIRE_VIEW else "serialise"
        frame = native
    if "uno_server/engine/" in frame:
        return "engine"
    if frame.startswith(_VIEW_FUNCS):
        return "view"
    if frame.startswith(_SERIALISE_FUNCS) or "service/convert.py" in frame:
        return "serialise"
    if frame.startswith("BotServicer._read ") or "service/limits.py" in frame:
        return "receive"
    if frame.startswith(_SEND_FUNCS) or "asyncio/queues.py" in frame:
        return "send"
    if "uno_server/benchmarks/" in frame or "grpc/aio/_call.py" in frame:
        return "bench driver"
    if frame.startswith(_MATCH_FUNCS):
        return "matches"
    if frame.startswith(
        ("Table.", "SeatLog.", "RequestDesk.", "Arena.", "AdminServicer.", "Seat.", "Record.")
    ):
        return "bookkeeping"
    if "prometheus_client/" in frame or "structlog/" in frame or "service/metrics.py" in frame:
        return "bookkeeping"
    return None


def attribute(lines: Iterable[str]) -> Counter[str]:
    """Samples per part from py-spy's raw (collapsed) output: ``frame;frame;... count``. Only
    the event loop's thread counts (the stack holds ``run_until_complete``): the deal pool's
    threads are idle here, and their waits would be noise. Only the frames below the callback
    the loop is running (``Handle._run``) are looked at: above it is the loop itself."""
    parts: Counter[str] = Counter()
    for line in lines:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack or not n.isdigit() or "run_until_complete" not in stack:
            continue
        frames = stack.split(";")
        steps = [i for i, f in enumerate(frames) if f.startswith("Handle._run ")]
        part = "event loop"
        for frame in frames[steps[-1] + 1 if steps else len(frames) :]:  # the deepest wins
            p = part_of(frame)
            if p is not None:
                part = p
        parts[part] += int(n)
    return parts


def table(parts: Counter[str], loop_us: float, cpu_us: float) -> list[tuple[str, float]]:
    """(part, µs per move) rows: the event loop thread's CPU per move split in the proportions
    of its samples, then the rest of the process's CPU per move (other threads)."""
    total = sum(parts[p] for p in PARTS) or 1
    rows = [(p, loop_us * parts[p] / total) for p in PARTS]
    rows.append((NATIVE, max(0.0, cpu_us - loop_us)))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=15.0, help="length of the run (default 15)")
    ap.add_argument("--tables", type=int, default=16, help="concurrent tables (default 16)")
    ap.add_argument("--rate", type=int, default=100, help="py-spy samples per second (100)")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or not 1 <= args.tables <= 1000 or not 10 <= args.rate <= 1000:
        print(
            "bench-server-profile: --seconds must be positive, --tables 1-1000, --rate 10-1000",
            file=sys.stderr,
        )
        return 2
    spy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or shutil.which("py-spy")
    if spy is None:
        print(
            "bench-server-profile: py-spy is not installed; `make bench-server-profile` installs "
            "it, or run: pip install py-spy",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "profile.txt")
        cmd = [
            spy, "record", "--gil", "--native", "--rate", str(args.rate),
            "--format", "raw", "--output", raw, "--",
            sys.executable, "-m", "uno_server.benchmarks.server", "--service-only", "--json",
            "--seconds", str(args.seconds), "--tables", str(args.tables),
        ]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        figures = next((json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")), None)
        if done.returncode != 0 or figures is None or not os.path.exists(raw):
            print(done.stdout + done.stderr, file=sys.stderr)
            print(
                "bench-server-profile: the profiled run failed (py-spy needs ptrace: run as "
                "root or with CAP_SYS_PTRACE)",
                file=sys.stderr,
            )
            return 1
        with open(raw, encoding="utf-8") as f:
            parts = attribute(f)
    moves = int(figures["moves"])
    cpu_us = float(figures["server_cpu_us_per_move"])
    rows = table(parts, float(figures["loop_thread_cpu_us_per_move"]), cpu_us)
    print(
        f"server CPU per move, {moves:,} moves at {figures['moves_per_s']:.0f} moves/s "
        f"(slowed by the profiler), {args.tables} tables, {sum(parts.values()):,} samples:"
    )
    width = max(len(p) for p, _ in rows)
    for p, us in rows:
        bar = "#" * round(us / max(cpu_us, 1) * 40)
        print(f"  {p:<{width}}  {us:6.1f} us  {100 * us / max(cpu_us, 1):5.1f}%  {bar}")
    summary = ", ".join(f"{p} {us:.0f}" for p, us in rows)
    print(f"bench-server-profile: {cpu_us:.0f} us CPU/move = {summary} (us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
