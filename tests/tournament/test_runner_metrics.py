"""The runner's metrics page: a `tournament` label on every runner series, a counter of stored
hands for the pace, process series of the runner and its server, a last scrape after the last
hand (--metrics-linger), and the embedded server's log in JSON."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from .helpers import bot_entry, write_config

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(url: str) -> list[Sample] | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            text = r.read().decode()
    except (OSError, http.client.HTTPException):  # not up yet, or gone while being read
        return None
    return [s for fam in text_string_to_metric_families(text) for s in fam.samples]


def value(samples: list[Sample], name: str, **labels: str) -> float | None:
    for s in samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return None


def test_metrics_page_labels_counts_and_lingers(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        [
            bot_entry("heur"),
            bot_entry("rand", "uno_bot.examples.random_bot"),
            bot_entry("heur2"),
            bot_entry("rand2", "uno_bot.examples.random_bot"),
        ],
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    args = ["tournament", "run", str(cfg), "--quiet", "--metrics-port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", *args, "--metrics-linger", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    last: list[Sample] | None = None
    complete: list[Sample] | None = None  # a scrape with every hand, runner's and server's
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            got = scrape(url)
            if got:
                last = got
                if (
                    value(got, "uno_tournament_hands_stored_total") == 24
                    and value(got, "uno_hands_total") == 24
                ):
                    complete = got
            time.sleep(0.2)
        out = proc.communicate(timeout=30)[0]
    finally:  # a failure above must not leave the run behind for a later test to meet
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert last is not None, out
    assert complete is not None, (
        "no scrape saw all 24 hands on both the runner's and the server's series: "
        f"last saw {value(last, 'uno_tournament_hands_stored_total')} and "
        f"{value(last, 'uno_hands_total')}\n{out}"
    )
    tid = re.search(r"tournament (\S+): 4 bots", out)
    assert tid, out
    runner = [s for s in complete if s.name.startswith("uno_tournament_")]
    assert runner
    for s in runner:
        assert s.labels.get("tournament") == tid.group(1), s
    assert value(complete, "uno_tournament_hands_completed") == 24
    for bot in ("heur", "rand", "heur2", "rand2"):  # created at zero when the run starts
        assert value(complete, "uno_tournament_bot_crashes_total", bot=bot) == 0, bot
    for who in ("runner", "server"):
        cpu = value(complete, "process_cpu_seconds_total", process=who)
        assert cpu is not None and cpu > 0, who
        assert value(complete, "python_info", process=who) == 1, who
    assert "final values stay up 3 s" in out
    # the ratings of every hand are on the page for that last scrape: refitted every 5 s while
    # play goes on, a run shorter than that had none at all (an examination's Grafana panels
    # showed "No data")
    for bot in ("heur", "rand", "heur2", "rand2"):
        assert value(last, "uno_tournament_rating", bot=bot) is not None, (bot, out)
        assert value(last, "uno_tournament_rating_ci_high", bot=bot) is not None, bot
    # the embedded server's log: JSON, line by line
    lines = (tmp_path / "out" / "logs" / "server.log").read_text().splitlines()
    assert lines
    for line in lines:
        rec = json.loads(line)
        assert rec["event"] and rec["level"] and rec["timestamp"], line


def test_the_shards_of_one_tournament_add_up_to_the_run(tmp_path: Path, pg_url: str) -> None:
    """Two pods of ``--shard I/2`` into one PostgreSQL store: both pages carry the same
    tournament id, and what the dashboards add up per tournament (stored, planned, the counter
    of stored hands, hands per bot) is the whole run."""
    cfg = write_config(
        tmp_path,
        [
            bot_entry("heur"),
            bot_entry("rand", "uno_bot.examples.random_bot"),
            bot_entry("heur2"),
            bot_entry("rand2", "uno_bot.examples.random_bot"),
        ],
        concurrency=4,
    )
    ports = [free_port(), free_port()]
    pods = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "uno_server.cli", "tournament", "run", str(cfg)),
                *("--shard", f"{i}/2", "--store", pg_url, "--out", str(tmp_path / f"pod{i}")),
                *("--metrics-port", str(port), "--metrics-linger", "4", "--quiet"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        for i, port in enumerate(ports)
    ]
    last: list[list[Sample] | None] = [None, None]
    deadline = time.monotonic() + 180
    try:
        while any(p.poll() is None for p in pods) and time.monotonic() < deadline:
            for i, port in enumerate(ports):
                got = scrape(f"http://127.0.0.1:{port}/metrics")
                if got:
                    last[i] = got
            time.sleep(0.2)
    finally:
        outs = [p.communicate(timeout=60)[0] for p in pods]
    assert [p.returncode for p in pods] == [0, 0], outs
    assert last[0] is not None and last[1] is not None, outs
    pages = [s for s in (last[0], last[1]) if s is not None]
    tids = {s.labels["tournament"] for page in pages for s in page if "tournament" in s.labels}
    assert len(tids) == 1, tids

    def total(name: str, **labels: str) -> float:
        return sum(v for page in pages if (v := value(page, name, **labels)) is not None)

    assert total("uno_tournament_hands_planned") == 24
    assert total("uno_tournament_hands_completed") == 24
    assert total("uno_tournament_hands_stored_total") == 24
    shares = [value(page, "uno_tournament_hands_stored_total") or 0 for page in pages]
    assert all(0 < n < 24 for n in shares), shares  # each pod its own share
    for bot in ("heur", "rand", "heur2", "rand2"):
        assert total("uno_tournament_bot_hands_total", bot=bot) == 24, bot  # in every hand
