"""Shards: the partition, and whole runs that are killed and resumed.

* ``--shards 2`` on one machine (SQLite): the runner is killed with kill -9 mid-run, its shard
  workers, their servers and bots follow it, and ``resume --shards 2`` finishes the plan.
* Three shard processes started as the Kubernetes Indexed Job's pods are (the same command line
  as ``deploy/k8s/tournament-shards.yaml``) play one schedule into a real PostgreSQL; one is
  killed with kill -9 and started again.

Both must store every planned hand exactly once, with ratings identical to a one-process run of
the same seed. The bots are deterministic: the engine's heuristic with randomness 0 and the SDK's
example heuristic, both of which call UNO with the play that leaves them one card, so no UNO
window ever opens and no catch can depend on timing; decisions get 20 s, so no timeout (and no
stand-in) can depend on the machine's load. A hand is then a function of its deal seed alone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from uno_tournament.config import load
from uno_tournament.schedule import partition, plan, shard_units

from .pg import TempPostgres
from .test_resume import _alive, kill_at_observed_point

BOTS = ["h0", "h1", "p0", "p1", "p2"]
PLANNED = 120  # 5 bots: 5 tables x 24 hands


def bot_entries(names: list[str]) -> str:
    """Config entries of deterministic bots: h* the engine's heuristic, the rest the SDK's."""
    entries = []
    for n in names:
        module = (
            "uno_tournament.bots.graded" if n.startswith("h") else "uno_bot.examples.heuristic_bot"
        )
        extra = '"--randomness", "0", ' if n.startswith("h") else ""
        entries.append(
            f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "-m", "{module}", {extra}'
            '"--log-level", "warning"]\n'
        )
    return "\n".join(entries)


DETERMINISTIC = bot_entries(BOTS)


def write_config(folder: Path, name: str = "sh") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(
        f'[tournament]\nname = "{name}"\nseed = 11\nblocks = 1\nconcurrency = 4\n'
        f'output = "{folder / "out"}"\n'
        "[time_control]\ndecision_ms = 20000\n[faults]\nstartup_timeout_s = 60\n" + DETERMINISTIC
    )
    return path


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "uno_server.cli", *args]


def run_ok(*args: str, timeout: float = 300) -> str:
    res = subprocess.run(cli(*args), capture_output=True, text=True, timeout=timeout, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def ratings(results: Path) -> dict[str, tuple[float, float, float, int]]:
    board = json.loads(results.read_text())["leaderboard"]
    return {b["bot"]: (b["rating"], b["ci_low"], b["ci_high"], b["wins"]) for b in board}


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        kids = subprocess.run(
            ["pgrep", "-P", str(p)], capture_output=True, text=True, check=False
        ).stdout.split()
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A one-process run of the same schedule (SQLite, --shards 1): the ratings to match."""
    folder = tmp_path_factory.mktemp("reference")
    cfg = write_config(folder)
    out = folder / "one"
    run_ok("tournament", "run", str(cfg), "--shards", "1", "--out", str(out), "--quiet")
    return {"ratings": ratings(out / "results.json"), "out": out}


# ------------------------------------------------------------------------------ partition


def test_partition_covers_the_plan_once_balanced_and_by_seed() -> None:
    bots = [f"b{i}" for i in range(7)]
    hands = plan("p", bots, blocks=2, seed=5)
    for n in (1, 2, 3, 4, 7):
        parts = [partition(hands, i, n, 5) for i in range(n)]
        ids = [h.hand_id for p in parts for h in p]
        assert sorted(ids) == sorted(h.hand_id for h in hands)  # each hand exactly once
        deals = [len({(h.table, h.block, h.deal) for h in p}) for p in parts]
        assert max(deals) - min(deals) <= 1, deals
        for p in parts:  # a deal's 4 rotations stay together, in playing order
            assert [h.hand_id for h in p] == [h.hand_id for h in hands if h in set(p)]
            assert all(len([x for x in p if x.deal_id == h.deal_id]) == 4 for h in p)
    # the partition depends on the seed, the hands themselves never on the partition
    assert shard_units(hands, 3, 5) != shard_units(hands, 3, 6)
    by_id = {h.hand_id: h for h in hands}
    for h in partition(hands, 1, 3, 5):
        assert h == by_id[h.hand_id]


# ------------------------------------------------------------------------------ one machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def check_shard_metrics(port: int, completed_at_least: int = 30) -> None:
    """The runner's one /metrics page: its own series (shard "all"), and each shard's worker
    and game server series, every sample labelled with its tournament and shard."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    fams = list(text_string_to_metric_families(text))
    names = [f.name for f in fams]
    assert len(names) == len(set(names)), "one family per name"
    samples = [(f.name, smp) for f in fams for smp in f.samples]
    assert all("shard" in s.labels and "tournament" in s.labels for _, s in samples)

    def shards_of(name: str) -> set[str]:
        return {s.labels["shard"] for n, s in samples if n == name}

    assert shards_of("uno_hands") == {"0/2", "1/2"}  # each shard's game server
    assert shards_of("uno_tournament_event_loop_lag_max_seconds") == {"all", "0/2", "1/2"}
    assert shards_of("uno_tournament_hands_completed") == {"all"}  # the store's count, once
    completed = [s.value for n, s in samples if n == "uno_tournament_hands_completed"]
    assert completed[0] >= completed_at_least


def _page_has_all(port: int) -> bool:
    """The lingering page of a finished run counts every planned hand."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            text = resp.read().decode()
    except OSError:
        return False
    return any(
        ln.startswith("uno_tournament_hands_completed{") and float(ln.rsplit(" ", 1)[1]) == PLANNED
        for ln in text.splitlines()
    )


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def test_shards_2_kill9_of_the_runner_then_resume(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    """The kill comes at a point the test has seen (the store's stored-hand count, with the
    runner frozen), never after a sleep; the metrics page is checked on the resumed run, whose
    last values stay up for a last scrape, so no check stands between the count and the kill."""
    cfg = write_config(tmp_path)
    out = tmp_path / "two"
    db = out / "tournament.sqlite"
    proc = subprocess.Popen(
        cli("tournament", "run", str(cfg), "--shards", "2", "--out", str(out), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(lambda: proc.poll() is not None or _count(db) >= 1, "a first stored hand")
        # both shards play (no shard can finish its 60 hands before the other's first one is
        # stored): every worker, server and bot is there to be seen
        family: list[int] = []

        def everyone() -> bool:
            family[:] = descendants(proc.pid)
            return proc.poll() is not None or len(family) >= 2 * (1 + 1 + 5)

        # the runner is held while the family is counted (a pgrep per process is slow on a busy
        # machine, and the run must not end meanwhile): the workers block on their output pipes
        # after a few hands each, and the runner stores them once it goes on
        proc.send_signal(signal.SIGSTOP)
        try:
            wait_for(everyone, "both shards' workers, servers and bots")
        finally:
            proc.send_signal(signal.SIGCONT)
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        stored = kill_at_observed_point(proc, db, 30, PLANNED)
    finally:
        if proc.poll() is None:
            proc.kill()
        text = proc.communicate(timeout=30)[0]
    assert _count(db) == stored, text
    assert "2 shards, each with its own game server and bots" in text
    shards = json.loads((out / "shards.json").read_text())
    assert [s["shard"] for s in shards] == ["0/2", "1/2"] and all(s["addr"] for s in shards)
    # two workers, each with a server and five bots: all follow the runner (PR_SET_PDEATHSIG)
    assert len(family) >= 2 * (1 + 1 + 5)
    wait_for(lambda: not any(_alive(p) for p in family), "the shards' processes to exit", 30)

    port = free_port()
    resumed = subprocess.Popen(
        cli(
            "tournament",
            "resume",
            str(out),
            "--shards",
            "2",
            "--quiet",
            "--metrics-port",
            str(port),
            "--metrics-linger",
            "60",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(
            lambda: resumed.poll() is not None or _count(db) == PLANNED, "every hand stored", 300
        )
        assert resumed.poll() is None, resumed.stdout.read() if resumed.stdout else ""
        wait_for(lambda: _page_has_all(port), "the final metrics page", 60)
        check_shard_metrics(port, PLANNED)
        resumed.send_signal(signal.SIGINT)  # end the linger: the page was scraped
        text = resumed.communicate(timeout=120)[0]
    finally:
        if resumed.poll() is None:
            resumed.kill()
            resumed.communicate(timeout=30)
    assert f"{PLANNED} hands ({stored} done;" in text
    conn = sqlite3.connect(db)
    ids = [r[0] for r in conn.execute("SELECT hand_id FROM hands")]
    tid = json.loads(
        conn.execute("SELECT value FROM meta WHERE key = 'tournament_id'").fetchone()[0]
    )
    seats = conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    states = dict(conn.execute("SELECT shard, state FROM shards").fetchall())
    conn.close()
    assert states == {"0/2": "finished", "1/2": "finished"}  # what `tournament watch` shows
    print(
        f"--shards 2 with SQLite: planned {PLANNED}, stored {len(ids)}, duplicates "
        f"{len(ids) - len(set(ids))}; the runner killed at {stored} hands"
    )
    assert len(ids) == len(set(ids)) == PLANNED
    assert set(ids) == {h.hand_id for h in load(cfg).plan(tid)}
    assert seats == 4 * PLANNED
    got = ratings(out / "results.json")
    print("ratings (rating, CI low, CI high, wins):", got, "one process:", reference["ratings"])
    assert got == reference["ratings"]
    verified = run_ok("tournament", "verify", str(out))
    assert f"verified {PLANNED} of {PLANNED} stored hands" in verified
    # the runner's JSON log and each shard worker's, beside each shard's server log
    runner_log = [
        json.loads(x) for x in (out / "logs" / "tournament.log").read_text().split("\n") if x
    ]
    assert {e["shard"] for e in runner_log} == {"all"} and {
        e["tournament"] for e in runner_log
    } == {tid}
    assert [e["event"] for e in runner_log].count("run started") == 2  # the run and the resume
    for i in range(2):
        folder = out / "logs" / f"shard-{i}"
        assert (folder / "server.log").is_file()
        lines = (folder / "tournament.log").read_text().splitlines()
        events = [json.loads(x) for x in lines]
        assert {e["shard"] for e in events} == {f"{i}/2"}
        assert any(e["event"] == "shard finished" for e in events)


def test_shards_2_tell_an_external_bot_every_address(tmp_path: Path) -> None:
    """A bot that connects by itself plays on every shard: the runner names each shard's
    server in ``shards.json``, one copy of the bot connects to each, and the run finishes with
    the external bot in every hand, on both shards."""
    out = tmp_path / "out"
    cfg = tmp_path / "ext.toml"
    cfg.write_text(
        f'[tournament]\nname = "ext"\nseed = 3\nblocks = 1\nconcurrency = 4\noutput = "{out}"\n'
        "[time_control]\ndecision_ms = 20000\n[faults]\nstartup_timeout_s = 60\n"
        + bot_entries(BOTS[:3])
        + '\n[[bots]]\nname = "ext"\ntoken = "ext-token"\n'
    )
    proc = subprocess.Popen(
        cli("tournament", "run", str(cfg), "--shards", "2", "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    bots: list[subprocess.Popen[str]] = []
    try:

        def addresses() -> list[str]:
            path = out / "shards.json"
            if not path.exists():
                return []
            return [s["addr"] for s in json.loads(path.read_text()) if s["addr"]]

        wait_for(lambda: proc.poll() is not None or len(addresses()) == 2, "two shard addresses")
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        for addr in addresses():
            bots.append(
                subprocess.Popen(
                    [
                        *(sys.executable, "-m", "uno_bot.examples.heuristic_bot"),
                        *("--addr", addr, "--token", "ext-token", "--name", "ext"),
                        *("--log-level", "warning"),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            )
        text = proc.communicate(timeout=300)[0]
    finally:
        for p in [proc, *bots]:
            if p.poll() is None:
                p.kill()
                p.communicate(timeout=30)
    assert proc.returncode == 0, text
    assert f"shard addresses (for external bots): {out / 'shards.json'}" in text
    conn = sqlite3.connect(out / "tournament.sqlite")
    hands = conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    ext = conn.execute("SELECT COUNT(*) FROM seats WHERE bot = 'ext'").fetchone()[0]
    conn.close()
    assert hands == ext == 24  # 4 bots: one table of 6 deals x 4 rotations, ext in each hand
    split = re.search(r"0/2 (\d+) hands, 1/2 (\d+) hands", text)
    assert split and int(split[1]) > 0 and int(split[2]) > 0, text  # both shards played


# ------------------------------------------------------------------------------ many machines


JOB = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "shards" / "tournament-shards.yaml"


def pod_command(cfg: Path, index: int, out: Path) -> tuple[list[str], int]:
    """The Indexed Job's container command line (deploy/k8s/shards/tournament-shards.yaml) for
    pod ``index``, with this machine's paths and ports: the config file and the output folder
    are here, the game server and metrics ports are free ones on 127.0.0.1 (three pods share
    this machine). The store URL comes from UNO_ARENA_STORE, as in the pod. Returns the
    command and the Job's number of shards."""
    import yaml

    job = next(d for d in yaml.safe_load_all(JOB.read_text()) if d and d["kind"] == "Job")
    args: list[str] = job["spec"]["template"]["spec"]["containers"][0]["args"]
    here = {
        "/etc/uno-arena/tournament/tournament.toml": str(cfg),
        "--out=/work/arena": f"--out={out}",
        "--bind=0.0.0.0": "--bind=127.0.0.1",
        "--port=50051": "--port=0",
        "--metrics-host=0.0.0.0": "--metrics-host=127.0.0.1",
    }
    cmd = []
    for a in args:
        a = here.get(a, a).replace("$(JOB_COMPLETION_INDEX)", str(index))
        if a.startswith("--metrics-port="):
            a = f"--metrics-port={free_port()}"
        cmd.append(a)
    return cli(*cmd), int(job["spec"]["completions"])


def _pg_count(url: str, ids: set[str] | None = None) -> int:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            rows = [r[0] for r in conn.execute("SELECT hand_id FROM hands")]
    except psycopg.Error:
        return 0
    return len(rows) if ids is None else len(set(rows) & ids)


def test_three_pods_into_postgresql_one_killed_and_restarted(
    tmp_path: Path, postgres: TempPostgres, reference: dict[str, Any]
) -> None:
    db = postgres.new_database()
    url = postgres.url(db)
    cfg = write_config(tmp_path)

    env = {**os.environ, "UNO_ARENA_STORE": url}
    assert pod_command(cfg, 0, tmp_path)[1] == 3

    def start(i: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            pod_command(cfg, i, tmp_path / f"pod{i}")[0],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )

    pods = {i: start(i) for i in range(3)}
    try:
        wait_for(lambda: _pg_count(url) > 0, "the first stored hand")
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'tournament_id'").fetchone()
            assert row is not None
            tid = json.loads(row[0])
        full = load(cfg).plan(tid)
        mine = {h.hand_id for h in partition(full, 1, 3, 11)}
        wait_for(
            lambda: pods[1].poll() is not None or _pg_count(url, mine) >= 8,
            "8 hands of shard 1",
        )
        assert pods[1].poll() is None, "shard 1 finished before it could be killed"
        pods[1].send_signal(signal.SIGSTOP)  # held: it stores no more while its family is read
        family = descendants(pods[1].pid)
        pods[1].send_signal(signal.SIGKILL)
        first = pods[1].communicate(timeout=30)[0]
        stored_before = _pg_count(url, mine)
        assert stored_before < len(mine), first
        wait_for(lambda: not any(_alive(p) for p in family), "shard 1's server and bots", 30)
        pods[1] = start(1)  # Kubernetes retries the index with the same command
        outputs = {i: p.communicate(timeout=300)[0] for i, p in pods.items()}
        for i, p in pods.items():
            assert p.returncode == 0, outputs[i]
    finally:
        for p in pods.values():
            if p.poll() is None:
                p.kill()
                p.communicate(timeout=30)
    assert f"({stored_before} done;" in outputs[1]
    assert "shard 1/3 finished" in outputs[1]

    import psycopg

    with psycopg.connect(url) as conn:
        ids = [r[0] for r in conn.execute("SELECT hand_id FROM hands")]
        seats = conn.execute("SELECT COUNT(*) FROM seats").fetchone()
        replays = conn.execute("SELECT COUNT(*) FROM replays").fetchone()
        states: dict[str, str] = dict(conn.execute("SELECT shard, state FROM shards").fetchall())
    print(
        f"3 pods into PostgreSQL: planned {PLANNED}, stored {len(ids)}, duplicates "
        f"{len(ids) - len(set(ids))}; shard 1 killed at {stored_before} of its {len(mine)} hands"
    )
    assert len(ids) == len(set(ids)) == PLANNED
    assert set(ids) == {h.hand_id for h in full}
    assert seats == (4 * PLANNED,) and replays == (PLANNED,)
    assert states == {"0/3": "finished", "1/3": "finished", "2/3": "finished"}

    report_dir = tmp_path / "report"
    run_ok("tournament", "report", "--store", url, "--out", str(report_dir))
    assert ratings(report_dir / "results.json") == reference["ratings"]
    assert len(list((report_dir / "replays").glob("*.json"))) == PLANNED
    watched = run_ok("tournament", "watch", "--store", url, "--once")
    assert f"{PLANNED}/{PLANNED} hands" in watched and "every planned hand is stored" in watched


# ------------------------------------------------------------------------------ command line


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--shard", "1/3"], "--shard 1/3 plays one shard into a shared store: add --store"),
        (["--shard", "/3", "--store", "postgresql://u:p@h/d"], "the shard index is empty"),
        (["--shard", "3/3", "--store", "postgresql://u:p@h/d"], "the index must be 0-2"),
        (["--shard", "x", "--store", "postgresql://u:p@h/d"], "give I/N"),
        (["--shard", "0/2", "--shards", "2", "--store", "postgresql://u:p@h/d"], "not both"),
        (["--shards", "0"], "--shards must be 1-1024"),
        (["--shards", "2", "--server", "127.0.0.1:1"], "it cannot use --server"),
        (["--store", "mysql://u:p@h/d"], "give a postgresql:// URL"),
    ],
)
def test_shard_options_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], want: str
) -> None:
    from uno_server.cli import main as cli_main

    cfg = write_config(tmp_path)
    assert cli_main(["tournament", "run", str(cfg), "--quiet", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and want in err[0], err
    assert not (tmp_path / "out").exists()  # nothing started
