"""make bench-server and make bench-server-profile, reduced: short real runs, and the profile's
attribution of stacks to the parts of the per-move path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from uno_server.benchmarks.breakdown import NATIVE, PARTS, attribute, from_native, part_of, table

LOOP = (
    "main (uno_server/benchmarks/server.py:250);run (asyncio/runners.py:190);"
    "BaseEventLoop.run_until_complete (asyncio/base_events.py:640);"
    "BaseEventLoop._run_once (asyncio/base_events.py:1922)"
)
STEP = LOOP + ";Handle._run (asyncio/events.py:80)"


def test_each_sample_goes_to_the_deepest_part_on_its_stack() -> None:
    raw = [
        # an answer: read, submitted, applied by the engine
        STEP + ";BotServicer._read (uno_server/service/server.py:1084);"
        "BotServicer._action (uno_server/service/server.py:1161);"
        "Table.submit (uno_server/service/table.py:547);"
        "Table._apply (uno_server/service/table.py:464);"
        "Match.apply (uno_server/engine/match.py:86) 7",
        # the same answer, in the table's own code
        STEP + ";BotServicer._read (uno_server/service/server.py:1084);"
        "Table.submit (uno_server/service/table.py:581) 5",
        # the reader alone
        STEP + ";BotServicer._read (uno_server/service/server.py:1032) 3",
        # a view's varints are the view's, not serialisation's
        STEP + ";Table.run (uno_server/service/table.py:277);"
        "Table._send_request (uno_server/service/table.py:740);"
        "seat_view (uno_server/service/wire.py:194);varint (uno_server/service/wire.py:74) 11",
        STEP + ";Table.run (uno_server/service/table.py:277);"
        "decision_request (uno_server/service/wire.py:368);uint (uno_server/service/wire.py:94) 2",
        STEP + ";BotServicer._write (uno_server/service/server.py:1012) 13",
        STEP + ";AdminServicer.CreateMatch (uno_server/service/server.py:1276);"
        "Arena.create (uno_server/service/server.py:400) 4",
        STEP + ";_service.<locals>.table (uno_server/benchmarks/server.py:206) 1",
        STEP + ";Queue.get (asyncio/queues.py:160) 6",
        LOOP + ";EpollSelector.select (selectors.py:468) 17",  # the loop itself
        "Thread._bootstrap (threading.py:1002);_worker (concurrent/futures/thread.py:81) 99",
        "",
    ]
    parts = attribute(raw)
    assert parts == {
        "engine": 7,
        "bookkeeping": 5,
        "receive": 3,
        "view": 11,
        "serialise": 2,
        "send": 13 + 6,
        "matches": 4,
        "bench driver": 1,
        "event loop": 17,
    }
    assert part_of("Match.apply (uno_server/engine/match.py:86)") == "engine"
    assert part_of("varint (uno_server/service/wire.py:74)") is None
    # the table's parts: its seat log builds views, its request desk is bookkeeping
    assert part_of("SeatLog.event_fields_for (uno_server/service/seat_log.py:200)") == "view"
    assert part_of("SeatLog.flush (uno_server/service/seat_log.py:240)") == "view"
    assert part_of("RequestDesk.open (uno_server/service/request_desk.py:80)") == "bookkeeping"


def test_the_rows_add_up_to_the_measured_cpu_per_move() -> None:
    parts = attribute(
        [
            STEP + ";BotServicer._write (uno_server/service/server.py:1012) 30",
            STEP + ";Table.run (uno_server/service/table.py:277);"
            "CPyPy_wire___seat_view (_native__native.c:100);"
            "CPyDef_wire___seat_view (_native__native.c:90);"
            "CPyDef_hand___Hand___legal_actions (__native__native.c:5) 10",
            STEP + ";Table.run (uno_server/service/table.py:277);"
            "CPyDef_wire___decision_request (_native__native.c:300) 20",
            STEP + ";Table.run (uno_server/service/table.py:277);"
            "CPyDef_wire___public_event (_native__native.c:400) 40",
        ]
    )
    assert parts == {"send": 30, "engine": 10, "serialise": 20, "view": 40}
    rows = dict(table(parts, loop_us=150.0, cpu_us=180.0))
    assert list(rows) == [*PARTS, NATIVE]
    assert rows["send"] == pytest.approx(45.0)  # 30 of 100 samples of 150 µs
    assert rows["view"] == pytest.approx(60.0)
    assert rows[NATIVE] == pytest.approx(30.0)
    assert sum(rows.values()) == pytest.approx(180.0)


def test_the_compiled_wire_encoder_is_told_apart_by_its_function_names() -> None:
    # built alone, mypyc names the wire module's C functions without a module prefix
    assert part_of("CPyPy_seat_view (__native__native.c:4702)") == "view"
    assert part_of("CPyDef__seat_state (__native__native.c:1)") == "view"
    assert part_of("CPyDef_public_event (__native__native.c:8485)") == "view"
    assert part_of("CPyDef_decision_request (__native__native.c:5952)") == "serialise"
    assert part_of("CPyDef__ts_body (__native__native.c:5262)") == "serialise"
    assert part_of("CPyDef_batch (__native__native.c:4825)") == "serialise"
    assert part_of("CPyDef_hand___Hand___apply (__native__native.c:5)") == "engine"


def test_the_compiled_service_modules_count_as_their_sources_do() -> None:
    """With table, seat_log, request_desk, limits and convert compiled, their C functions fall
    in the parts their Python frames fall in: a compiled build changes no row's meaning."""
    pairs = [
        ("CPyDef_table___Table___run (_native__mypyc.so)", "Table.run (service/table.py:182)"),
        ("CPyDef_table____play_hand_Table_gen_____mypyc_generator_helper__ (x.so)",
         "Table._play_hand (uno_server/service/table.py:224)"),
        ("CPyDef_table___Table____finish (x.so)", "Table._finish (uno_server/service/table.py:1)"),
        ("CPyDef_seat_log___SeatLog___flush (x.so)",
         "SeatLog.flush (uno_server/service/seat_log.py:240)"),
        ("CPyPy_request_desk___RequestDesk___open (x.so)",
         "RequestDesk.open (uno_server/service/request_desk.py:80)"),
        ("CPyDef_limits____Walker___fail (x.so)", "_Walker.fail (uno_server/service/limits.py:9)"),
        ("CPyDef_convert___event_to_proto (x.so)",
         "event_to_proto (uno_server/service/convert.py:50)"),
        ("CPyDef_views___seat_view (x.so)", "seat_view (uno_server/engine/views.py:30)"),
    ]  # fmt: skip
    got = [(part_of(native), part_of(source)) for native, source in pairs]
    assert got == [
        ("bookkeeping", "bookkeeping"),
        ("bookkeeping", "bookkeeping"),
        ("matches", "matches"),
        ("view", "view"),
        ("bookkeeping", "bookkeeping"),
        ("receive", "receive"),
        ("view", "view"),
        ("engine", "engine"),
    ]
    assert from_native("CPyDef_table___Table_____post_init__ (x.so)") == (
        "Table.__post_init__ (uno_server/service/table.py)"
    )
    assert from_native("Table.run (uno_server/service/table.py:182)") is None


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_bench_server_runs_and_prints_its_figures() -> None:
    done = _run("uno_server.benchmarks.server", "--seconds", "2", "--tables", "4")
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    m = re.fullmatch(
        r"bench-server: (\d+) moves/s, floor (\d+) round-trips/s, ratio ([\d.]+), "
        r"p50 ([\d.]+) ms, p99 ([\d.]+) ms, server (\d+) us CPU/move, 4 tables, (\d+) errors",
        last,
    )
    assert m, last
    moves, floor, ratio = int(m[1]), int(m[2]), float(m[3])
    assert moves > 0 and floor > 0 and ratio == pytest.approx(moves / floor, abs=0.01)
    assert int(m[6]) > 0 and m[7] == "0"


def test_bench_server_refuses_bad_options_in_one_line() -> None:
    done = _run("uno_server.benchmarks.server", "--tables", "0")
    assert done.returncode == 2
    assert done.stderr.strip() == "bench-server: --tables must be 1-1000"


def test_the_profile_breaks_the_cpu_per_move_down() -> None:
    if shutil.which("py-spy", path=os.path.dirname(sys.executable)) is None:
        assert os.environ.get("CI") != "true", "py-spy is in the dev extras: CI must have it"
        pytest.skip("py-spy is not installed (pip install py-spy)")
    done = _run("uno_server.benchmarks.breakdown", "--seconds", "3", "--tables", "4")
    if done.returncode == 1 and "ptrace" in done.stderr and os.environ.get("CI") != "true":
        pytest.skip("py-spy may not trace processes here (no CAP_SYS_PTRACE)")
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"bench-server-profile: (\d+) us CPU/move = (.*) \(us\)", last)
    assert m, last
    rows = dict(kv.rsplit(" ", 1) for kv in m[2].split(", "))
    assert list(rows) == [*PARTS, NATIVE]
    us = {k: float(v) for k, v in rows.items()}
    assert sum(us.values()) == pytest.approx(float(m[1]), abs=len(us))  # rounded to whole µs
    for part in ("receive", "send", "bookkeeping"):
        assert us[part] > 0, (part, done.stdout)
    # the compiled engine and service modules are seen too (py-spy --native), not lost to callers
    assert us["engine"] + us["view"] + us["serialise"] > 0, done.stdout


def test_a_match_that_never_ends_stops_the_bench_with_one_line_not_a_hang() -> None:
    # a subprocess, as make runs it: the bench configures logging and the GC process-wide
    done = _run(
        "uno_server.benchmarks.server",
        "--service-only",
        "--seconds",
        "2",
        "--tables",
        "2",
        "--match-timeout",
        "0.001",
    )
    assert done.returncode == 1, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert re.fullmatch(r"bench-server: match \S+ did not end within 0.001 s .*", lines[-2])
    assert lines[-1].startswith("bench-server: the bench's clients process (bots and driver)")
    assert "Traceback" not in done.stderr
