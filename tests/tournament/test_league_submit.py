"""``uno-arena league init|submit|token add|status`` (issue 26, first part): a submission is
built in the sandbox and gated before it enters the ladder; a refused one gets a reason its
author can act on; a new version retires the old one; bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uno_tournament.league.manifest import ManifestError, read_manifest
from uno_tournament.league.store import LeagueError, LeagueStore

RUN = [
    "{python}",
    "-m",
    "uno_bot.examples.heuristic_bot",
    "--log-level",
    "warning",
    "--addr",
    "{addr}",
    "--name",
    "{name}",
]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )


def _bot(folder: Path, **fields: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    (folder / "bot.toml").write_text("\n".join(lines) + "\n")
    return folder


GOOD = {"name": "good", "version": "1.0", "author": "alice", "run": RUN}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({k: v for k, v in GOOD.items() if k != "run"}, "run: missing"),
        ({**GOOD, "name": "bad name"}, "name: 'bad name' must be 1-40 letters"),
        # the rule the message gives is the whole rule: '.hidden' is letters and '.', yet refused
        ({**GOOD, "name": ".hidden"}, "starting with a letter or a digit"),
        ({**GOOD, "name": ".."}, "name: '..' must be 1-40 letters"),
        (
            {**GOOD, "version": "-1"},
            "version: '-1' must be 1-32 letters, digits, '.', '_', '+' "
            "or '-', starting with a letter or a digit",
        ),
        (
            {**GOOD, "author": "_x"},
            "author: '_x' must be 1-40 letters, digits, '.', '_', '@' or "
            "'-', starting with a letter or a digit",
        ),
        ({**GOOD, "version": ""}, "version: '' must be 1-32"),
        # `$` also matches before a final newline: "alice\n" passed as another author, past
        # the per-author limits and the one-author-per-table rule (an examination)
        ({**GOOD, "author": "alice\n"}, "author: 'alice\\n' must be 1-40"),
        ({**GOOD, "name": "good\n"}, "name: 'good\\n' must be 1-40"),
        ({**GOOD, "version": "1\n"}, "version: '1\\n' must be 1-32"),
        ({**GOOD, "author": 7}, "author: 7 must be 1-40"),
        ({**GOOD, "language": "cobol"}, "language: 'cobol' must be one of"),
        ({**GOOD, "run": "python bot.py"}, "run: must be a non-empty list of strings"),
        ({**GOOD, "run": ["x", "{secret}"]}, "run: '{secret}' is not known here"),
        ({**GOOD, "build": ["make", "{token}"]}, "build: '{token}' is not known here"),
        (
            {**GOOD, "run": ["bin/bot", "--token", "{token}"]},
            "run: names {token}, which would show the bot's token to every user",
        ),
        ({**GOOD, "build": ["make"], "build_timeout_s": 0}, "build_timeout_s: must be a number"),
        ({**GOOD, "build_timeout_s": 60}, "build_timeout_s: only with a build"),
        ({**GOOD, "colour": "red"}, "unknown key 'colour'"),
        # an absolute path outside the system folders would be shown to the bot by the sandbox
        # (an examination named /proc, read the other bots' tokens and played in their seats)
        ({**GOOD, "run": [*RUN, "/proc"]}, "run: '/proc' is a path outside the bot's folder"),
        ({**GOOD, "run": ["/etc/shadow"]}, "run: '/etc/shadow' is a path outside"),
        ({**GOOD, "build": ["cat", "/root/.ssh/id_rsa"]}, "build: '/root/.ssh/id_rsa' is a path"),
        ({**GOOD, "run": [*RUN, "/usr/../proc/1"]}, "'/usr/../proc/1' is a path outside"),
    ],
)
def test_a_bad_manifest_names_its_field(
    tmp_path: Path, fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ManifestError) as err:
        read_manifest(_bot(tmp_path / "b", **fields))
    assert message in str(err.value)
    assert "bot.toml" in str(err.value)


def test_a_folder_without_a_manifest_says_what_it_needs(tmp_path: Path) -> None:
    with pytest.raises(
        ManifestError, match=r"needs a bot\.toml with name, version, author and run"
    ):
        read_manifest(tmp_path)


@pytest.mark.parametrize("target", ["outside.toml", "/dev/zero", "fifo"])
def test_a_manifest_that_is_a_link_or_a_pipe_is_refused_unread(tmp_path: Path, target: str) -> None:
    """A stranger's folder decides what ``bot.toml`` is. A link made the organiser's process read
    any file of the machine (and echo its keys in "unknown key"); a link to /dev/zero filled its
    memory; a named pipe hung the submission. Each is refused before anything is read."""
    folder = tmp_path / "b"
    folder.mkdir()
    manifest = folder / "bot.toml"
    if target == "fifo":
        os.mkfifo(manifest)
        expected = "not a regular file"
    else:
        if target == "outside.toml":
            outside = tmp_path / "outside.toml"
            outside.write_text('secret_key_of_the_organiser = "x"\n')
            target = str(outside)
        manifest.symlink_to(target)
        expected = "a symbolic link; bot.toml must be a file in the folder"
    with pytest.raises(ManifestError) as err:
        read_manifest(folder)
    assert expected in str(err.value)
    assert "secret_key" not in str(err.value)


def test_a_named_pipe_in_the_bot_folder_is_one_line_and_nothing_is_recorded(
    tmp_path: Path,
) -> None:
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    bot = _bot(tmp_path / "piped", **GOOD)
    os.mkfifo(bot / "pipe")
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert lines[0] == (
        f"uno-arena: {bot / 'pipe'}: a named pipe; a bot folder holds only files, folders and "
        "links: remove it and submit again"
    )
    assert not (league / "bots" / "good").exists()
    assert _cli("status", str(league)).returncode == 0


@pytest.mark.parametrize("name", ["gate-random", "house-heuristic", "foo.12"])
def test_a_reserved_name_is_refused_before_its_gate(tmp_path: Path, name: str) -> None:
    """``gate-random`` was gated against the built-in bot of the same name (one log, one
    session replacing the other) and refused for a crash that was the league's; ``house-...``
    stood beside the league's house bots in its refits. The rule of ``token add`` holds here."""
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    bot = _bot(tmp_path / "b", **{**GOOD, "name": name})
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip() == (
        f"uno-arena: {bot / 'bot.toml'}: name: {name!r} is reserved (a name ending in .DIGITS, "
        "or starting with house- or gate-, is the league's own); choose another name"
    )
    assert not (league / "gates").exists() or not any((league / "gates").iterdir())
    assert LeagueStore.open(league).versions(name) == []


def test_two_authors_submitting_one_new_name_at_once_cannot_both_have_it(tmp_path: Path) -> None:
    """Both submissions passed the owner check before either was recorded, so ann's version
    retired bob's bot. Submissions to a league are now judged one at a time, and the record
    checks again: the name is the first recorded author's, the other is refused in one line."""
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    env = {**os.environ, "GRPC_VERBOSITY": "ERROR"}
    procs = {
        author: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uno_server.cli",
                "league",
                "submit",
                str(league),
                str(
                    _bot(tmp_path / author, **{**GOOD, "version": f"{author}-1", "author": author})
                ),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for author in ("ann", "bob")
    }
    outs = {a: p.communicate(timeout=600) for a, p in procs.items()}
    codes = {a: p.returncode for a, p in procs.items()}
    assert sorted(codes.values()) == [0, 2], (codes, outs)
    winner = next(a for a, c in codes.items() if c == 0)
    loser = next(a for a, c in codes.items() if c == 2)
    assert outs[winner][0].startswith(f"good@{winner}-1: accepted"), outs
    assert outs[loser][1].strip().splitlines()[-1] == (
        f"uno-arena: good: the name belongs to another author ({winner}); choose another name"
    ), outs
    versions = LeagueStore.open(league).versions("good")
    assert [(v.author, v.state) for v in versions] == [(winner, "active")]


def test_a_bot_folder_that_holds_the_league_is_refused_without_debris(tmp_path: Path) -> None:
    """The copy into ``LEAGUE/bots/NAME/VERSION`` copied itself: a RecursionError traceback of
    thousands of lines and 500 nested folders left in the league."""
    bot = _bot(tmp_path / "nest", **GOOD)
    league = bot / "L"
    assert _cli("init", str(league)).returncode == 0
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 2, res.stdout + res.stderr[-2000:]
    assert res.stderr.strip() == (
        f"uno-arena: {bot}: holds the league's own folder ({league}); submit a bot folder "
        "outside the league"
    )
    assert not (league / "bots").exists()


def test_a_bot_folder_inside_the_league_is_said_to_be_inside(tmp_path: Path) -> None:
    """An examination submitted a version's own folder, LEAGUE/bots/NAME/VERSION: it was told
    the folder "holds the league's own folder", which it does not."""
    league = tmp_path / "L"
    assert _cli("init", str(league)).returncode == 0
    bot = _bot(league / "bots" / str(GOOD["name"]) / str(GOOD["version"]), **GOOD)
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 2, res.stdout + res.stderr[-2000:]
    assert res.stderr.strip() == (
        f"uno-arena: {bot}: is inside the league's folder ({league}); submit a bot folder "
        "outside the league"
    )


def test_init_on_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    res = _cli("init", str(tmp_path / "f"))
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip() == (
        f"uno-arena: {tmp_path / 'f'}: not a folder; give a new or an existing folder"
    )


def test_submissions_are_built_gated_and_judged(tmp_path: Path) -> None:
    league = tmp_path / "league"
    res = _cli("init", str(league))
    assert res.returncode == 0, res.stderr
    build = ["{python}", "-c", "open('built.txt', 'w').write('ok')"]
    good = _bot(tmp_path / "good", **GOOD, language="python", build=build)
    res = _cli("submit", str(league), str(good))
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("good@1.0: accepted (gate passed: 24 hands, 0 illegal")
    assert (league / "bots" / "good" / "1.0" / "built.txt").read_text() == "ok"
    assert not (good / "built.txt").exists()  # the league built its own copy

    # a new version retires the old one, whose history stays
    (good / "bot.toml").write_text((good / "bot.toml").read_text().replace('"1.0"', '"1.1"'))
    res = _cli("submit", str(league), str(good))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "good@1.1: accepted" in res.stdout and "retired good@1.0" in res.stdout

    # a bot that dies at once is refused with its log's tail
    crash = ["{python}", "-c", "print('cannot load model weights'); raise SystemExit(3)"]
    broken = _bot(tmp_path / "broken", name="broken", version="0.1", author="bob", run=crash)
    res = _cli("submit", str(league), str(broken))
    assert res.returncode == 1
    # (the gate names it as the ladder will: NAME.ID, the version's id in the league)
    assert res.stdout.startswith("broken@0.1: refused: bot 'broken.3' failed to start")
    assert "cannot load model weights" in res.stdout

    # not submissions at all: one line, exit 2, nothing recorded
    taken = _bot(tmp_path / "taken", **{**GOOD, "version": "9", "author": "mallory"})
    res = _cli("submit", str(league), str(taken))
    assert res.returncode == 2
    assert res.stderr.strip() == (
        "uno-arena: good: the name belongs to another author (alice); choose another name"
    )
    res = _cli("submit", str(league), str(good))
    assert res.returncode == 2 and "good@1.1: this version was submitted already" in res.stderr
    res = _cli("submit", str(league), str(good), "--gate-hands", "4800")
    assert (
        res.returncode == 2
        and "--gate-hands: must be a multiple of 24 from 24 to 2400" in res.stderr
    )
    res = _cli("submit", str(tmp_path / "nowhere"), str(good))
    assert res.returncode == 2 and "no league here" in res.stderr

    store = LeagueStore.open(league)
    try:
        states = {v.key: (v.state, v.author) for v in store.versions()}
        old = next(v for v in store.versions() if v.key == "good@1.0")
    finally:
        store.close()
    assert states == {
        "good@1.0": ("retired", "alice"),
        "good@1.1": ("active", "alice"),
        "broken@0.1": ("refused", "bob"),
    }
    assert old.reason == "replaced by good@1.1" and old.gate["hands"] == 24

    res = _cli("token", "add", str(league), "remote-1", "--author", "dave")
    assert res.returncode == 0 and len(res.stdout.strip()) >= 32
    res = _cli("token", "add", str(league), "good", "--author", "dave")
    assert res.returncode == 2 and "the name is taken (by alice)" in res.stderr
    res = _cli("status", str(league))
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert lines[0].split() == [
        "#",
        "version",
        "state",
        "author",
        "language",
        "hands",
        "rating",
        "interval",
        "note",
    ]
    assert any(ln.split()[:2] == ["good@1.1", "active"] for ln in lines)  # not rated yet
    assert any(ln.split()[:2] == ["remote-1", "remote"] for ln in lines)


def test_init_takes_only_the_league_sections_and_validates_them(tmp_path: Path) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text("[time_control]\ndecision_ms = 5\n")
    res = _cli("init", str(tmp_path / "a"), "--config", str(cfg))
    assert res.returncode == 2 and "time_control.decision_ms" in res.stderr
    cfg.write_text('[tournament]\nname = "x"\n')
    res = _cli("init", str(tmp_path / "b"), "--config", str(cfg))
    assert res.returncode == 2 and "[tournament] is not a league setting" in res.stderr
    cfg.write_text("[sandbox]\nmemory_mb = 2048\n")
    res = _cli("init", str(tmp_path / "c"), "--config", str(cfg))
    assert res.returncode == 0, res.stderr
    store = LeagueStore.open(tmp_path / "c")
    try:
        assert store.settings()["sandbox"]["memory_mb"] == 2048
    finally:
        store.close()
    res = _cli("init", str(tmp_path / "c"))
    assert res.returncode == 2 and "already holds a league" in res.stderr


ILLEGAL = """
import sys
import uno_bot.deciding
from uno_bot.examples.random_bot import RandomBot

# a bot without the SDK's guard (as one in another language may be): it sends what it decides
uno_bot.deciding._check_choice = lambda req, result: (result, "")

class Illegal(RandomBot):
    def decide(self, request, state):
        return max(a.id for a in request.legal_actions) + 7  # not among the legal actions

raise SystemExit(Illegal().main(sys.argv[1:]))
"""


def test_an_illegal_action_is_quoted_with_the_request_it_answered(tmp_path: Path) -> None:
    """A refused submission's reason says what the server said of its first illegal action
    (the reason, the server's explanation, the request answered with the action ids it offered,
    and the action id sent), read from the gate's server log, besides the hand, the seat and
    the replay to open."""
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    folder = tmp_path / "illegal"
    folder.mkdir()
    (folder / "bot.py").write_text(ILLEGAL)
    run = ["{python}", "bot.py", *RUN[3:]]
    _bot(folder, name="illegal", version="0.1", author="dan", run=run)
    res = _cli("submit", str(league), str(folder))
    assert res.returncode == 1, res.stdout + res.stderr
    line = res.stdout.strip()
    assert line.startswith("illegal@0.1: refused: "), line
    assert "illegal action(s) in" in line and "uno-arena replay" in line
    assert ", answering request m" in line and " with action id " in line, line
    sent = int(line.split(" with action id ")[1].split()[0].rstrip(")"))
    offered = line.split("(it offered action ids ")[1].split(")")[0].split(", ")
    assert offered and sent == max(int(a) for a in offered if a != "...") + 7, line


FAILING = """
import sys
from uno_bot.examples.random_bot import RandomBot

EVERY = int(sys.argv.pop(1))

class Failing(RandomBot):
    calls = 0

    def decide(self, request, state):
        Failing.calls += 1
        if Failing.calls % EVERY == 0:
            raise KeyError("weights")  # the bot's own logic fails; the SDK answers a fallback
        return super().decide(request, state)

raise SystemExit(Failing().main(sys.argv[1:]))
"""


@pytest.mark.parametrize("every", [1, 50])
def test_a_bot_whose_decide_fails_is_told_and_refused_when_it_mostly_fails(
    tmp_path: Path, every: int
) -> None:
    """An examination found the gate passing, with "0 illegal, 0 timeouts", a Python bot whose
    own decide raised every time: its SDK answered a legal fallback each time, so the server saw
    no fault. The gate now reads the bot's log: failing in half its decisions or more is a
    refusal, fewer is a pass that says how many."""
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    folder = tmp_path / "failing"
    folder.mkdir()
    (folder / "bot.py").write_text(FAILING)
    run = ["{python}", "bot.py", str(every), *RUN[3:]]
    _bot(folder, name="failing", version="0.1", author="fay", run=run)
    res = _cli("submit", str(league), str(folder))
    line = res.stdout.strip()
    if every == 1:
        assert res.returncode == 1, res.stdout + res.stderr
        assert line.startswith("failing@0.1: refused: the bot's own decide failed "), line
        n = line.split("decide failed ")[1].split(" time(s)")[0]
        m = line.split("the server had ")[1].split(" decisions")[0]
        assert int(n) >= int(m) > 0, line  # optional chances it declined count as failures too
        assert "KeyError" in line and "weights" in line, line
    else:
        assert res.returncode == 0, res.stdout + res.stderr
        assert "gate passed: 24 hands, 0 illegal" in line, line
        n, m = line.split("decide failing ")[1].split(" decisions")[0].split(" time(s), against ")
        assert 0 < int(n) < int(m), line
        assert int(n) in range(int(m) // every - 1, int(m) // every + 2), line


def test_a_folder_of_too_many_files_or_too_many_bytes_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Limits a stranger's folder meets before anything is copied: the bytes of its files
    (sparse files count at their full size) and its number of entries (a million empty files
    would copy for minutes and fill the league's disk with inodes)."""
    from uno_tournament.league import submit as sub

    bot = _bot(tmp_path / "many", **GOOD)
    for i in range(30):
        (bot / f"f{i}").write_bytes(b"")
    monkeypatch.setattr(sub, "MAX_FOLDER_ENTRIES", 20)
    with pytest.raises(LeagueError, match="more than 20 files and folders; leave build"):
        sub._folder_size(bot)
    monkeypatch.setattr(sub, "MAX_FOLDER_ENTRIES", 100)
    assert sub._folder_size(bot) == (bot / "bot.toml").stat().st_size

    # a sparse file of 1 GiB takes no disk but counts at its size, and the CLI says so
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    big = _bot(tmp_path / "sparse", **GOOD)
    with (big / "weights.bin").open("wb") as f:
        f.truncate(1 << 30)
    res = _cli("submit", str(league), str(big))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip() == (
        f"uno-arena: {big}: more than 512 MiB; leave build output and dependencies out of the "
        "submitted folder"
    )
    assert not (league / "bots" / "good").exists()


def test_each_sdks_decide_failure_lines_are_counted(tmp_path: Path) -> None:
    """The lines the five SDKs write when they answer a fallback for a failed decide (copied
    from their sources), and lines that are not failures."""
    from uno_tournament.league.submit import decide_failures

    failures = [
        # Python
        "2026-12-04T06:47:12 WARNING decide failed; answering the fallback match_id=m1 seat=0",
        # Go
        'time=... level=ERROR msg="decide failed" err="boom"',
        'level=ERROR msg="decide returned an id that is not legal" action=99',
        'level=WARN msg="decide did not answer in time" prompt=PROMPT_TURN',
        'level=WARN msg="decide skipped a required request"',
        # TypeScript
        "[bot] error decide failed on request o5: Error: boom",
        "[bot] warn decide did not answer request o6 within its 80 ms budget: answering the "
        "fallback 3",
        "[bot] warn decide returned nothing for the required request o7: answering the fallback",
        "[bot] error decide returned 99 for request o8, not a legal action id: answering the "
        "fallback 1",
        # Java
        "WARNING: m1/seat 0/o5: decide threw; answering the fallback 3",
        "WARNING: m1/seat 0/o6: decide returned 99, which is not a legal id; answering the "
        "fallback 3",
        "WARNING: m1/seat 0/o7: decide took more than its 80 ms budget; answering the fallback 3",
        # Rust
        "[WARN] m1/0: request o5: decide panicked (boom); answering the fallback 3",
        "[ERROR] m1/0: request o6: the seat's thread is gone; answering the fallback 3",
    ]
    others = [
        "[bot] info decide failed late on request o5: Error: boom",  # after the fallback
        "[bot] warn decide took 90 ms, over its 80 ms budget (a synchronous decide cannot be "
        "interrupted)",  # its own answer, sent late
        'level=INFO msg="dropped the late result of decide" action=3',
        "INFO match started match_id=m1 seat=0",
    ]
    log = tmp_path / "bot.log"
    log.write_text("\n".join(others[:2] + failures + others[2:]) + "\n")
    n, first = decide_failures(log)
    assert n == len(failures)
    assert first.startswith("2026-12-04T06:47:12 WARNING decide failed"), first
    assert decide_failures(tmp_path / "missing.log") == (0, "")
    # the part the sandbox's rotation moved aside is read first; an endless line is no problem
    (tmp_path / "bot.log.1").write_bytes(b"x" * (3 << 20) + b" decide threw; answering\n")
    n, first = decide_failures(log)
    assert n == len(failures) + 1
    assert first == "decide threw; answering", first  # the older part's, read in 1 MiB pieces
    # a stranger's text reaches the organiser's terminal: its escape sequences are spelled out
    (tmp_path / "bot.log.1").unlink()
    log.write_bytes(b"\x1b]0;owned\x07\x1b[2J decide failed; answering the fallback\n")
    n, first = decide_failures(log)
    assert n == 1 and first == "\\x1b]0;owned\\x07\\x1b[2J decide failed; answering the fallback"
    assert "\x1b" not in first and "\x07" not in first


def test_a_crashed_bots_log_tail_is_shown_without_its_escape_sequences(tmp_path: Path) -> None:
    """The tail of a bot's log goes into refusals ("failed to start ...") and errors the
    organiser reads in a terminal: a stranger's bot printing an escape sequence (retitling the
    terminal, clearing the screen) has it spelled out instead of acted on."""
    from uno_tournament.procs import tail

    log = tmp_path / "bot.log"
    log.write_bytes(b"loading\n\x1b[2J\x1b]0;pwned\x07cannot load model\r\n")
    assert tail(log) == ["loading", "\\x1b[2J\\x1b]0;pwned\\x07cannot load model"]


def test_a_manifest_may_name_programs_under_the_system_folders(tmp_path: Path) -> None:
    man = read_manifest(_bot(tmp_path / "b", **{**GOOD, "run": ["/usr/bin/java", "-jar", "b.jar"]}))
    assert man.run[0] == "/usr/bin/java"


def test_a_machine_that_cannot_confine_refuses_strangers_and_records_nothing(
    tmp_path: Path,
) -> None:
    """Without bubblewrap a league's submissions ran unconfined, as root, and `league submit`
    said nothing. A league requires the sandbox unless its settings say `required = false`;
    the refusal is the organiser's to fix, so the author's version is not recorded."""
    league = tmp_path / "lg"
    assert _cli("init", str(league)).returncode == 0
    bot = _bot(tmp_path / "b", **GOOD)
    code = (
        "import sys; from uno_tournament import sandbox; "
        "sandbox.Protections.missing = lambda self, spec: ['namespaces (bwrap not found)']; "
        "from uno_server.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, "league", "submit", str(league), str(bot)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert res.returncode == 2, res.stdout + res.stderr
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and "cannot confine a submitted bot" in err[0], res.stderr
    assert "required = false" in err[0] and "Nothing was recorded" in err[0]
    store = LeagueStore.open(league)
    try:
        assert store.versions("good") == []
    finally:
        store.close()
    assert not (league / "bots" / "good").exists()


def test_set_user_id_and_world_writable_bits_are_cleared_from_what_is_submitted_and_built(
    tmp_path: Path,
) -> None:
    """An examination submitted a set-user-ID copy of python (and built a set-user-ID shell):
    the league copied and built them as its user, root, so any user of the machine could run
    them as root. The bits are cleared after the copy and after the build, and the bots'
    folders are the league's user's alone."""
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    build = [
        "/bin/sh",
        "-c",
        "stat -c %a submitted-suid > seen-by-build.txt && cp /bin/true built-suid && "
        "chmod 6755 built-suid && mkdir open && chmod 777 open",
    ]
    bot = _bot(tmp_path / "suid", **GOOD, language="python", build=build)
    (bot / "submitted-suid").write_bytes(b"#!/bin/sh\n")
    os.chmod(bot / "submitted-suid", 0o4755)
    (bot / "shared.txt").write_text("anyone may change me\n")
    os.chmod(bot / "shared.txt", 0o666)
    (bot / "link").symlink_to("/bin/true")  # a link is left as it is, and not followed
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 0, res.stdout + res.stderr
    dest = league / "bots" / "good" / "1.0"
    modes = {
        p.name: p.lstat().st_mode & 0o7777
        for p in dest.iterdir()
        if p.name in {"submitted-suid", "shared.txt", "built-suid", "open"}
    }
    assert modes == {
        "submitted-suid": 0o755,
        "shared.txt": 0o644,
        "built-suid": 0o755,
        "open": 0o755,
    }, {k: oct(v) for k, v in modes.items()}
    assert (dest / "seen-by-build.txt").read_text().strip() == "755"  # cleared before the gate
    assert (dest / "link").is_symlink()
    assert Path("/bin/true").resolve().stat().st_mode & 0o7777 == 0o755
    assert (league / "bots").stat().st_mode & 0o777 == 0o700


def test_a_refused_versions_folder_and_its_build_output_are_not_kept(tmp_path: Path) -> None:
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    build = ["{python}", "-c", "open('big.bin', 'wb').write(bytes(1 << 20))"]
    crash = ["{python}", "-c", "raise SystemExit(3)"]
    bot = _bot(tmp_path / "refused", name="gone", version="1", author="bob", run=crash, build=build)
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 1 and "gone@1: refused" in res.stdout, res.stdout + res.stderr
    # nor its name's folder, when no other version of the name is kept (an examination found
    # an empty bots/NAME/ after a refused build)
    assert not (league / "bots" / "gone").exists()
    assert "gone@1" in _cli("status", str(league)).stdout  # the verdict itself is kept


def test_a_file_name_with_a_newline_or_an_escape_is_spelled_out_in_one_line(
    tmp_path: Path,
) -> None:
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    bot = _bot(tmp_path / "odd", **GOOD)
    os.mkfifo(bot / "evil\ngood@1.0: accepted \x1b]0;pwned\x07")
    res = _cli("submit", str(league), str(bot))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "\x1b" not in res.stderr, res.stderr
    assert "evil\\ngood@1.0: accepted \\x1b]0;pwned\\x07: a named pipe" in lines[0]


def test_a_gate_hides_the_league_even_inside_a_folder_bots_may_read(tmp_path: Path) -> None:
    """With the league inside an organiser's [sandbox] paths, an examination's bot read
    league.sqlite and the other versions' files during its gate: the gate hid only its own
    folder. The whole league is now hidden from the gate's builds and bots."""
    shared = tmp_path / "shared"
    league = shared / "league"
    cfg = tmp_path / "league.toml"
    cfg.write_text(f"[sandbox]\npaths = [{json.dumps(str(shared))}]\n")
    assert _cli("init", str(league), "--config", str(cfg)).returncode == 0
    victim = _bot(tmp_path / "victim", **{**GOOD, "name": "victim", "author": "bob"})
    (victim / "secret.txt").write_text("SECRET strategy\n")
    assert _cli("submit", str(league), str(victim)).returncode == 0
    look = f"cat {league}/league.sqlite {league}/bots/victim/1.0/secret.txt; ls -a {league}; true"
    spy = _bot(
        tmp_path / "spy",
        **GOOD,
        language="python",
        build=["/bin/sh", "-c", "(" + look + ") > leak.txt 2>&1"],
    )
    res = _cli("submit", str(league), str(spy))
    assert res.returncode == 0, res.stdout + res.stderr
    leak = (league / "bots" / "good" / "1.0" / "leak.txt").read_text(errors="replace")
    assert "SQLite format" not in leak and "SECRET" not in leak, leak
    assert "gates" not in leak.split() and "league.sqlite" not in leak.split(), leak
    assert "No such file" in leak  # the spy did look, and found nothing


def test_a_submit_stopped_during_its_gate_records_nothing(tmp_path: Path) -> None:
    """A Ctrl-C (or SIGTERM) during the gate recorded "refused: only 0 of 24 gate hands were
    played": the version was used up ("submitted already") and the refusal counted against the
    author's daily limit (an examination). Stopping the organiser's command is no verdict."""
    league = tmp_path / "league"
    assert _cli("init", str(league)).returncode == 0
    bot = _bot(tmp_path / "b", **GOOD)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "league", "submit", str(league), str(bot)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )
    gate_db = league / "gates" / "good@1.0" / "tournament.sqlite"
    deadline = time.monotonic() + 300
    while not gate_db.exists():  # the gate has begun: its store is made before its server
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, (out, err)
    assert "good@1.0: interrupted; nothing is recorded" in err, err
    assert "refused" not in out
    store = LeagueStore.open(league)
    try:
        assert store.versions() == []
    finally:
        store.close()
    assert not (league / "bots" / "good" / "1.0").exists()
