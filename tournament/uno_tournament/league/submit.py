"""``league submit``: a bot folder becomes a version of the ladder only after its build and its
gate.

1. The manifest is read (:mod:`.manifest`); the bot's name must be free or the submitter's, and
   the version new.
2. The folder is copied into the league (``bots/NAME/VERSION``), so that later edits of the
   author's folder change nothing that was judged.
3. Its build step runs, confined, with its time limit (:mod:`uno_tournament.build`), before the
   league's one submission lock is taken: a build may take two hours, and held the lock (every
   other author's ``submit`` and ``token add`` waited) all that time. Submissions of one author,
   or of one bot name, are built one at a time.
4. Under the league's lock, the checks again, then the gate: a short tournament of ``gate_hands``
   hands, with duplicate deals and rotated seats, between the new version and three built-in
   bots, on an embedded server, in the league's sandbox, with the league's rules, time control
   and fault policy. The version passes with 0 illegal actions, 0 timeouts, 0 crashes and every
   gate hand played. The bot plays its gate under the name it will have in the ladder
   (``NAME.ID``), against opponents named as the ladder's house bots.
5. The verdict is recorded in one transaction: ``active`` (a previous active version of the
   bot is retired, with its history kept) or ``refused`` with the reason its author can act on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
import os
import re
import shutil
import signal
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..build import BuildError, build_bot
from ..config import BotSpec, TournamentConfig, _sandbox_from_dict
from ..player import RunnerError
from ..procs import printable, tail
from ..replay import replay_name
from ..runner import Runner
from ..sandbox import SandboxError
from ..sandbox import check as check_sandbox
from ..sharding import new_tournament_id
from ..store import HandRecord, Store
from .locks import flocked as _flocked
from .locks import key_lock as _held
from .manifest import RESERVED_RULE, Manifest, ManifestError, read_manifest, reserved
from .quota import check_author
from .records import open_league
from .settings import league_sandbox
from .store import LeagueError

__all__ = [
    "GATE_HANDS",
    "MAX_FOLDER_BYTES",
    "MAX_FOLDER_ENTRIES",
    "MAX_GATE_HANDS",
    "Verdict",
    "judge",
    "submit",
]

GATE_HANDS = 24
"""Default hands of the gate (one block: 6 deals, each in 4 seat rotations)."""
MAX_GATE_HANDS = 2400
"""Most hands a gate may play (``--gate-hands``)."""
MAX_FOLDER_BYTES = 512 * 1024 * 1024
"""Largest bot folder a submission may copy in."""
MAX_FOLDER_ENTRIES = 100_000
"""Files, folders and links a submitted folder may hold: a million empty files copy as slowly
as a large folder and fill the league's disk with inodes, and no bot needs them."""
BUILT_IN = (
    ("gate-heuristic", ["-m", "uno_tournament.bots.engine_heuristic"]),
    ("gate-random", ["-m", "uno_bot.examples.random_bot"]),
    ("gate-blunders", ["-m", "uno_tournament.bots.graded", "--randomness", "0.5"]),
)
"""The gate's opponents: the example tournament's built-in bots."""
SDK_ARGS = ["--log-level", "warning", "--addr", "{addr}", "--name", "{name}"]


@dataclass(frozen=True)
class Verdict:
    key: str
    accepted: bool
    reason: str
    retired: tuple[str, ...] = ()
    gate: dict[str, Any] = dataclasses.field(default_factory=dict)


UNSAFE_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWGRP | stat.S_IWOTH


def defang(folder: Path) -> None:
    """Clear the set-user-ID, set-group-ID and sticky bits and the write bits of group and
    others on every file and folder under ``folder`` (links are left alone, and not followed).
    A submission's files are copied, and its build runs, as the league's user: a set-user-ID
    program a stranger submits or builds would run with that user's powers (root's, where the
    league runs as root) for anyone on the machine, and a world-writable file could be changed
    after its version passed the gate."""
    # each folder opened relative to its parent (os.fwalk): a build's folders nested past
    # PATH_MAX stopped a walk by path with ENAMETOOLONG, a traceback that left the copy behind
    for _, dirs, files, dfd in os.fwalk(folder, follow_symlinks=False):
        for name in (*dirs, *files):
            mode = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode
            if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & UNSAFE_BITS:
                os.chmod(name, stat.S_IMODE(mode) & ~UNSAFE_BITS, dir_fd=dfd)
    mode = os.lstat(folder).st_mode
    if stat.S_IMODE(mode) & UNSAFE_BITS:
        os.chmod(folder, stat.S_IMODE(mode) & ~UNSAFE_BITS)


def _folder_size(folder: Path) -> int:
    """The bytes of the folder's regular files (links are not followed: a link is copied as a
    link and resolves inside the sandbox). A named pipe, socket or device in it is refused: the
    copy would stop on it with a traceback (and a pipe, opened, waits for a writer), and so is a
    folder of more than :data:`MAX_FOLDER_ENTRIES` entries."""
    total = 0
    for n, p in enumerate(folder.rglob("*"), 1):
        if n > MAX_FOLDER_ENTRIES:
            raise LeagueError(
                f"{folder}: more than {MAX_FOLDER_ENTRIES:,} files and folders; leave build "
                "output and dependencies out of the submitted folder"
            )
        st = p.lstat()
        mode = st.st_mode
        if stat.S_ISLNK(mode) or stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            kind = (
                "a named pipe"
                if stat.S_ISFIFO(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "a device"
            )
            raise LeagueError(  # the name is a stranger's: a newline or escape spelled out
                f"{printable(str(p))}: {kind}; a bot folder holds only files, folders and "
                "links: remove it and submit again"
            )
        total += st.st_size
        if total > MAX_FOLDER_BYTES:
            break
    return total


def submit(
    league_dir: Path,
    bot_folder: Path,
    *,
    gate_hands: int = GATE_HANDS,
    store_url: str | None = None,
    gate_port: int = 0,
) -> Verdict:
    """Judge one submission and record the verdict. Raises :class:`LeagueError` (nothing is
    recorded) for a submission that is not one: a bad manifest, a name of another author, a
    version that exists, a folder too big. ``store_url``: the league's records are in that
    PostgreSQL database (the built bot and its gate stay in ``league_dir``, recorded by its
    absolute path: a league on many machines shares the folder at one path). ``gate_port``: the
    gate's game server listens there (0: any free port)."""
    if not GATE_HANDS <= gate_hands <= MAX_GATE_HANDS or gate_hands % 24:
        raise LeagueError(
            f"--gate-hands: must be a multiple of 24 from 24 to {MAX_GATE_HANDS}, got {gate_hands}"
        )
    try:
        man = read_manifest(bot_folder)
    except ManifestError as exc:
        raise LeagueError(str(exc)) from None
    if reserved(man.name):
        raise LeagueError(f"{bot_folder / 'bot.toml'}: name: {man.name!r} {RESERVED_RULE}")
    dest = (league_dir / "bots" / man.name / man.version).resolve()
    if dest.is_relative_to(bot_folder.resolve()):  # the copy would copy itself, for ever
        where = (
            "is inside the league's folder"
            if bot_folder.resolve().is_relative_to(league_dir.resolve())
            else "holds the league's own folder"
        )
        raise LeagueError(
            f"{bot_folder}: {where} ({league_dir}); submit a bot folder outside the league"
        )
    # one author's submissions, and one name's, one at a time (their checks stay true while
    # the build runs outside the league's lock, and two of one name never share a folder);
    # always in this order, and the league's own lock last, so no two wait on each other
    with (
        _held(league_dir, f"author {man.author.casefold()}", f"of {man.author}"),
        _held(league_dir, f"name {man.name.casefold()}", f"of {man.name}"),
    ):
        return _submit(league_dir, bot_folder, man, gate_hands, store_url, gate_port)


@contextlib.contextmanager
def submission_lock(league_dir: Path) -> Iterator[None]:
    """One submission to a league at a time, from its checks to its record: two at once both
    passed the checks (a name's owner, a version's existence) before either was recorded, so
    one author's version retired another's bot, and two of one name@version shared (and
    removed) each other's build and gate folders. Waits, and says so, for the one in progress
    (the lock is the folder's, so it holds for every process on this machine, and across
    machines where the shared folder's file system honours it; the record's own transaction
    checks again, see :meth:`LeagueStore.record`)."""
    if not league_dir.is_dir():  # not a league: opening it says so, and makes no folder
        yield
        return
    with _flocked(
        league_dir / ".submit.lock", f"waiting: another submission to {league_dir} is being judged"
    ):
        yield


def _submit(
    league_dir: Path,
    bot_folder: Path,
    man: Manifest,
    gate_hands: int,
    store_url: str | None,
    gate_port: int = 0,
) -> Verdict:
    with submission_lock(league_dir):  # a first look, before the copy and the build
        store = open_league(league_dir, store_url)
        try:
            settings = _admissible(store, man, bot_folder)
        finally:
            store.close()
    _confinable(settings, store.location)
    size = _folder_size(bot_folder)
    if size > MAX_FOLDER_BYTES:
        raise LeagueError(
            f"{bot_folder}: more than {MAX_FOLDER_BYTES // 2**20} MiB; leave build output "
            "and dependencies out of the submitted folder"
        )
    dest = league_dir / "bots" / man.name / man.version
    out = league_dir / "gates" / man.key
    recorded = False
    with _sigterm_as_ctrl_c():
        try:
            _copy(bot_folder, dest)
            shutil.rmtree(out, ignore_errors=True)
            try:  # outside the league's lock: it may take build_timeout_s (two hours)
                failed = asyncio.run(_build(league_dir, man, dest, settings, out / "logs"))
            finally:
                defang(dest)  # what the build made, as what was submitted
            with submission_lock(league_dir):
                store = open_league(league_dir, store_url)
                try:
                    # again, in the lock that the record is made in: the limits and the name
                    # hold for what is recorded, whatever was recorded while it was built
                    _admissible(store, man, bot_folder)
                    if failed:
                        accepted, reason, gate = False, failed, {"hands": 0}
                    else:
                        name = f"{man.name}.{1 + max((v.id for v in store.versions()), default=0)}"
                        accepted, reason, gate = _gate(
                            league_dir, man, dest, settings, gate_hands, name, gate_port
                        )
                    if not accepted:  # a refused version never runs: its folder (and a
                        _drop(dest)  # build's output) is not kept
                    # no Ctrl-C or SIGTERM between the record and the note that it is made
                    # (it would remove an accepted version's folder): they wait until after
                    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
                    try:
                        retired = store.record(
                            name=man.name,
                            version=man.version,
                            author=man.author,
                            language=man.language,
                            # a folder league's own bots/NAME/VERSION, found from
                            # wherever `league run` runs (league.run.built_folder)
                            folder=str(
                                dest.resolve() if store_url else dest.relative_to(league_dir)
                            ),
                            manifest=dataclasses.asdict(man),
                            state="active" if accepted else "refused",
                            reason=reason,
                            gate=gate,
                        )
                        recorded = True
                    finally:
                        signal.pthread_sigmask(signal.SIG_SETMASK, held)
                finally:
                    store.close()
        except KeyboardInterrupt:  # nothing recorded: the next submit judges it from scratch
            if not recorded:
                _drop(dest)
                print(f"{man.key}: interrupted; nothing is recorded", file=sys.stderr)
            raise
        except BaseException:
            if not recorded:  # refused by the second look, or failed: no debris
                _drop(dest)
            raise
    return Verdict(man.key, accepted, reason, tuple(retired), gate)


def refuse_case_alike(store: Any, name: str) -> None:
    """Refuse a new bot name (a submission's or a remote bot's token) that differs from a name
    the league knows only in case: it would sit in the standings beside the other author's
    bot, looking like it (an examination registered `Example-Heuristic` by token)."""
    folded = name.casefold()
    names = {v.name for v in store.versions()} | {n for n, _ in store.token_names()}
    like = sorted(n for n in names if n.casefold() == folded)
    if like:
        raise LeagueError(
            f"{name}: too like the bot {like[0]} (names differ only in case); choose another name"
        )


def _admissible(store: Any, man: Manifest, bot_folder: Path) -> dict[str, Any]:
    """Raise :class:`LeagueError` for a submission the league does not take (a name of another
    author or too like another, a remote bot's name, a version that exists, an author over a
    limit); else the league's settings."""
    owner = store.owner(man.name)
    if owner is not None and owner != man.author:
        raise LeagueError(
            f"{man.name}: the name belongs to another author ({owner}); choose another name"
        )
    if owner is None:  # a new name: not one that differs from another only in case
        refuse_case_alike(store, man.name)
    if any(n == man.name for n, _ in store.token_names()):
        # a remote bot of this name would retire the submitted one when it connected
        raise LeagueError(
            f"{man.name}: a remote bot of that name has a token; choose another name, or "
            f"revoke the token first (uno-arena league token revoke LEAGUE {man.name})"
        )
    if any(v.version == man.version for v in store.versions(man.name)):
        raise LeagueError(
            f"{man.key}: this version was submitted already; raise the version in "
            f"{bot_folder / 'bot.toml'}"
        )
    settings: dict[str, Any] = store.settings()
    check_author(store, man.author, man.name, settings)
    return settings


def _drop(dest: Path) -> None:
    """Remove a version's folder ``LEAGUE/bots/NAME/VERSION``, and its name's folder if no other
    version is left in it (a refused first version left an empty ``bots/NAME/``)."""
    shutil.rmtree(dest, ignore_errors=True)
    with contextlib.suppress(OSError):  # not empty: another version of the name is kept
        dest.parent.rmdir()


def _copy(bot_folder: Path, dest: Path) -> None:
    """Copy the submitted folder to ``dest`` (``LEAGUE/bots/NAME/VERSION``), defanged."""
    if dest.exists():  # a submission killed before its verdict: judged again from scratch
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # only the league's own user may enter the bots' folders: a program a build leaves
    # there is a stranger's, and no other user of this machine should run it
    dest.parent.parent.chmod(0o700)
    try:
        shutil.copytree(bot_folder, dest, symlinks=True)
        defang(dest)
    except (shutil.Error, OSError) as exc:  # unreadable files, a folder that changed
        _drop(dest)
        first = exc.args[0][0] if isinstance(exc, shutil.Error) and exc.args[0] else exc
        why = printable(" ".join(str(first).split()))[:300]
        raise LeagueError(f"{bot_folder}: cannot be copied into the league ({why})") from None


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM as Ctrl-C while a submission is copied, built, gated and recorded: it killed the
    command during the build (exit status 130, no word), and left the copied folder behind."""
    try:
        before = signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:  # not the main thread: SIGTERM is not ours to take
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


async def _build(
    league_dir: Path, man: Manifest, dest: Path, settings: dict[str, Any], log_dir: Path
) -> str:
    """Build the copied version in its sandbox (:mod:`uno_tournament.build`); '' once built,
    else why not (the refusal's reason). SIGTERM stops it as Ctrl-C does."""
    if not man.build:
        return ""
    spec = gate_config(man, dest, settings, GATE_HANDS).bots[0]
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    stopped: list[int] = []

    def stop() -> None:
        stopped.append(1)
        if me is not None:
            me.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        # as the gate's runner hid them: the league's folder, and the other bots' folder
        await build_bot(spec, log_dir, hide=[league_dir, Path.cwd()])
    except BuildError as exc:
        return str(exc)
    except asyncio.CancelledError:
        if stopped:
            raise KeyboardInterrupt from None
        raise
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGTERM)
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGTERM, _interrupt)  # the rest of the submission's
    return ""


def _confinable(settings: dict[str, Any], where: str) -> None:
    """Before a stranger's bot is built or run: can this machine confine it? With the league's
    ``[sandbox] required`` (the default of ``league init``) a missing protection refuses the
    submission, which is the organiser's to fix, so nothing is recorded against the author's
    version; without it each missing protection is one warning line on stderr. A sandbox
    turned off refuses too, unless ``required = false`` (then a warning: :mod:`.settings`)."""
    spec = league_sandbox(settings, where)
    if not spec.enabled:
        return
    try:
        missing = check_sandbox([spec])
    except SandboxError as exc:
        raise LeagueError(
            f"this machine cannot confine a submitted bot ({exc}); install what `uno-arena "
            "sandbox check` names, or start the league with [sandbox] required = false to run "
            "strangers' bots without it. Nothing was recorded: submit again once it is fixed"
        ) from None
    for line in missing:
        print(f"sandbox: missing {line} (the bot runs less confined)", file=sys.stderr)


def gate_config(
    man: Manifest,
    folder: Path,
    settings: dict[str, Any],
    gate_hands: int,
    name: str | None = None,
) -> TournamentConfig:
    """The gate's tournament: the new version and the three built-in bots. ``name``: the
    version's name in the gate, without its build (built already); else ``man.name``, with it.

    The bot is told the name it will have in the ladder, and its opponents are named as the
    ladder's house bots: a bot that told the gate from the ladder by its names (``NAME`` against
    ``gate-*`` there, ``NAME.ID`` against ``house-*`` here) behaved in its gate and flooded the
    ladder's server (an examination)."""
    sandbox = _sandbox_from_dict(settings.get("sandbox"))
    bots = [
        BotSpec(
            name=name or man.name,
            command=man.run,
            cwd=str(folder.resolve()),
            sandbox=sandbox,
            build=man.build if name is None else (),
            build_timeout_s=man.build_timeout_s,
        )
    ]
    for opponent, args in BUILT_IN:
        bots.append(
            BotSpec(
                name=opponent.replace("gate-", "house-"),
                command=("{python}", *args, *SDK_ARGS),
                cwd=str(Path.cwd()),
                sandbox=sandbox,
            )
        )
    data = {
        "name": "gate",
        "bots": [dataclasses.asdict(b) for b in bots],
        "seed": int(settings.get("seed", 1)),  # the league's secret (cli.settings_from)
        "blocks": gate_hands // 24,
        "concurrency": 4,
        "rules": settings.get("rules", {}),
        "time_control": settings.get("time_control", {}),
        "faults": {**settings.get("faults", {}), "max_restarts": 0},
        "sandbox": settings.get("sandbox", {}),
    }
    return TournamentConfig.from_dict(data)


def _gate(
    league_dir: Path,
    man: Manifest,
    folder: Path,
    settings: dict[str, Any],
    gate_hands: int,
    name: str,
    port: int = 0,
) -> tuple[bool, str, dict[str, Any]]:
    """Play the gate of the built version, as bot ``name``, its server on ``port``."""
    out = league_dir / "gates" / man.key
    with contextlib.suppress(FileNotFoundError):
        (out / "tournament.sqlite").unlink()  # an earlier gate's, killed (the build's log stays)
    config = gate_config(man, folder, settings, gate_hands, name)
    tid = new_tournament_id("gate")
    store = Store.create(out, {"tournament_id": tid, "config": config.to_dict()})
    log = io.StringIO()
    runner = Runner(out, store, config, tid, progress=False, stream=log, port=port)
    # the whole league folder (its records, the gates, every other bot) is hidden from the
    # bot and its build, should a folder bots may read hold it; its own folder stays shown
    runner.hide.append(league_dir)
    try:
        code = asyncio.run(runner.run())
        with contextlib.suppress(ValueError):  # the runner's SIGTERM is gone: the submission's
            signal.signal(signal.SIGTERM, _interrupt)
    except RunnerError as exc:
        store.close()
        return False, str(exc), {"hands": 0}
    if code == 130 or runner.interrupted:
        # Ctrl-C or SIGTERM stopped the gate, not the bot: no verdict (an examination's
        # interrupted submit recorded "refused: only 0 of 24 gate hands were played", which
        # used the version up and counted against the author's daily limit)
        store.close()
        raise KeyboardInterrupt
    rows = [h for h in store.hand_rows()]
    incidents = [(b, k, d) for _, b, k, d in store.incidents() if b == name]
    store.close()
    crashes = [d for _, k, d in incidents if k in ("crash", "given_up")]
    return judge(
        rows,
        name,
        gate_hands,
        out,
        crashes,
        runner.log_dir / "server.log",
        bot_log=runner.log_dir / f"{name}.log",
    )


def judge(
    rows: Sequence[HandRecord],
    name: str,
    planned: int,
    out: Path,
    crashes: Sequence[str] = (),
    server_log: Path | None = None,
    *,
    bot_log: Path | None = None,
) -> tuple[bool, str, dict[str, Any]]:
    """The gate's verdict on bot ``name`` from its gate hands (a submission's, or a remote
    bot's on its first connection): it passes with every planned hand played, 0 illegal
    actions, 0 timeouts and 0 crashes; else the reason says why. A crash comes first (the limit
    that stopped the bot, or its exit, and the last lines of ``bot_log``): the decisions a
    crashed bot left pending time out, and "3 timeout(s)" hid a bot the memory limit stopped.
    Otherwise the reason names the first fault's hand and seat,
    with the replay to look at, and for an illegal action what the server said of the first
    one (read from ``server_log``, the game server's JSON log: the reason, the server's
    explanation, the request it answered and the action id it sent). ``out`` is the gate's
    folder (its ``replays``).

    ``bot_log`` (the bot's own log) is read for the SDKs' "decide failed" lines
    (:data:`DECIDE_FAILED`): an SDK answers a fallback move when the bot's ``decide`` raises,
    returns an id that is not legal or runs out of its budget, so the server sees a legal move
    and no fault. A bot whose ``decide`` failed in half of its decisions or more is refused (its
    own logic is not what plays); fewer failures pass, and the verdict says how many, with the
    first."""
    seats = [(h.hand_id, s) for h in rows for s in h.seats if s.bot == name]
    played = len(seats)
    illegal = sum(s.illegal for _, s in seats)
    timeouts = sum(s.timeouts for _, s in seats)
    gate = {
        "hands": played,
        "planned": planned,
        "illegal": illegal,
        "timeouts": timeouts,
        "crashes": len(crashes),
        "folder": str(out),
    }
    if crashes:  # first: a bot stopped by a limit left its pending decisions to time out
        last = " | ".join(x[:300] for x in tail(bot_log, 3)) if bot_log is not None else ""
        return (
            False,
            f"the bot crashed during the gate: {crashes[0]}"
            + (f"; last log lines: {last} (log: {bot_log})" if last else ""),
            gate,
        )
    if illegal:
        first = next((h, s) for h, s in seats if s.illegal)
        said = first_rejection(server_log, name, {h.match_id for h in rows}) if server_log else ""
        return (
            False,
            f"{illegal} illegal action(s) in {played} gate hands; the first in hand {first[0]}, "
            f"seat {first[1].seat}"
            + (f": {said}" if said else "")
            + f" (see it: uno-arena replay {out / 'replays' / replay_name(first[0])})",
            gate,
        )
    if timeouts:
        first = next((h, s) for h, s in seats if s.timeouts)
        return (
            False,
            f"{timeouts} timeout(s) in {played} gate hands (a decision took longer than the "
            f"time control); the first in hand {first[0]}, seat {first[1].seat}",
            gate,
        )
    if played < planned:
        return False, f"only {played} of {planned} gate hands were played", gate
    failed, first_failure = decide_failures(bot_log) if bot_log is not None else (0, "")
    decisions = sum(s.decisions for _, s in seats)
    gate["decide_failed"] = failed
    if failed and failed * 2 >= decisions:
        return (
            False,
            f"the bot's own decide failed {failed} time(s) in {played} gate hands, where the "
            f"server had {decisions} decisions from it (its SDK answered a fallback each time, "
            f"so the server saw no fault); the first: {first_failure} (the whole log: {bot_log})",
            gate,
        )
    passed = f"gate passed: {played} hands, 0 illegal, 0 timeouts, 0 crashes"
    if failed:
        passed += (
            f"; but its log reports decide failing {failed} time(s), against {decisions} "
            f"decisions (the SDK answered a fallback): {first_failure}"
        )
    return True, passed, gate


DECIDE_FAILED = re.compile(
    rb"decide failed(?! late)"  # Python, Go, TypeScript (a "late" failure came after the fallback)
    rb"|decide threw|decide panicked|decide took more than its"  # Java, Rust
    rb"|not a legal id|not a legal action id|decide returned an id that is not legal"
    rb"|decide did not answer|decide skipped a required request"  # Go, TypeScript
    rb"|decide returned nothing for the required request|the seat's thread is gone"
)
"""What the five SDKs log when a bot's ``decide`` fails and they answer a fallback for it: it
raised (or panicked), returned an id that is not legal, returned nothing for a required request,
or ran out of its budget. (TypeScript's "decide took N ms, over its budget" is not here: the
bot's own answer was sent, late.)"""

LOG_READ_LIMIT = 64 << 20
"""How much of a bot's log the gate reads (a stranger's bot may write without end)."""


def decide_failures(bot_log: Path) -> tuple[int, str]:
    """How many lines of the bot's log say its decide failed (:data:`DECIDE_FAILED`), and the
    first, shortened; ``(0, "")`` if it cannot be read. The part the sandbox's rotation moved to
    ``NAME.log.1`` is read first; at most :data:`LOG_READ_LIMIT` bytes in all, a line at most
    1 MiB at a time (a bot may write one endless line)."""
    count, first, read = 0, "", 0
    for path in (bot_log.with_name(bot_log.name + ".1"), bot_log):
        try:
            with path.open("rb") as f:
                while read < LOG_READ_LIMIT:
                    line = f.readline(1 << 20)
                    if not line:
                        break
                    read += len(line)
                    if DECIDE_FAILED.search(line):
                        count += 1
                        if not first:
                            text = " ".join(line.decode("utf-8", "replace").split())
                            first = printable(text[:300])
        except OSError:
            continue
    return count, first


def first_rejection(server_log: Path, bot: str, match_ids: set[str]) -> str:
    """What the game server said of ``bot``'s first rejected action in one of these matches
    (its "action rejected" log line), in words; "" if the log has none (or cannot be read)."""
    try:
        with server_log.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"action rejected"' not in line or bot not in line:
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("bot") != bot or rec.get("match_id") not in match_ids:
                    continue
                action = rec.get("action_id")
                legal = rec.get("legal")
                offered = (
                    f" (it offered action ids {', '.join(str(a) for a in legal[:20])}"
                    + (", ..." if len(legal) > 20 else "")
                    + ")"
                    if isinstance(legal, list) and legal
                    else ""
                )
                return (
                    f"{str(rec.get('reason', ''))[len('ERROR_REASON_') :]} "
                    f"({' '.join(str(rec.get('detail', '')).split())[:300]}), answering request "
                    f"{rec.get('request_id', '?')}{offered} with "
                    + (f"action id {action}" if action is not None else "no action id")
                )
    except OSError:
        return ""
    return ""


def describe(v: Verdict) -> str:
    """One line for the submitter."""
    if v.accepted:
        more = f"; retired {', '.join(v.retired)}" if v.retired else ""
        return f"{v.key}: accepted ({v.reason}){more}"
    return f"{v.key}: refused: {v.reason}"
