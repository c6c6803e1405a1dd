"""The sandbox around launched bots (issue 23): hostile bots in a real tournament beside
well-behaved ones.

One tournament seats four well-behaved Python bots and nine hostile bots
(tests/tournament/hostile/hostile_bot.py), each trying one thing. For each: the attempt fails or
is contained, the well-behaved bots have 0 timeouts, ``tournament verify`` passes, no process of
the run is left, and the incident names the limit. A second, small run turns the sandbox off for
a hostile bot and sees its attempts get through: the checks can tell.

No test here skips under CI=true: .ci/run installs bubblewrap and socat, and the cgroups are
checked, not assumed (a missing one fails the test that needs it).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from uno_tournament import sandbox
from uno_tournament.config import ConfigError, SandboxSpec, parse
from uno_tournament.host_relay import HostRelay

HOSTILE = Path(__file__).with_name("hostile") / "hostile_bot.py"
CI = os.environ.get("CI") == "true"


def _need_sandbox() -> None:
    prot = sandbox.probe()
    missing = prot.missing(SandboxSpec())
    if missing:
        if CI:
            pytest.fail(f"sandbox protections missing under CI=true: {missing}")
        pytest.skip(f"sandbox protections missing on this machine: {missing[0]}")


def _left_after(tag: str, timeout: float = 30.0) -> list[int]:
    """The processes holding ``tag`` that are still there ``timeout`` seconds on (an empty list
    as soon as there are none): a process of a finished run may take a moment to be reaped on
    a busy machine, but one that leaked stays."""
    deadline = time.monotonic() + timeout
    while (left := _processes_with(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _processes_with(tag: str) -> list[int]:
    """Pids whose command line or environment holds ``tag``."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        for f in ("cmdline", "environ"):
            try:
                data = Path(f"/proc/{name}/{f}").read_bytes()
            except OSError:
                continue
            if tag.encode() in data:
                out.append(int(name))
                break
    return out


def _children_of(pid: int) -> list[tuple[int, str]]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append((int(name), cmd))
    return out


def _bot(name: str, command: list[str], cwd: Path, tag: str, **sandbox_over: object) -> str:
    lines = [
        "[[bots]]",
        f"name = {json.dumps(name)}",
        f"command = {json.dumps(command)}",
        f"cwd = {json.dumps(str(cwd))}",
        f"env = {{ UNO_TEST_TAG = {json.dumps(tag)} }}",
    ]
    if sandbox_over:
        inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in sandbox_over.items())
        lines.append(f"sandbox = {{ {inner} }}")
    return "\n".join(lines) + "\n"


GOOD = ["{python}", "-m", "uno_bot.examples.heuristic_bot", "--log-level", "warning"]
SDK = ["--addr", "{addr}", "--name", "{name}"]


def _hostile(attack: str, target: dict[str, object]) -> list[str]:
    return [
        "{python}",
        "hostile_bot.py",
        "--attack",
        attack,
        "--target",
        json.dumps(target),
        "--log-level",
        "warning",
        *SDK,
    ]


def _layout(tmp_path: Path) -> dict[str, Path]:
    """The hostile bots' folder holds the run folder (so the sandbox must hide it); the
    well-behaved bots' folder holds a secret; a token file and a home sit beside."""
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    shutil.copy(HOSTILE, hostile / "hostile_bot.py")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "secret.txt").write_text("the victim's strategy\n")
    (tmp_path / "tokens.toml").write_text('alice = "alice-secret-token"\n')
    home = tmp_path / "home"
    home.mkdir()
    (home / ".ssh-key").write_text("private\n")
    return {
        "hostile": hostile,
        "victim": victim,
        "run": hostile / "run",
        "tokens": tmp_path / "tokens.toml",
        "home": home,
    }


def _run(
    tmp_path: Path, config: str, env_extra: dict[str, str], targets: Path | None
) -> tuple[int, str]:
    """``uno-arena tournament run`` in a child process; writes ``targets`` (the runner's and
    the server's pids) once the server runs. Returns the exit status and the output."""
    cfg = tmp_path / "t.toml"
    cfg.write_text(config)
    env = {**os.environ, **env_extra, "GRPC_VERBOSITY": "ERROR"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "tournament", "run", str(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp_path,
    )
    if targets is not None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            server = [p for p, cmd in _children_of(proc.pid) if "uno_server.cli serve" in cmd]
            if server:
                targets.write_text(json.dumps({"runner": proc.pid, "server": server[0]}))
                break
            time.sleep(0.1)
    try:
        out, _ = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"the tournament did not end: {out.decode(errors='replace')[-3000:]}")
    return proc.returncode, out.decode(errors="replace")


def _incidents(run: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(f"file:{run / 'tournament.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT bot, kind, detail FROM incidents ORDER BY id").fetchall()
    finally:
        db.close()
    return [(str(b), str(k), str(d)) for b, k, d in rows]


def _timeouts(run: Path) -> dict[str, int]:
    data = json.loads((run / "results.json").read_text())
    return {b["bot"]: int(b["timeouts"]) for b in data["leaderboard"]}


def _log(run: Path, bot: str) -> str:
    return (run / "logs" / f"{bot}.log").read_text(errors="replace")


ATTACKS = ("fork", "memory", "spin", "store", "read", "disk", "net", "signal", "setsid")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """Another local port the ``net`` attack tries to reach; closed however the test ends (a
    socket left to the collector fails a later test in the same worker)."""
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock
    finally:
        sock.close()


def test_hostile_bots_are_confined(tmp_path: Path, listener: socket.socket) -> None:
    _need_sandbox()
    where = _layout(tmp_path)
    tag = f"uno-hostile-{uuid.uuid4().hex}"
    other_port = listener.getsockname()[1]
    target: dict[str, object] = {
        "run": str(where["run"]),
        "victim": str(where["victim"]),
        "victim_file": str(where["victim"] / "secret.txt"),
        "tokens": str(where["tokens"]),
        "home": str(where["home"]),
        "port": other_port,
        "tag": tag,
        "scratch": True,
    }
    config = f"""
[tournament]
name = "hostile"
hands = 48
concurrency = 4
output = {json.dumps(str(where["run"]))}

[time_control]
decision_ms = 1500

[faults]
max_restarts = 1
startup_timeout_s = 120

[sandbox]
required = true
memory_mb = 512
pids = 128
"""
    for i in range(4):
        config += _bot(f"good-{i}", [*GOOD, *SDK], where["victim"], tag)
    over: dict[str, dict[str, object]] = {
        "fork": {"pids": 48},
        "memory": {"memory_mb": 160},
        "spin": {"cpu_quota": 0.5},
        "disk": {"file_size_mb": 16, "scratch_mb": 64, "log_mb": 1},
    }
    for attack in ATTACKS:
        config += _bot(
            f"hostile-{attack}",
            _hostile(attack, target),
            where["hostile"],
            tag,
            **over.get(attack, {}),
        )
    code, out = _run(
        tmp_path,
        config,
        {"HOME": str(where["home"]), "UNO_TEST_TAG": tag},
        where["hostile"] / "targets.json",
    )
    run = where["run"]
    assert code == 0, out[-4000:]

    # one line at start says which protections are active
    assert "sandbox: namespaces (bubblewrap" in out, out[:2000]
    assert "cgroup v" in out and "missing" not in out.split("sandbox:")[1].splitlines()[0]

    # well-behaved bots: 0 timeouts; the run verifies; nothing of the run is left
    timeouts = _timeouts(run)
    assert all(timeouts[f"good-{i}"] == 0 for i in range(4)), timeouts
    verify = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "tournament", "verify", str(run)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert _left_after(tag) == [], "processes of the run are left"

    logs = {a: _log(run, f"hostile-{a}") for a in ATTACKS}
    for a, text in logs.items():
        assert f"HOSTILE {a}: LEAKED" not in text, f"{a}: {text[-2000:]}"
    incidents = _incidents(run)
    crash = {b: d for b, k, d in incidents if k == "crash"}

    # limits end the bot as a crash does, and the incident names the limit
    assert crash["hostile-fork"] == "pids limit 48 reached, stopped", incidents
    assert crash["hostile-memory"] == "memory limit 160 MiB reached, stopped", incidents
    assert crash["hostile-disk"] == "file size limit 16 MiB reached, stopped", incidents
    given_up = {b: d for b, k, d in incidents if k == "given_up"}
    assert "pids limit 48" in given_up["hostile-fork"]

    # the 64 MiB on stdout: the log was cut at 1 MiB, the cut noted, one older part kept
    disk_log = run / "logs" / "hostile-disk.log"
    assert disk_log.stat().st_size <= 2**20 + 4096
    assert (run / "logs" / "hostile-disk.log.1").stat().st_size <= 2**20 + 4096
    cut = disk_log.read_text(errors="replace") + (run / "logs" / "hostile-disk.log.1").read_text(
        errors="replace"
    )
    assert "log cut: it reached 1 MiB" in cut
    assert not (where["hostile"] / "big").exists()
    assert "HOSTILE disk: LEAKED" not in logs["disk"]

    # files: the store, the run folder, the other bot's folder, the tokens, the home
    assert "HOSTILE store: BLOCKED open tournament.sqlite for writing: E" in logs["store"]
    assert "HOSTILE store: BLOCKED list the run folder: ENOENT" in logs["store"]
    assert (run / "tournament.sqlite").read_bytes().startswith(b"SQLite format 3\0")
    assert "HOSTILE store: BLOCKED create a file in the run folder: EROFS" in logs["store"]
    assert not (run / "evil").exists()
    assert "HOSTILE read: BLOCKED read another bot's file: ENOENT" in logs["read"]
    assert "HOSTILE read: BLOCKED read the token file: ENOENT" in logs["read"]
    assert "HOSTILE read: BLOCKED read the organiser's home: ENOENT" in logs["read"]
    assert "HOSTILE read: BLOCKED write to its own folder: EROFS" in logs["read"]

    # network: another local port is refused in the bot's own namespace, and never reached;
    # an outside address is unreachable at once
    assert f"HOSTILE net: BLOCKED connect 127.0.0.1:{other_port}: ECONNREFUSED" in logs["net"]
    assert "HOSTILE net: BLOCKED connect 192.0.2.1:80: ENETUNREACH" in logs["net"]
    with pytest.raises(BlockingIOError):
        listener.accept()

    # signals: the runner and the server are not even visible
    assert "HOSTILE signal: BLOCKED SIGKILL the runner" in logs["signal"], logs["signal"][-2000:]
    assert "HOSTILE signal: BLOCKED SIGKILL the server" in logs["signal"]
    assert "ESRCH" in logs["signal"]

    # the setsid child ran, and died with the run (checked above: nothing with the tag is left)
    assert "HOSTILE setsid: DONE setsid child" in logs["setsid"]
    # the spinner was contained by its CPU weight and quota: the well-behaved bots had no
    # timeouts (above), and it played on
    assert "HOSTILE spin: DONE 8 threads spinning" in logs["spin"]
    assert "hostile-spin" not in crash


def test_without_the_sandbox_the_attempts_get_through(tmp_path: Path) -> None:
    """The negative control: the same file attacks with ``enabled = false`` for the hostile
    bot read what the sandboxed one could not (so the checks above can tell)."""
    _need_sandbox()
    where = _layout(tmp_path)
    tag = f"uno-hostile-{uuid.uuid4().hex}"
    target: dict[str, object] = {
        "run": str(where["run"]),
        "victim": str(where["victim"]),
        "victim_file": str(where["victim"] / "secret.txt"),
        "tokens": str(where["tokens"]),
        "home": str(where["home"]),
    }
    config = f"""
[tournament]
name = "control"
hands = 24
concurrency = 4
output = {json.dumps(str(where["run"]))}
"""
    for i in range(3):
        config += _bot(f"good-{i}", [*GOOD, *SDK], where["victim"], tag)
    config += _bot("hostile-read", _hostile("read", target), where["hostile"], tag, enabled=False)
    code, out = _run(tmp_path, config, {"HOME": str(where["home"])}, None)
    assert code == 0, out[-4000:]
    log = _log(where["run"], "hostile-read")
    assert "HOSTILE read: LEAKED read the token file" in log
    assert "HOSTILE read: LEAKED read another bot's file" in log
    (where["hostile"] / "evil").unlink(missing_ok=True)


# ------------------------------------------------------------------------------ small pieces


def _parse(extra: str) -> object:
    bots = "".join(
        f'[[bots]]\nname = "b{i}"\ncommand = ["{{python}}", "-c", "pass"]\n' for i in range(4)
    )
    import tomllib

    return parse(tomllib.loads(extra + "\n" + bots), Path("/tmp"))


def test_sandbox_config_defaults_and_overrides(tmp_path: Path) -> None:
    import tomllib

    text = (
        "[sandbox]\nmemory_mb = 256\npids = 64\n"
        + "".join(
            f'[[bots]]\nname = "b{i}"\ncommand = ["{{python}}", "-c", "pass"]\n' for i in range(3)
        )
        + '[[bots]]\nname = "big"\ncommand = ["{python}", "-c", "pass"]\n'
        + "sandbox = { memory_mb = 2048, cpu_quota = 1.5, paths = ['/opt'] }\n"
    )
    cfg = parse(tomllib.loads(text), tmp_path)
    assert cfg.sandbox.memory_mb == 256
    assert cfg.bots[0].sandbox.memory_mb == 256 and cfg.bots[0].sandbox.pids == 64
    big = cfg.bots[3].sandbox
    assert big.memory_mb == 2048 and big.pids == 64 and big.cpu_quota == 1.5
    assert big.paths == ("/opt",)
    again = type(cfg).from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[sandbox]\nmemory_mb = 1", "sandbox.memory_mb: must be 32-1048576, got 1"),
        ("[sandbox]\npids = 'many'", "sandbox.pids: must be an integer, got 'many'"),
        ("[sandbox]\nenabled = 1", "sandbox.enabled: must be true or false, got 1"),
        ("[sandbox]\nswap = 1", "sandbox.swap: unknown setting"),
        ("[sandbox]\ncpu_quota = -1", "sandbox.cpu_quota: must be 0-1024, got -1"),
        ("[sandbox]\npaths = '/opt'", "sandbox.paths: must be a list of folder names"),
    ],
)
def test_sandbox_config_errors_name_the_field(extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        _parse(extra)
    assert message in str(err.value)


def test_a_bot_cannot_override_required() -> None:
    import tomllib

    text = "".join(
        f'[[bots]]\nname = "b{i}"\ncommand = ["{{python}}", "-c", "pass"]\n' for i in range(4)
    )
    text += "sandbox = { required = false }\n"
    with pytest.raises(ConfigError, match=r"bots\[3\]\.sandbox\.required: unknown setting"):
        parse(tomllib.loads(text), Path("/tmp"))


def test_required_turns_a_missing_protection_into_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    prot = sandbox.Protections(bwrap="", bwrap_why="bwrap not found", cgroups=sandbox.Cgroups())
    monkeypatch.setattr(sandbox, "probe", lambda: prot)
    warned: list[str] = []
    lines = sandbox.check([SandboxSpec()], warned.append)
    assert warned and all(w.startswith("sandbox: missing ") for w in warned)
    assert any("install bubblewrap" in w for w in warned)
    assert any("pids limit" in w for w in warned)
    assert len(lines) == len(warned)
    with pytest.raises(sandbox.SandboxError, match=r"sandbox\.required is true"):
        sandbox.check([SandboxSpec(required=True)])
    assert sandbox.check([SandboxSpec(enabled=False, required=True)]) == []


def test_sandbox_check_command() -> None:
    _need_sandbox()
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "sandbox", "check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("sandbox: namespaces (bubblewrap")
    assert "memory 1024 MiB incl. swap" in first and "pids 256" in first
    assert "every protection is active" in res.stdout


def test_keeper_log_rotates_and_notes_the_cut(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    status = tmp_path / "bot.status"
    code = "import sys\nfor _ in range(300):\n    sys.stdout.write('z' * 9999 + '\\n')\n"
    cfg = {
        "ppid": os.getpid(),
        "cwd": str(tmp_path),
        "argv": [sys.executable, "-c", code],
        "log": str(log),
        "log_max": 1_000_000,
        "status": str(status),
    }
    res = subprocess.run(
        [sys.executable, "-I", "-S", sandbox.KEEPER, json.dumps(cfg)], check=False, timeout=60
    )
    assert res.returncode == 0
    assert log.stat().st_size <= 1_000_000
    assert Path(str(log) + ".1").stat().st_size <= 1_000_000
    assert "log cut: it reached" in log.read_text()
    assert json.loads(status.read_text()) == {"code": 0, "limit": "", "stopped": False}


def test_keeper_kills_setsid_children_without_namespaces(tmp_path: Path) -> None:
    """Even with the sandbox off, the keeper (a subreaper) kills what the bot left."""
    tag = f"uno-orphan-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1000)', '{tag}'],"
        " start_new_session=True)\n"
    )
    cfg = {
        "ppid": os.getpid(),
        "cwd": str(tmp_path),
        "argv": [sys.executable, "-c", code],
        "log": str(tmp_path / "bot.log"),
        "log_max": 1_000_000,
        "status": str(tmp_path / "bot.status"),
    }
    res = subprocess.run(
        [sys.executable, "-I", "-S", sandbox.KEEPER, json.dumps(cfg)], check=False, timeout=60
    )
    assert res.returncode == 0
    assert _processes_with(tag) == []


def test_keeper_names_the_file_size_limit(tmp_path: Path) -> None:
    """RLIMIT_FSIZE: a program killed by SIGXFSZ is reported as the limit; a Python one (which
    ignores SIGXFSZ) gets EFBIG instead and writes no more."""
    big = tmp_path / "big"
    cfg = {
        "ppid": os.getpid(),
        "cwd": str(tmp_path),
        "argv": ["sh", "-c", f"head -c 50000000 /dev/zero > {big}"],
        "log": str(tmp_path / "bot.log"),
        "log_max": 1_000_000,
        "status": str(tmp_path / "bot.status"),
        "rlimits": {"FSIZE": 2**20},
        "names": sandbox.limit_names(SandboxSpec(file_size_mb=1), watchdog=False),
    }
    res = subprocess.run(
        [sys.executable, "-I", "-S", sandbox.KEEPER, json.dumps(cfg)], check=False, timeout=60
    )
    assert res.returncode == 128 + signal.SIGXFSZ
    assert json.loads((tmp_path / "bot.status").read_text())["limit"] == "file size limit 1 MiB"
    assert big.stat().st_size == 2**20
    code = f"open({str(big)!r}, 'wb').write(b'z' * 5_000_000)"
    cfg["argv"] = [sys.executable, "-c", code]
    res = subprocess.run(
        [sys.executable, "-I", "-S", sandbox.KEEPER, json.dumps(cfg)], check=False, timeout=60
    )
    assert res.returncode == 1
    assert (
        "EFBIG" in (tmp_path / "bot.log").read_text()
        or "File too large" in (tmp_path / "bot.log").read_text()
    )
    assert big.stat().st_size <= 2**20


def test_keeper_rss_watchdog(tmp_path: Path) -> None:
    """Where no memory cgroup can be had, the RSS watchdog ends a balloon and names it."""
    code = 'import time\nb = []\nwhile 1:\n    b.append(b"x" * (8 << 20))\n    time.sleep(0.01)'
    cfg = {
        "ppid": os.getpid(),
        "cwd": str(tmp_path),
        "argv": [sys.executable, "-c", code],
        "log": str(tmp_path / "bot.log"),
        "log_max": 1_000_000,
        "status": str(tmp_path / "bot.status"),
        "rss_max": 128 * 2**20,
        "names": sandbox.limit_names(SandboxSpec(memory_mb=128), watchdog=True),
    }
    res = subprocess.run(
        [sys.executable, "-I", "-S", sandbox.KEEPER, json.dumps(cfg)], check=False, timeout=60
    )
    assert res.returncode == 128 + signal.SIGKILL
    status = json.loads((tmp_path / "bot.status").read_text())
    assert status["limit"] == "memory limit 128 MiB (RSS watchdog)"


# ------------------------------------------------------------------ every language's example

CLIENTS = Path(__file__).resolve().parents[2] / "clients"


def _artifact(lang: str) -> tuple[str, list[str]]:
    """The folder and command of a language's example heuristic bot, built if it is not."""
    d = CLIENTS / lang
    if lang == "go":
        if not (d / "bin" / "heuristic-bot").exists():
            _build(d, ["go", "build", "-o", "bin/", "./cmd/..."])
        return str(d), ["bin/heuristic-bot", *SDK]
    if lang == "typescript":
        if not (d / "dist" / "src" / "bot.js").exists():
            _build(d, ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"])
        return str(d), ["node", "dist/src/bot.js", *SDK]
    if lang == "rust":
        if not (d / "target" / "release" / "heuristic-bot").exists():
            _build(d, ["cargo", "build", "--release", "--locked"])
        cmd = ["target/release/heuristic-bot", "--addr", "http://{addr}", *SDK[2:]]
        return str(d), cmd
    jars = sorted((d / "target").glob("uno-bot-*-jar-with-dependencies.jar"))
    if not jars:
        _build(d, ["mvn", "-q", "-B", "package", "-DskipTests"])
        jars = sorted((d / "target").glob("uno-bot-*-jar-with-dependencies.jar"))
    return str(d), ["java", "-jar", str(jars[-1].relative_to(d)), *SDK]


def _build(folder: Path, cmd: list[str]) -> None:
    if shutil.which(cmd[0]) is None:
        if CI:
            pytest.fail(f"{cmd[0]} not found under CI=true (clients/each.sh needs it too)")
        pytest.skip(f"{cmd[0]} not installed: cannot build {folder.name}'s example bot")
    res = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"{' '.join(cmd)} in {folder}: {res.stderr[-2000:]}"


def test_every_languages_example_bot_plays_unchanged_in_the_sandbox(tmp_path: Path) -> None:
    """The example heuristic bots of all five SDKs, with their usual commands and ``{addr}``,
    play a tournament in the sandbox (``required = true``)."""
    _need_sandbox()
    tag = f"uno-lang-{uuid.uuid4().hex}"
    config = f"""
[tournament]
name = "languages"
hands = 24
concurrency = 4
output = {json.dumps(str(tmp_path / "run"))}

[time_control]
decision_ms = 3000  # a JVM's first decisions, on a busy machine

[faults]
startup_timeout_s = 120

[sandbox]
required = true
"""
    config += _bot("python", [*GOOD, *SDK], tmp_path, tag)
    for lang in ("go", "typescript", "rust", "java"):
        cwd, cmd = _artifact(lang)
        config += _bot(lang, cmd, Path(cwd), tag)
    code, out = _run(tmp_path, config, {}, None)
    assert code == 0, out[-4000:]
    assert "sandbox: namespaces (bubblewrap" in out
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    played = {b["bot"]: (b["hands"], b["crashes"]) for b in data["leaderboard"]}
    assert set(played) == {"python", "go", "typescript", "rust", "java"}
    for bot, (hands, crashes) in played.items():
        assert hands > 0 and crashes == 0, (bot, played, out[-3000:])
    # every SDK took UNO_ARENA_LOCAL_SOCKET (no relay hop); its "connected" line names the socket
    # (the Python bot logs warnings only; test_sdk_bots_reach_the_server_by_its_socket... has it)
    for lang in ("go", "typescript", "rust", "java"):
        log = _log(tmp_path / "run", lang)
        connected = [x for x in log.splitlines() if "connected" in x and "disconnected" not in x]
        assert connected, (lang, log[-2000:])
        assert all(f"unix:{sandbox.INNER_SOCKET_DIR}/server.sock" in c for c in connected), (
            lang,
            connected,
        )
    assert _left_after(tag) == []


def test_a_server_on_a_unix_socket_needs_no_relay_on_the_runners_side(tmp_path: Path) -> None:
    """The runner's own server also listens on a private Unix socket: bots of that server get
    it directly (no relay process, one hop less per message); once that server's socket is
    gone, the relay of old is used again."""
    import asyncio

    async def go() -> None:
        sock_dir = tmp_path / "sock"
        sock_dir.mkdir()
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(sock_dir / "server.sock"))
        target = "127.0.0.1:1"
        HostRelay.serve_direct(target, str(sock_dir))
        try:
            direct = await HostRelay.acquire(target)
            assert direct.direct and direct.proc is None and direct.alive
            assert direct.dir == str(sock_dir)
            assert await HostRelay.acquire(target) is direct  # shared by the shard
            await direct.release()
            await direct.release()
            assert (sock_dir / "server.sock").exists()  # the server's, not removed by bots
            listener.close()
            (sock_dir / "server.sock").unlink()
            relay = await HostRelay.acquire(target)  # stale: a relay process again
            try:
                assert not relay.direct and relay.proc is not None and relay.alive
            finally:
                await relay.release()
        finally:
            HostRelay.forget_direct(target)
            listener.close()

    asyncio.run(go())


def test_a_script_named_through_dotdot_is_bound_and_run_by_its_real_path(tmp_path: Path) -> None:
    """`{config_dir}/../bots/x.py` (deploy/tournament/arena.toml's flaky bot): the sandbox shows
    the bot only the real path's folders, so the command must name the real path; a path
    through `..` needs a folder that is not there, and the bot could not start."""
    _need_sandbox()
    from uno_tournament.config import BotSpec

    (tmp_path / "conf").mkdir()
    (tmp_path / "bots").mkdir()
    script = tmp_path / "bots" / "x.py"
    script.write_text("print('ran')\n")
    via = f"{tmp_path}/conf/../bots/x.py"
    spec = BotSpec(name="x", command=(sys.executable, via), cwd=str(tmp_path / "conf"))
    argv = sandbox.bwrap_argv(
        sandbox.probe().bwrap, spec, [sys.executable, via], port=5, socket_dir=str(tmp_path)
    )
    tail = argv[argv.index("--", argv.index("inner")) + 1 :]
    assert tail == [sys.executable, str(script)]  # the venv's python stays the venv's
    bound = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert any(str(script.resolve()).startswith(b) for b in bound), bound


def test_sdk_bots_reach_the_server_by_its_socket_and_others_through_the_relay(
    tmp_path: Path,
) -> None:
    """Inside the sandbox the SDK connects to the server's socket named by
    UNO_ARENA_LOCAL_SOCKET (no relay hop per message); a bot that does not know the variable
    (here: the same bot with the variable removed) reaches the server through the relay behind
    its usual ``{addr}``. Both play."""
    _need_sandbox()
    tag = f"uno-sock-{uuid.uuid4().hex}"
    config = f"""
[tournament]
name = "socket"
hands = 24
concurrency = 2
output = {json.dumps(str(tmp_path / "run"))}

[sandbox]
required = true
"""
    bot = ["{python}", "-m", "uno_bot.examples.heuristic_bot", "--log-level", "info", *SDK]
    for name in ("direct-a", "direct-b"):
        config += _bot(name, bot, tmp_path, tag)
    for name in ("relayed-a", "relayed-b"):
        config += _bot(name, ["env", "-u", sandbox.LOCAL_SOCKET_ENV, *bot], tmp_path, tag)
    code, out = _run(tmp_path, config, {}, None)
    assert code == 0, out[-4000:]
    data = json.loads((tmp_path / "run" / "results.json").read_text())
    assert {b["bot"]: b["hands"] for b in data["leaderboard"]} == dict.fromkeys(
        ("direct-a", "direct-b", "relayed-a", "relayed-b"), 24
    )
    for name in ("direct-a", "direct-b"):
        assert f"addr=unix:{sandbox.INNER_SOCKET_DIR}/server.sock" in _log(tmp_path / "run", name)
    for name in ("relayed-a", "relayed-b"):
        log = _log(tmp_path / "run", name)
        assert "connected" in log and "addr=127.0.0.1:" in log, log[-2000:]
        assert "addr=unix:" not in log


def test_the_run_group_weighs_what_its_bots_weigh_together() -> None:
    """The bots' cgroups share their parent's CPU weight, and that parent competes with the
    server and the runner: it must weigh the sum of its bots (100 = one ordinary process each),
    or eight bots together would get what one process gets on a busy machine."""
    _need_sandbox()
    if not sandbox.probe().cgroups.has("cpu"):
        pytest.fail("no writable cpu cgroup although the sandbox has every protection")
    groups = [sandbox.BotCgroup(f"weigh-{w}", SandboxSpec(cpu_weight=w)) for w in (100, 50, 300)]
    run = groups[0].dirs["cpu"].parent

    def weight() -> int:
        if sandbox.probe().cgroups.version == 2:
            return int((run / "cpu.weight").read_text())
        return int((run / "cpu.shares").read_text()) * 100 // 1024

    try:
        others = sum(sandbox.BotCgroup._weights[run].values()) - 450  # groups of other tests
        assert weight() == others + 450
        groups.pop().remove()
        assert weight() == others + 150
    finally:
        for g in groups:
            g.remove()
    assert sum(sandbox.BotCgroup._weights[run].values()) == others


def test_cgroup_v2_groups_get_the_limits_and_the_run_group_the_sum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This machine has cgroup v1; a delegated cgroup v2 (systemd-run --user --scope -p
    Delegate=yes) is checked on a folder that stands in for it: the files each group gets and
    what is written to them."""
    base = tmp_path / "v2"
    base.mkdir()
    prot = sandbox.Protections(
        cgroups=sandbox.Cgroups(version=2, dirs=dict.fromkeys(("cpu", "memory", "pids"), base))
    )
    monkeypatch.setattr(sandbox, "probe", lambda: prot)
    monkeypatch.setattr(sandbox.BotCgroup, "_run_dirs", {})
    monkeypatch.setattr(sandbox.BotCgroup, "_weights", {})
    a = sandbox.BotCgroup("a", SandboxSpec(memory_mb=64, cpu_weight=300, pids=32, cpu_quota=0.5))
    b = sandbox.BotCgroup("b", SandboxSpec(cpu_weight=50))
    run = a.dirs["cpu"].parent
    assert run.parent == base and a.dirs == dict.fromkeys(("cpu", "memory", "pids"), a.dirs["cpu"])
    assert (run / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    d = a.dirs["cpu"]
    assert (d / "memory.max").read_text() == str(64 * 2**20)
    assert (d / "memory.swap.max").read_text() == "0"  # the limit counts swap
    assert (d / "cpu.weight").read_text() == "300"
    assert (d / "cpu.max").read_text() == "50000 100000"
    assert (d / "pids.max").read_text() == "32"
    assert not (b.dirs["cpu"] / "cpu.max").exists()  # no quota unless asked
    assert (run / "cpu.weight").read_text() == "350"
    for f in ("memory.max", "memory.swap.max", "cpu.weight", "pids.max"):  # rmdir needs them gone
        (d / f).unlink()
    (d / "cpu.max").unlink()
    a.remove()
    assert (run / "cpu.weight").read_text() == "50"


def test_paths_a_command_names_are_shown_only_when_harmless(tmp_path: Path) -> None:
    """An examination named /proc (every process's command line, with the other bots' tokens),
    a host service's Unix socket, /etc/shadow's neighbours and a file in the organiser's HOME
    in a bot's command, and the sandbox bound each of them for the bot to read. A named path
    is shown only when it is the bot's own, or an ordinary file or folder outside the machine's
    pseudo file systems and outside everything hidden."""
    from uno_tournament.config import BotSpec

    own = tmp_path / "bot"
    own.mkdir()
    (own / "bot.py").write_text("pass\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text("x")
    elsewhere = tmp_path / "runtime"
    elsewhere.mkdir()
    (elsewhere / "lib.jar").write_text("x")
    sock_path = tmp_path / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    try:
        command = [
            sys.executable,
            str(own / "bot.py"),
            "/proc",
            "/proc/1/cmdline",
            "/sys/fs/cgroup",
            "/run",
            str(sock_path),
            str(home / "secret.txt"),
            str(elsewhere / "lib.jar"),
        ]
        spec = BotSpec(name="x", command=tuple(command), cwd=str(own))
        argv = sandbox.bwrap_argv(
            "/usr/bin/bwrap", spec, command, port=5, socket_dir=str(tmp_path), hide=[str(home)]
        )
    finally:
        server.close()
    bound = {argv[i + 1] for i, a in enumerate(argv) if a in ("--ro-bind", "--bind")}
    for hidden in ("/proc", "/proc/1/cmdline", "/sys/fs/cgroup", "/run", str(sock_path)):
        assert hidden not in bound, hidden
    assert str(home / "secret.txt") not in bound and str(home) not in bound
    assert str(elsewhere / "lib.jar") in bound  # the organiser's named runtime file
    assert any(str(own).startswith(b) for b in bound)  # the bot's own folder
    # the sandbox's own /proc (of its pid namespace) is still there
    assert argv[argv.index("--proc") + 1] == "/proc"


def test_the_machines_private_keys_are_not_in_the_sandbox(tmp_path: Path) -> None:
    """/etc/ssl was shown whole, and its private/ (root's keys) was readable there: the bot's
    user is the organiser's outside the user namespace. Only the certificates and openssl.cnf
    are shown; a bot still finds the CA bundle it needs for TLS."""
    _need_sandbox()
    from uno_tournament.config import BotSpec

    spec = BotSpec(name="x", command=("sh",), cwd=str(tmp_path))
    probe = (
        "ls /etc/ssl/private 2>/dev/null && echo PRIVATE-SEEN; "
        "test -r /etc/ssl/certs/ca-certificates.crt && echo CA-OK"
    )
    argv = sandbox.build_argv(sandbox.probe().bwrap, spec, ["sh", "-c", probe])
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert "PRIVATE-SEEN" not in res.stdout, res.stdout
    if Path("/etc/ssl/certs/ca-certificates.crt").exists():
        assert "CA-OK" in res.stdout, res.stdout + res.stderr


KEYRING_PROBE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    r = libc.syscall(nr, *args)
    return r if r >= 0 else -ctypes.get_errno()
# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0): the organiser's user keyring
print("keyctl", call(250, ctypes.c_long(0), ctypes.c_long(-4), ctypes.c_long(0)))
# add_key("user", "uno-probe", "hand", 4, KEY_SPEC_USER_KEYRING)
print("add_key", call(248, b"user", b"uno-probe", b"hand", ctypes.c_size_t(4), ctypes.c_long(-4)))
"""


def _keeper_run(tmp_path: Path, argv: list[str], **extra: object) -> str:
    """``argv`` started by the keeper as a run starts a bot; returns its log."""
    log = tmp_path / f"k{uuid.uuid4().hex[:6]}.log"
    cfg = {
        "ppid": os.getpid(),
        "cwd": str(tmp_path),
        "argv": argv,
        "log": str(log),
        "log_max": 1_000_000,
        "status": str(tmp_path / "k.status"),
        **extra,
    }
    subprocess.run(
        [sys.executable, "-I", "-S", sandbox.KEEPER, json.dumps(cfg)], check=False, timeout=120
    )
    return log.read_text()


def test_a_bot_cannot_reach_the_kernel_keyrings(tmp_path: Path) -> None:
    """An examination: a bot added a key to the organiser's user keyring, and a bot in another
    sandbox linked that keyring and read it (a channel between tables, and the organiser's
    secrets). The seccomp filter the keeper hands bwrap refuses the keyring calls."""
    _need_sandbox()
    from uno_tournament.config import BotSpec
    from uno_tournament.seccomp import program

    assert program("x86_64") and program("riscv64") == b""
    spec = BotSpec(name="x", command=("python3",), cwd=str(tmp_path))
    argv = sandbox.build_argv(
        sandbox.probe().bwrap, spec, [sys.executable, "-I", "-S", "-c", KEYRING_PROBE]
    )
    try:
        shut = _keeper_run(tmp_path, argv, seccomp=program().hex())
        assert "keyctl -1\n" in shut and "add_key -1\n" in shut, shut  # -EPERM
        # the same probe without the filter reaches a keyring (what the test would miss)
        opened = _keeper_run(tmp_path, argv)
        assert "keyctl -1\n" not in opened, opened
    finally:  # the probe's key, if it got one in, leaves with the test
        _drop_probe_key()


def _drop_probe_key() -> None:
    """Invalidate the key "uno-probe" in this user's keyring, if there is one."""
    code = (
        "import ctypes; l = ctypes.CDLL(None); l.syscall.restype = ctypes.c_long\n"
        "while True:\n"
        "    k = l.syscall(250, ctypes.c_long(10), ctypes.c_long(-4), b'user', b'uno-probe', 0)\n"
        "    if k <= 0 or l.syscall(250, ctypes.c_long(21), ctypes.c_long(k)) != 0: break\n"
    )  # KEYCTL_SEARCH, then KEYCTL_INVALIDATE
    subprocess.run([sys.executable, "-c", code], check=False, timeout=30)


def test_dev_shm_is_as_small_as_tmp(tmp_path: Path) -> None:
    """/dev is bwrap's tmpfs without a size: a bot wrote 160 MiB to /dev/shm with
    scratch_mb = 16. Its shm/ is now a tmpfs of scratch_mb, as /tmp is."""
    _need_sandbox()
    from uno_tournament.config import BotSpec

    spec = BotSpec(name="x", command=("sh",), cwd=str(tmp_path), sandbox=SandboxSpec(scratch_mb=4))
    probe = "head -c 8388608 /dev/zero > /dev/shm/fill 2>/dev/null; wc -c < /dev/shm/fill"
    argv = sandbox.build_argv(sandbox.probe().bwrap, spec, ["sh", "-c", probe])
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert int(res.stdout.strip()) <= 4 * 2**20, res.stdout + res.stderr


def test_a_named_link_under_the_system_folders_shows_nothing_else(tmp_path: Path) -> None:
    """A league manifest named /usr/lib/ssl/private (a link to /etc/ssl/private): the sandbox
    bound its real path and the bot read the machine's TLS key. A path under the folders every
    bot sees is left as it is, so the link leads nowhere inside."""
    _need_sandbox()
    from uno_tournament.config import BotSpec

    link = tmp_path / "usr-like"
    target = tmp_path / "secret-dir"
    target.mkdir()
    (target / "key.pem").write_text("PRIVATE\n")
    link.symlink_to(target)
    spec = BotSpec(name="x", command=("sh",), cwd=str(tmp_path / "bot"))
    (tmp_path / "bot").mkdir()
    names = ["/usr/lib/ssl/private"] if os.path.islink("/usr/lib/ssl/private") else []
    for name in names:
        probe = f"cat {name}/* 2>/dev/null | head -c 30; ls {name}/ 2>/dev/null && echo SEEN"
        argv = sandbox.build_argv(sandbox.probe().bwrap, spec, ["sh", "-c", probe, name])
        res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert "SEEN" not in res.stdout and "PRIVATE" not in res.stdout, res.stdout
    # the rule itself, on any machine: a path named under /usr is never bound elsewhere
    assert not sandbox._mountable("/usr/lib/ssl/private", str(tmp_path / "bot"), [])
    assert not sandbox._mountable("/lib/../usr/lib/x", str(tmp_path / "bot"), [])
    assert sandbox._mountable(str(link), str(tmp_path / "bot"), [])  # an organiser's choice


def test_only_tmp_dev_shm_and_a_builds_own_folder_can_be_written(tmp_path: Path) -> None:
    """bwrap's root is a tmpfs without a size, and the folders it made there to hold its mounts
    were writable: an examination's bot wrote in /work/x past scratch_mb. The root is now
    read-only, for a bot and for a build; /tmp, /dev/shm and a build's own folder are not."""
    _need_sandbox()
    from uno_tournament.config import BotSpec

    # outside /tmp, whose sandbox copy is the bot's scratch anyway: the folders on the way to
    # its own are made on the root
    holder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="uno-root-"))
    own = holder / "own"
    own.mkdir()
    spec = BotSpec(name="x", command=("sh",), cwd=str(own), sandbox=SandboxSpec(scratch_mb=4))
    places = ["/var/x", f"{holder}/x", "/x", "/tmp/x", "/dev/shm/x", f"{own}/x"]
    probe = "; ".join(f"(echo w > {p} && echo WROTE {p}) 2>/dev/null" for p in places) + "; true"
    bwrap = sandbox.probe().bwrap
    sock = tmp_path / "sock"
    sock.mkdir()
    bot = sandbox.bwrap_argv(bwrap, spec, ["sh", "-c", probe], port=5, socket_dir=str(sock))
    build = sandbox.build_argv(bwrap, spec, ["sh", "-c", probe])
    wrote = {}
    for kind, argv in (("bot", bot), ("build", build)):
        res = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        wrote[kind] = {
            line.split()[1] for line in res.stdout.splitlines() if line.startswith("WROTE")
        }
    shutil.rmtree(holder)
    assert wrote["bot"] == {"/tmp/x", "/dev/shm/x"}, wrote
    assert wrote["build"] == {"/tmp/x", "/dev/shm/x", f"{own}/x"}, wrote


FALLOCATE_PROBE = """
import ctypes, os
l = ctypes.CDLL(None, use_errno=True)
fd = os.open("f1", os.O_RDWR | os.O_CREAT, 0o600)
r = l.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(1 << 20))
print("fallocate", r, ctypes.get_errno(), flush=True)
fd2 = os.open("f2", os.O_RDWR | os.O_CREAT, 0o600)
os.posix_fallocate(fd2, 0, 1 << 20)
print("posix_fallocate", os.fstat(fd2).st_size, flush=True)
"""


def test_fallocate_is_unsupported_and_posix_fallocate_still_works(tmp_path: Path) -> None:
    """An examination's build reserved 3 GiB with one fast fallocate a file between two looks
    of the disk watcher (build_disk_mb = 1024). The filter answers fallocate EOPNOTSUPP, as a
    file system without it does, so glibc's posix_fallocate writes the blocks at the disk's
    pace and runtimes that call it still work."""
    _need_sandbox()
    from uno_tournament.config import BotSpec
    from uno_tournament.seccomp import program

    spec = BotSpec(name="x", command=("python3",), cwd=str(tmp_path))
    argv = sandbox.build_argv(
        sandbox.probe().bwrap, spec, [sys.executable, "-I", "-S", "-c", FALLOCATE_PROBE]
    )
    filtered = _keeper_run(tmp_path, argv, seccomp=program().hex())
    assert f"fallocate -1 {errno.EOPNOTSUPP}\n" in filtered, filtered
    assert "posix_fallocate 1048576\n" in filtered, filtered
    plain = _keeper_run(tmp_path, argv)  # the same probe without the filter reserves at once
    assert "fallocate 0 " in plain, plain


LOCK_PROBE = """
import fcntl, os, sys
fd = os.open(sys.executable, os.O_RDONLY)
for name, how in (("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                  ("lockf", lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                  ("ofd", lambda: fcntl.fcntl(fd, 37, bytes(32)))):  # F_OFD_SETLK
    try:
        how()
        print(name, "locked", flush=True)
    except OSError as e:
        print(name, e.errno, flush=True)
print("getfl", fcntl.fcntl(fd, fcntl.F_GETFL) & 3, flush=True)  # other commands still work
"""


def test_file_locks_are_no_channel_between_sandboxes(tmp_path: Path) -> None:
    """An examination's bot held and dropped a lock on ``sys.executable`` every two seconds, and
    a bot of another author, in another sandbox, read the bits by trying the lock. The filter
    answers every file lock EOPNOTSUPP, as a file system without locks does: what another
    process holds is not seen."""
    _need_sandbox()
    import fcntl

    from uno_tournament.config import BotSpec
    from uno_tournament.seccomp import program

    spec = BotSpec(name="x", command=("python3",), cwd=str(tmp_path))
    argv = sandbox.build_argv(
        sandbox.probe().bwrap, spec, [sys.executable, "-I", "-S", "-c", LOCK_PROBE]
    )
    held = os.open(sys.executable, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # the sender: a lock every sandbox's file shares
        plain = _keeper_run(tmp_path, argv)  # without the filter, the receiver sees it
        assert f"flock {errno.EWOULDBLOCK}\n" in plain, plain
        filtered = _keeper_run(tmp_path, argv, seccomp=program().hex())
    finally:
        os.close(held)
    for call in ("flock", "lockf", "ofd"):
        assert f"{call} {errno.EOPNOTSUPP}\n" in filtered, filtered
    assert "getfl 0\n" in filtered, filtered


PER_USER_PROBE = """
import ctypes, fcntl, os, resource, signal
l = ctypes.CDLL(None, use_errno=True)
l.syscall.restype = ctypes.c_long
params = ctypes.create_string_buffer(120)
for name, nr, args in (("inotify_init1", 294, (0,)),
                       ("fanotify_init", 300, (0x200, 0)),  # FAN_REPORT_FID, O_RDONLY
                       ("io_uring_setup", 425, (1, ctypes.addressof(params)))):
    r = l.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    print(name, r if r < 0 else "ok", ctypes.get_errno() if r < 0 else 0, flush=True)
rd, wr = os.pipe()
try:
    fcntl.fcntl(wr, 1031, 1 << 20)  # F_SETPIPE_SZ
    print("pipe_resize ok 0", flush=True)
except OSError as e:
    print("pipe_resize -1", e.errno, flush=True)
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE)[0], flush=True)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})
info = ctypes.create_string_buffer(128)  # siginfo_t: si_signo, si_errno, si_code, ...
ctypes.memmove(info, (ctypes.c_int * 3)(signal.SIGRTMIN, 0, -1), 12)  # SI_QUEUE
queued = 0
while queued < WANT:  # rt_sigqueueinfo to itself, as sigqueue(3) does
    if l.syscall(ctypes.c_long(129), ctypes.c_long(os.getpid()), ctypes.c_long(signal.SIGRTMIN),
                 info) != 0:
        break
    queued += 1
print("queued", queued, ctypes.get_errno() if queued < WANT else 0, flush=True)
"""


def test_a_bot_cannot_use_up_the_kernels_per_user_budgets(tmp_path: Path) -> None:
    """An examination: a bot outside its namespace is the organiser's user, and the kernel
    counts some budgets per user over the whole machine. One bot held 100 of the machine's 128
    inotify instances (later: 60 fanotify groups, pipes grown to 1 MiB) and a bot of another
    author read how much was left (a channel between tables); another queued 96,365 signals,
    every one the user may have. A cap of 1,024 queued signals made one pool every bot shared.
    The filter answers inotify, fanotify and io_uring ENOSYS and pipe resizing EPERM; the
    keeper's rlimits give a bot no queued signal at all, and bound its open files."""
    _need_sandbox()
    from uno_tournament.config import BotSpec
    from uno_tournament.procs import keeper_limits
    from uno_tournament.seccomp import program

    spec = BotSpec(name="x", command=("python3",), cwd=str(tmp_path))
    code = PER_USER_PROBE.replace("WANT", "64")
    argv = sandbox.build_argv(sandbox.probe().bwrap, spec, [sys.executable, "-I", "-S", "-c", code])
    limits = keeper_limits(SandboxSpec(), None)
    confined = _keeper_run(tmp_path, argv, seccomp=program().hex(), rlimits=limits["rlimits"])
    for call in ("inotify_init1", "fanotify_init", "io_uring_setup"):
        assert f"{call} -1 {errno.ENOSYS}\n" in confined, confined
    assert f"pipe_resize -1 {errno.EPERM}\n" in confined, confined
    assert f"queued 0 {errno.EAGAIN}\n" in confined, confined  # none: no pool to share
    assert f"nofile {sandbox.NOFILE_MAX}\n" in confined, confined
    # the same probe without the filter and the limits gets past each (what the test would miss)
    plain = _keeper_run(tmp_path, argv, rlimits={"CORE": 0})
    assert "inotify_init1 ok 0\n" in plain and "fanotify_init ok 0\n" in plain, plain
    assert "pipe_resize ok 0\n" in plain and "queued 64 0\n" in plain, plain
