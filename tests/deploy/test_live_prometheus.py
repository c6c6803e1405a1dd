"""A real Prometheus scrapes two live tournaments; every dashboard query must show real data.

The scenario provokes every event a panel shows:

* tournament A is deploy/tournament/arena.toml (one block, 120 hands) against an external
  ``uno-arena serve`` (the Compose and Kubernetes setup). Its flaky bot times out, sends illegal
  actions, drops its stream every few seconds and crashes now and then (the runner restarts it:
  a bot crash, and a takeover since it stays away past a short reconnect grace, and
  BOT_NOT_CONNECTED errors while the runner waits for it). The test cancels one running match
  (the runner plays that hand again: a hand retry) and opens a stream with a wrong token (a
  server error).
* tournament B runs at the same time on two shards of one machine (``--shards 2``: two shard
  workers, each with its own embedded server and bots), 24 hands, two of its bots named as two
  of A's, so that the runs could mix; its shards must add up to one run.

Both runners hold their metrics up for a last scrape (--metrics-linger) until the test has seen
Prometheus scrape them after the wait began, then Ctrl-C ends the wait: an observed point, not
a few seconds that a busy machine may not give (issue 21, item 3). Then every panel query
of both dashboards is evaluated as a RANGE query over the whole run, with Grafana's variables
filled in as Grafana would ($__rate_interval for a 1 s scrape interval; $bot as All and as the
flaky bot; $tournament as All), and each must return a non-zero value at some point. Each
metric name of every query is then misspelt in turn: the same check must fail, naming the panel.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import grpc

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc

from .common import DASHBOARDS, DEPLOY, ROOT, load_json, need_tool, panels

RATE_INTERVAL = "4s"  # Grafana's $__rate_interval for a 1 s scrape interval
DEADLINE_S = 600.0  # a hang, not a pace: the runs take about a minute on a quiet machine
ADMIN = "live-test-admin-token"
FLAKY = "py-flaky"
METRIC = re.compile(r"\b(uno_[a-z0-9_]+|up|process_[a-z0-9_]+)\b(?=\s*[{\[)])")

Target = tuple[str, str, str, str]  # dashboard, panel title, refId, expr (with variables)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def instant(prom: str, expr: str) -> list[dict[str, Any]]:
    res = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert res["status"] == "success", (expr, res)
    data: list[dict[str, Any]] = res["data"]["result"]
    return data


def query_range(prom: str, expr: str, start: float, end: float) -> list[dict[str, Any]]:
    q = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": "1"}
    res = get(f"{prom}/api/v1/query_range?" + urllib.parse.urlencode(q))
    assert res["status"] == "success", (expr, res)
    data: list[dict[str, Any]] = res["data"]["result"]
    return data


def fill(expr: str, bot: str, tournament: str = ".*") -> str:
    return (
        expr.replace("$__rate_interval", RATE_INTERVAL)
        .replace("$bot", bot)
        .replace("$tournament", tournament)
    )


def targets(models: dict[str, dict[str, Any]]) -> list[Target]:
    out = []
    for name, model in models.items():
        for p in panels(model):
            for t in p.get("targets", []):
                out.append((name, p["title"], t["refId"], t["expr"]))
    return out


def largest(series: list[dict[str, Any]]) -> float:
    """The largest absolute value of a range result (0 for no data)."""
    vals = [abs(float(v)) for s in series for _, v in s["values"] if v not in ("NaN", "+Inf")]
    return max(vals, default=0.0)


def check(
    prom: str, tgts: list[Target], start: float, end: float
) -> tuple[list[str], dict[str, float]]:
    """Problems (each naming its dashboard, panel and query), and the largest value of every
    query for bot=All and bot=FLAKY."""
    problems, seen = [], {}
    for dash, title, ref, expr in tgts:
        for bot in (".*", FLAKY):
            key = f"{dash} / {title} / {ref} [bot={'All' if bot == '.*' else bot}]"
            res = query_range(prom, fill(expr, bot), start, end)
            seen[key] = largest(res)
            if not res:
                problems.append(f"{key}: no data ({fill(expr, bot)})")
            elif seen[key] < 1e-9:  # zero, or rounding noise (an average of ratings is 0)
                raw = {
                    m: [
                        (r["metric"].get("instance"), [v for _, v in r["values"]])
                        for r in query_range(prom, m, start, end)
                    ]
                    for m in METRIC.findall(expr)
                }
                problems.append(f"{key}: only zeros ({fill(expr, bot)}); raw maxima: {raw}")
    return problems, seen


def mutations(tgts: list[Target]) -> Iterator[tuple[str, list[Target]]]:
    """For each metric name, the queries that use it, with the name misspelt."""
    names = sorted({m for *_, expr in tgts for m in METRIC.findall(expr)})
    for name in names:
        typo = re.compile(rf"\b{re.escape(name)}\b")
        yield (
            name,
            [(d, t, r, typo.sub(name + "_typo", e)) for d, t, r, e in tgts if typo.search(e)],
        )


def wait_for(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    """Until ``url`` answers (the server serves its metrics once its gRPC port is up)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        assert proc.poll() is None, f"the server exited with status {proc.returncode}"
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {timeout_s:g} s")


def wait_scraped(prom: str, job: str, timeout_s: float = 60) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        with contextlib.suppress(OSError):
            if any(r["value"][1] == "1" for r in instant(prom, f'up{{job="{job}"}}')):
                return
        time.sleep(0.2)
    raise AssertionError(f"Prometheus did not scrape {job} within {timeout_s:g} s")


@contextlib.contextmanager
def processes(log: IO[str]) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    try:
        yield procs
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()


def last_scrape(prom: str, job: str) -> float:
    """When Prometheus last scraped ``job`` (its clock, Unix seconds; 0 before the first)."""
    with contextlib.suppress(OSError):
        stamps = instant(prom, f'timestamp(up{{job="{job}"}})')
        return max(
            (float(r["value"][1]) for r in stamps),
            default=0.0,
        )
    return 0.0


def release_lingering(
    prom: str, runner: subprocess.Popen[bytes], out: Path, job: str, seen: dict[str, float]
) -> None:
    """A runner that has played every hand holds its metrics page open (--metrics-linger) for a
    last scrape: once Prometheus has scraped it after the test saw the wait begin, Ctrl-C ends
    the wait (an observed point, not a number of seconds a quiet machine needs)."""
    if job not in seen:
        if "final values stay up" in out.read_text():
            seen[job] = time.time()
        return
    if seen[job] > 0 and last_scrape(prom, job) > seen[job] + 1.0:  # began after the wait did
        runner.send_signal(signal.SIGINT)  # once: a second Ctrl-C would interrupt the exit
        seen[job] = -1.0


def write_configs(tmp: Path, grpc_port: int, server_metrics: int) -> tuple[Path, Path, Path]:
    arena_text = (DEPLOY / "tournament" / "arena.toml").read_text()
    tokens = dict(re.findall(r'name = "([^"]+)"\ntoken = "([^"]+)"', arena_text))
    server = tmp / "server.toml"
    server.write_text(
        f'[server]\nhost = "127.0.0.1"\nport = {grpc_port}\nmetrics_port = {server_metrics}\n'
        f'admin_token = "{ADMIN}"\ndrain_timeout_s = 1\n[bots]\n'
        + "".join(f'"{n}" = "{t}"\n' for n, t in tokens.items())
    )
    a = arena_text.replace("{config_dir}", str(DEPLOY / "tournament"))
    for old, new in (
        ('"--slow", "0.02"', '"--slow", "0.08"'),
        ('"--illegal", "0.02"', '"--illegal", "0.05"'),
        ('"--disconnect-every", "8"', '"--disconnect-every", "3", "--crash-after", "4"'),
        ("reconnect_grace_ms = 5000", "reconnect_grace_ms = 300"),
    ):
        assert old in a, old
        a = a.replace(old, new)
    arena = tmp / "arena.toml"
    arena.write_text(a)
    bot = (
        '[[bots]]\nname = "{name}"\ncommand = ["{{python}}", "-m", "{module}", '
        '"--log-level", "warning"]\n'
    )
    second = tmp / "second.toml"
    second.write_text(
        '[tournament]\nname = "second"\nseed = 3\nblocks = 1\nconcurrency = 4\n'
        f'output = "{tmp / "second"}"\n[faults]\nstartup_timeout_s = 60\n'
        + bot.format(name="py-heuristic", module="uno_bot.examples.heuristic_bot")
        + bot.format(name="py-random-card", module="uno_bot.examples.random_bot")
        + bot.format(name="b-heuristic", module="uno_bot.examples.heuristic_bot")
        + bot.format(name="b-random", module="uno_bot.examples.random_bot")
    )
    return server, arena, second


def provoke(prom: str, grpc_addr: str, state: dict[str, bool]) -> None:
    """Once Prometheus has scraped tournament A a few times: cancel one of its running matches
    (a hand retry) and open a stream with a wrong token (a server error)."""
    if state.get("done"):
        return
    try:
        scrapes = instant(prom, 'count_over_time(up{job="uno-tournament"}[1m])')
        stored = instant(prom, 'uno_tournament_hands_stored_total{job="uno-tournament"}')
    except OSError:
        return  # Prometheus still starting
    if not scrapes or float(scrapes[0]["value"][1]) < 3 or not stored:
        return
    md = (("authorization", f"Bearer {ADMIN}"),)
    with grpc.insecure_channel(grpc_addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)
        running = admin.ListMatches(
            admin_pb2.ListMatchesRequest(states=[admin_pb2.MATCH_STATE_RUNNING]),
            metadata=md,
            timeout=5,
        ).matches
        if not running:
            return
        try:
            admin.CancelMatch(
                admin_pb2.CancelMatchRequest(match_id=running[0].match_id, reason="live test"),
                metadata=md,
                timeout=5,
            )
        except grpc.RpcError as err:  # it ended meanwhile: another one at the next turn
            assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err
            return
        stub = bot_pb2_grpc.BotServiceStub(ch)
        call = stub.Play(
            iter([bot_pb2.PlayRequest()]),
            metadata=(("authorization", "Bearer not-a-token"),),
            timeout=5,
        )
        try:
            for _ in call:
                pass
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    state["done"] = True


def test_every_panel_shows_real_data_and_a_typo_names_its_panel(tmp_path: Path) -> None:
    prometheus = need_tool("prometheus")
    grpc_port, server_metrics, runner_a, runner_b, prom_port = (free_port() for _ in range(5))
    prom = f"http://127.0.0.1:{prom_port}"
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n"
        + "".join(
            f"  - job_name: {job}\n    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n"
            for job, port in (
                ("uno-server", server_metrics),
                ("uno-tournament", runner_a),
                ("uno-tournament-second", runner_b),
            )
        )
    )
    server_cfg, arena, second = write_configs(tmp_path, grpc_port, server_metrics)
    cli = [sys.executable, "-m", "uno_server.cli"]
    log = (tmp_path / "logs.txt").open("w")  # closed by processes() with the processes
    start = time.time()
    state: dict[str, bool] = {}
    with processes(log) as procs, contextlib.ExitStack() as stack:
        procs.append(
            subprocess.Popen(
                [
                    prometheus,
                    f"--config.file={cfg}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        procs.append(
            subprocess.Popen(
                [*cli, "serve", "--config", str(server_cfg), "--log-level", "warning"],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        )
        wait_for(f"http://127.0.0.1:{server_metrics}/metrics", procs[-1])
        wait_scraped(prom, "uno-server")  # so that its series are seen at 0 before the run
        # the final values stay up until Prometheus has scraped them (see release_lingering)
        common = ["--blocks", "1", "--quiet", "--metrics-linger", str(int(DEADLINE_S))]
        outs = [tmp_path / "runner-a.txt", tmp_path / "runner-b.txt"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        handles = [stack.enter_context(o.open("w")) for o in outs]
        runners = [
            subprocess.Popen(
                [
                    *cli,
                    *("tournament", "run", str(arena), "--out", str(tmp_path / "a")),
                    *("--server", f"127.0.0.1:{grpc_port}", "--admin-token", ADMIN),
                    *("--metrics-port", str(runner_a), *common),
                ],
                stdout=handles[0],
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env=env,
            ),
            subprocess.Popen(
                [
                    *(*cli, "tournament", "run", str(second), "--shards", "2"),
                    *("--metrics-port", str(runner_b), *common),
                ],
                stdout=handles[1],
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env=env,
            ),
        ]
        procs.extend(runners)
        lingering: dict[str, float] = {}
        while time.time() - start < DEADLINE_S and any(r.poll() is None for r in runners):
            time.sleep(1.0)
            provoke(prom, f"127.0.0.1:{grpc_port}", state)
            jobs = ("uno-tournament", "uno-tournament-second")
            for runner, out, job in zip(runners, outs, jobs, strict=True):
                if runner.poll() is None:
                    release_lingering(prom, runner, out, job, lingering)
        codes = [r.poll() for r in runners]
        ended = time.time()
        while last_scrape(prom, "uno-server") <= ended + 1.0:  # the server's last values
            assert time.time() - start < DEADLINE_S, "Prometheus stopped scraping the server"
            time.sleep(0.2)
        end = time.time()
        logs = "\n".join(p.read_text() for p in (tmp_path / "logs.txt", *outs))
        assert codes == [0, 0], f"runners: {codes}\n{logs[-4000:]}"
        assert state.get("done"), "the run ended before the test could cancel a match"

        # the league dashboard's series come from `league run` (test_league_dashboard.py)
        models = {p.stem: load_json(p) for p in DASHBOARDS if p.stem != "uno-arena-league"}
        tgts = targets(models)
        problems, seen = check(prom, tgts, start, end)
        report = "\n".join(f"  {v:12.4g}  {k}" for k, v in seen.items())
        print(f"\nlargest value of each panel query over the run ({end - start:.0f} s):\n{report}")
        assert not problems, "\n".join(problems) + f"\n{logs[-3000:]}"

        # two runs at once stay apart; each is whole at its end
        tids = get(f"{prom}/api/v1/label/tournament/values")["data"]
        assert len(tids) == 2 and {t.split("-")[0] for t in tids} == {"arena", "second"}, tids
        progress = next(e for _, t, _, e in tgts if t == "Tournament progress")
        for tid in tids:
            res = query_range(prom, fill(progress, ".*", tid), start, end)
            assert len(res) == 1 and res[0]["metric"]["tournament"] == tid, res
            assert float(res[0]["values"][-1][1]) == 1.0, (tid, res[0]["values"][-5:])
        shards = instant(
            prom, 'count by (shard) (last_over_time(uno_hands_total{tournament=~"second-.*"}[10m]))'
        )
        assert {r["metric"]["shard"] for r in shards} == {"0/2", "1/2"}, shards
        played = instant(prom, 'sum(last_over_time(uno_hands_total{tournament=~"second-.*"}[10m]))')
        assert float(played[0]["value"][1]) == 24, played  # both shards' servers, to the end
        both = query_range(prom, fill(progress, ".*"), start, end)
        assert {s["metric"]["tournament"] for s in both} == set(tids)
        for title in ("Live Elo per bot", "Win rate per bot"):  # a bot in both runs: twice
            expr = next(e for _, t, _, e in tgts if t == title)
            shared = query_range(prom, fill(expr, "py-heuristic"), start, end)
            assert {s["metric"]["tournament"] for s in shared} == set(tids), (title, shared)
        for var in models["uno-arena-overview"]["templating"]["list"]:
            q = var["query"]["query"]
            metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)", q).groups()  # type: ignore[union-attr]
            vals = get(
                f"{prom}/api/v1/label/{label}/values?" + urllib.parse.urlencode({"match[]": metric})
            )["data"]
            assert vals, q
        bots = get(
            f"{prom}/api/v1/label/bot/values?"
            + urllib.parse.urlencode({"match[]": "uno_decision_latency_seconds_count"})
        )["data"]
        assert {FLAKY, "py-heuristic", "b-random"} <= set(bots), bots

        # every counter that counts faults was scraped at 0 before its first increment, so
        # rate() and increase() see that increment
        for counter in (
            "uno_timeouts_total",
            "uno_disconnects_total",
            "uno_takeovers_total",
            "uno_illegal_actions_total",
            "uno_server_errors_total",
            "uno_tournament_bot_crashes_total",
            "uno_tournament_hand_retries_total",
        ):
            counted = [
                r for r in query_range(prom, counter, start, end) if float(r["values"][-1][1]) > 0
            ]
            assert counted, counter
            for r in counted:
                assert r["values"][0][1] == "0", (counter, r["metric"], r["values"][:3])

        # a misspelt metric name fails the check, naming every panel that uses it
        for name, mutated in mutations(tgts):
            found, _ = check(prom, mutated, start, end)
            for dash, title, ref, _ in mutated:
                assert any(p.startswith(f"{dash} / {title} / {ref} ") for p in found), (
                    f"misspelling {name} in {dash} / {title} / {ref} went unnoticed"
                )
