"""Tournament configuration: a TOML file read into validated dataclasses.

Every error names the offending field (``bots[2].command: must be a list of strings``). Example::

    [tournament]
    name = "example"        # letters, digits, - and _; part of every hand id
    seed = 7                # seeds every deal (left out: a secret one, drawn for the run)
    blocks = 1              # duplicate blocks of 24 hands per table (or one of the next two)
    # hands = 5000          # a hand budget: a balanced design of about this many hands
    # precision_elo = 30    # or a precision: 95% CI of a gap between two bots about +-30 Elo
    # until = "settled"     # or play until every adjacent pair is decided (docs/tournaments.md)
    # alpha = 0.05          #   with until: the chance of any wrong claim (1e-9 to 0.49)
    # indifference_elo = 10 #   with until: pairs closer than this may be called tied (1-500)
    # max_hands = 20000     #   with until: the budget (default 20000; 24-2000000)
    concurrency = 8         # tables played at once
    output = "out/example"  # relative to the current directory

    [rules]                 # engine RuleSet options; scoring is always single_hand
    uno_window_ms = 500

    [time_control]
    decision_ms = 1000
    time_bank_ms = 0
    reconnect_grace_ms = 5000

    [faults]
    strikes = 3             # timeouts before the fallback bot takes the seat over
    fallback = "heuristic"  # the built-in bot that takes over (heuristic or random)
    forfeit = "last"        # a hand a stand-in played for a bot: "last", "count" or "exclude"
    max_restarts = 5        # restarts of a crashed bot process before giving up on it
    startup_timeout_s = 30  # wait for a bot to connect, or for a lost server to answer

    [sandbox]               # how launched bots are confined (SandboxSpec; docs/operations.md)
    memory_mb = 1024        # also: enabled, required, cpu_weight, cpu_quota, pids,
                            # file_size_mb, scratch_mb, log_mb, paths

    [[bots]]
    name = "alice"
    command = ["{python}", "-m", "uno_bot.examples.heuristic_bot",
               "--addr", "{addr}", "--name", "{name}"]
    cwd = "."               # relative to the config file
    env = { LOG = "1" }
    optional = false        # true: skip with a warning when the program is missing
    sandbox = { memory_mb = 2048 }  # this bot's own limits over [sandbox]

    [[bots]]
    name = "bob"            # an external bot: connects by itself with this token
    token = "bob-secret-token"

In a bot's command, ``cwd`` and ``env`` values, ``{python}`` is the runner's Python, ``{addr}``
the server's host:port, ``{token}`` and ``{name}`` the bot's token and name, ``{config_dir}``
the folder of the config file. The bot also gets ``UNO_ARENA_ADDR``, ``UNO_ARENA_TOKEN`` and
``UNO_ARENA_BOT_NAME`` in its environment, which every SDK reads: name ``{token}`` only for a bot
that cannot read it there, since a command line is readable by every user of the machine (the
run warns).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uno_server.engine.errors import InvalidRulesError
from uno_server.engine.rules import RuleSet
from uno_server.service.auth import token_problem

from . import placeholders, schedule
from .config_values import ConfigError as ConfigError  # noqa: PLC0414 (every caller's error)
from .config_values import (
    _bool,
    _cut,
    _float,
    _int,
    _key,
    _secret_seed,
    _shown,
    _str,
    _table,
)
from .fileread import TextFileError, loads_toml, read_text_file
from .schedule import HandSpec

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}\Z")
INTERPRETER_RE = re.compile(
    r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|java|ruby|perl|php|bash|sh|lua|Rscript)\Z"
)
"""Programs that run a script or a jar named in their arguments (which must exist too)."""
FALLBACKS = ("heuristic", "random")
FORFEIT_DESCRIPTIONS = {
    "last": "a hand in which a stand-in played a bot's seat counts as that bot finishing last; "
    "the other bots keep their real order",
    "count": "a stand-in's result counts as the bot's own",
    "exclude": "a seat a stand-in played is left out of the ratings; the other bots keep their "
    "real order",
}
"""The forfeit policies (``faults.forfeit``). A stand-in plays a seat after a takeover (strikes,
a disconnect or a crash past the reconnect grace) or for a bot the runner gave up on."""


DEFAULT_ALPHA = 0.05
DEFAULT_INDIFFERENCE_ELO = 10.0
DEFAULT_MAX_HANDS = 20_000
"""The budget of ``until = "settled"`` when ``max_hands`` is not given (the ladder of the
example field settles within it; docs/tournaments.md)."""
ALPHA_RANGE = (1e-9, 0.49)
"""``alpha`` lies between these, both allowed: one range for a config file and for a stored
configuration (a run with alpha = 1e-13 was played, then refused by report, verify and resume
as edited; 5e-324 failed inside the test's arithmetic)."""
ALPHA_TEXT = "must be at least 1e-9 and at most 0.49"
INDIFFERENCE_RANGE = (1.0, 500.0)
MAX_HANDS_RANGE = (24, schedule.MAX_PLAN_HANDS)
UNTIL_VALUES = ("settled",)


@dataclass(frozen=True)
class SandboxSpec:
    """How a launched bot is confined (``[sandbox]``; each ``[[bots]]`` entry may override any
    key but ``required`` in its own ``sandbox = { ... }`` table). See
    :mod:`uno_tournament.sandbox` and docs/operations.md, "Running strangers' bots"."""

    enabled: bool = True
    """false: run the bot as an ordinary process of the organiser (only its log is capped)."""
    required: bool = False
    """true: a protection this machine cannot give is an error instead of a warning."""
    memory_mb: int = 1024
    """Memory the bot's processes may use, swap included (cgroup; RSS watchdog without one)."""
    cpu_weight: int = 100
    """CPU share against the other bots and the harness when the CPU is busy (100 = one
    ordinary process)."""
    cpu_quota: float = 0.0
    """At most this many cores (0: no quota, only the weight)."""
    pids: int = 256
    """Processes and threads the bot may have at once (a fork bomb stops here)."""
    file_size_mb: int = 256
    """Largest file the bot may write (RLIMIT_FSIZE)."""
    scratch_mb: int = 256
    """Size of the bot's private writable /tmp (its HOME too)."""
    build_disk_mb: int = 1024
    """Most a bot's build may add to the bot's folder, in MiB (its one writable place on the
    machine's disk); a build that writes more is stopped."""
    build_files: int = 100_000
    """Most files, folders and links a bot's build may add to its folder: a build that makes
    more is stopped (``build_disk_mb`` counts blocks, and a million empty files take few of
    them but as many of the disk's inodes)."""
    log_mb: int = 10
    """Size at which the bot's log is rotated (the previous part is kept as ``<bot>.log.1``)."""
    paths: tuple[str, ...] = ()
    """More folders the bot may read (absolute), for a runtime outside /usr, /usr/local, /opt."""


SANDBOX_LIMITS: dict[str, tuple[float, float]] = {
    "memory_mb": (32, 1_048_576),
    "cpu_weight": (1, 10_000),
    "cpu_quota": (0, 1024),
    "pids": (8, 65_536),
    "file_size_mb": (1, 1_048_576),
    "scratch_mb": (1, 1_048_576),
    "build_disk_mb": (1, 1_048_576),
    "build_files": (1, 10_000_000),
    "log_mb": (1, 100_000),
}
"""Allowed range of every numeric ``[sandbox]`` key."""


def _sandbox(where: str, raw: Any, base: SandboxSpec, root: Path, *, top: bool) -> SandboxSpec:
    """``[sandbox]`` (``top``) or a bot's ``sandbox`` table, over ``base``."""
    known = {f.name for f in dataclasses.fields(SandboxSpec)}
    if not top:
        known.discard("required")
    d = _table(where, raw, known)
    out: dict[str, Any] = {}
    for key, value in d.items():
        k = f"{where}.{key}"
        if key in ("enabled", "required"):
            out[key] = _bool(k, value)
        elif key == "cpu_quota":
            lo, hi = SANDBOX_LIMITS[key]
            out[key] = _float(k, value, lo, hi)
        elif key == "paths":
            if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
                raise ConfigError(f"{k}: must be a list of folder names")
            paths = []
            for x in value:
                x = x.replace("{config_dir}", str(root))
                if not Path(x).is_absolute():
                    x = str(root / x)
                paths.append(str(Path(x).resolve()))
            out[key] = tuple(paths)
        else:
            lo, hi = SANDBOX_LIMITS[key]
            out[key] = _int(k, value, int(lo), int(hi))
    return dataclasses.replace(base, **out)


@dataclass(frozen=True)
class BotSpec:
    name: str
    command: tuple[str, ...] = ()
    """Empty for an external bot."""
    cwd: str = ""
    """Absolute working directory of a launched bot."""
    env: dict[str, str] = field(default_factory=dict)
    token: str = ""
    """Fixed token (external bots, or launched bots on a server that knows their token)."""
    optional: bool = False
    sandbox: SandboxSpec = SandboxSpec()
    """The ``[sandbox]`` defaults with this bot's own overrides."""
    build: tuple[str, ...] = ()
    """A command run once in the bot's folder before the run starts (empty: none), confined as
    the bot is, but with its folder writable (:mod:`uno_tournament.build`)."""
    build_timeout_s: float = 600.0
    """The build's time limit, in seconds (1-7200)."""
    build_network: bool = False
    """Let the build reach the network (to download dependencies); the bot itself never can."""

    @property
    def external(self) -> bool:
        return not self.command

    def expand(self, value: str, *, addr: str, token: str) -> str:
        return (
            value.replace("{python}", sys.executable)
            .replace("{addr}", addr)
            .replace("{token}", token)
            .replace("{name}", self.name)
        )

    def missing_program(self) -> str | None:
        """The program (or a file named in the command) if it cannot be found, else None."""
        if not self.command:
            return None
        prog = self.command[0].replace("{python}", sys.executable)
        if "/" in prog:
            path = Path(prog) if Path(prog).is_absolute() else Path(self.cwd) / prog
            if not path.is_file():
                return str(path)
        elif not shutil.which(prog):
            return prog
        script = self.script()
        if script is not None:
            path = Path(script) if Path(script).is_absolute() else Path(self.cwd) / script
            if not path.is_file():
                return str(path)
        return None

    def script(self) -> str | None:
        """The file an interpreter in ``command[0]`` runs (``node dist/bot.js``, ``java -jar
        bot.jar``, ``python bot.py``), which is the program too, or None. Any other argument
        (``--trace /abs/new.jsonl``) is the bot's own business: a file it names may not exist
        yet."""
        prog = Path(self.command[0].replace("{python}", sys.executable)).name
        if not INTERPRETER_RE.match(prog):
            return None
        args = list(self.command[1:])
        for i, arg in enumerate(args):
            if prog.startswith("java") and arg == "-jar":
                return args[i + 1] if i + 1 < len(args) else None
            if arg in ("-m", "-c", "-e", "--eval", "-cp", "-classpath", "--class-path"):
                return None  # a module, inline code or a class path: no file to check
            if arg.startswith("-"):
                continue
            ok = "/" in arg and "{" not in arg and ":" not in arg
            return arg if ok else None
        return None


@dataclass(frozen=True)
class TimeControlSpec:
    decision_ms: int = 1000
    time_bank_ms: int = 0
    reconnect_grace_ms: int = 5000


@dataclass(frozen=True)
class FaultSpec:
    strikes: int = 3
    fallback: str = "heuristic"
    max_restarts: int = 5
    startup_timeout_s: float = 30.0
    forfeit: str = "last"


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    bots: tuple[BotSpec, ...]
    seed: int = 1
    blocks: int = 1
    concurrency: int = 8
    output: str = "tournament-out"
    rules: dict[str, Any] = field(default_factory=dict)
    """Engine RuleSet options (validated; ``scoring`` forced to single_hand)."""
    time_control: TimeControlSpec = TimeControlSpec()
    faults: FaultSpec = FaultSpec()
    pair_meetings: int = 1
    """For more than 12 bots: how many tables each pair of bots shares (about)."""
    hands: int = 0
    """A hand budget (0: unset): a balanced design of about this many hands, for any N."""
    precision_elo: float = 0.0
    """A precision (0: unset): the half-width, in Elo, of the 95% CI of the gap between two
    bots of similar strength that the design should reach."""
    sandbox: SandboxSpec = SandboxSpec()
    """The ``[sandbox]`` defaults (each bot's own, overrides applied, is ``bots[i].sandbox``)."""
    until: str = ""
    """``"settled"``: play until every adjacent pair of the ranking is decided, or ``max_hands``
    (see :mod:`uno_tournament.settled_run`); ``""``: play the whole design."""
    alpha: float = DEFAULT_ALPHA
    """With ``until``: the chance of any wrong claim, over all pairs and all looks."""
    indifference_elo: float = DEFAULT_INDIFFERENCE_ELO
    """With ``until``: pairs closer than this (Elo) may be certified tied."""
    max_hands: int = 0
    """With ``until``: the budget (hands at most); 0 when ``until`` is unset."""
    candidate: str = ""
    """``tournament run --candidate NEW --baseline OLD``: the new version (a bot of the config)."""
    baseline: str = ""
    """The version ``candidate`` is tested against."""

    @property
    def sequential(self) -> bool:
        """The run stops by a sequential decision (``until = "settled"`` or a new-version test)."""
        return self.until == "settled" or bool(self.candidate)

    def rule_set(self) -> RuleSet:
        return RuleSet.from_dict(self.rules)

    def plan(self, tournament_id: str, store: Any = None) -> list[HandSpec]:
        """Every planned hand, in playing order (see :mod:`uno_tournament.schedule`). A
        sequential run (``until``) plans ``max_hands`` and stops where its decision says; with
        ``until = "settled"`` each block's tables are the ones recorded in ``store`` (the later
        blocks' hands have no bots yet: :func:`uno_tournament.settled_run.settled_plan`)."""
        if self.sequential:
            from .settled_run import settled_plan

            return settled_plan(self, tournament_id, store)
        return schedule.plan(
            tournament_id,
            [b.name for b in self.bots],
            blocks=self.blocks,
            seed=self.seed,
            pair_meetings=self.pair_meetings,
            hands=self.hands,
            precision_elo=self.precision_elo,
        )

    def design(self) -> schedule.Design:
        if self.sequential:
            from .settled_run import settled_design

            return settled_design(self)
        return schedule.design(
            [b.name for b in self.bots],
            blocks=self.blocks,
            hands=self.hands,
            precision_elo=self.precision_elo,
            pair_meetings=self.pair_meetings,
            seed=self.seed,
        )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentConfig:
        """Rebuild a config saved with :meth:`to_dict` (already validated)."""
        d = dict(data)
        d["bots"] = tuple(
            BotSpec(
                **{
                    **b,
                    "command": tuple(b["command"]),
                    "build": tuple(b.get("build", ())),
                    "sandbox": _sandbox_from_dict(b.get("sandbox")),
                }
            )
            for b in d["bots"]
        )
        d["sandbox"] = _sandbox_from_dict(d.get("sandbox"))
        d["time_control"] = TimeControlSpec(**d["time_control"])
        d["faults"] = FaultSpec(**d["faults"])
        return cls(**d)


def _sandbox_from_dict(d: dict[str, Any] | None) -> SandboxSpec:
    if not d:  # a configuration stored before the sandbox existed
        return SandboxSpec()
    return SandboxSpec(**{**d, "paths": tuple(d.get("paths", ()))})


# ------------------------------------------------------------------------------------ parsing


MAX_BOTS = 128
"""Most [[bots]] of one tournament: 128 plan 35,424 hands a block in 2 s (256: 138,936 in 26 s)."""
MAX_CONFIG_BYTES = 1024 * 1024  # a tournament config file is at most 1 MiB (as the server's)


def _bot(i: int, raw: Any, base: Path, sandbox: SandboxSpec = SandboxSpec()) -> BotSpec:
    where = f"bots[{i}]"
    d = _table(
        where,
        raw,
        {
            "name",
            "command",
            "cwd",
            "env",
            "token",
            "optional",
            "sandbox",
            "build",
            "build_timeout_s",
            "build_network",
        },
    )
    if "name" not in d:
        raise ConfigError(f"{where}.name: missing")
    name = _str(f"{where}.name", d["name"])
    if not NAME_RE.match(name):
        raise ConfigError(
            f"{where}.name: {_shown(name)} must be 1-40 letters, digits, '.', '-' or '_', "
            "starting with a letter or digit"
        )
    command: tuple[str, ...] = ()
    if "command" in d:
        c = d["command"]
        if isinstance(c, list) and not c:
            raise ConfigError(f"{where}.command: empty; give the program and its arguments")
        if not isinstance(c, list) or not all(isinstance(x, str) and x for x in c):
            raise ConfigError(f"{where}.command: must be a list of strings")
        command = tuple(c)
    token = _str(f"{where}.token", d.get("token", ""))
    problem = token_problem(token) if token else None  # the server's rule (docs/service.md)
    if problem is not None:
        raise ConfigError(f"{where}.token: {problem}")
    if not command and not token:
        raise ConfigError(f"{where}: give a command (a bot the runner starts) or a token")
    cwd_raw = _str(f"{where}.cwd", d.get("cwd", "."))
    if "cwd" in d and not command:
        raise ConfigError(f"{where}.cwd: only for a bot with a command")
    cwd_raw = cwd_raw.replace("{config_dir}", str(base))
    cwd = Path(cwd_raw) if Path(cwd_raw).is_absolute() else base / cwd_raw
    env_raw = d.get("env", {})
    if not isinstance(env_raw, dict):
        raise ConfigError(f'{where}.env: must be a table of NAME = "value"')
    env: dict[str, str] = {}
    for k, v in env_raw.items():
        env[k] = _str(f"{where}.env.{_key(k)}", v).replace("{config_dir}", str(base))
    command = tuple(x.replace("{config_dir}", str(base)) for x in command)
    texts = [("command", "".join(command)), ("cwd", cwd_raw)]
    for part, text in texts + [(f"env.{_key(k)}", k + v) for k, v in env.items()]:
        if "\0" in text:
            raise ConfigError(
                f"{where}.{part}: a NUL character; no program, path or variable holds one"
            )
    optional = _bool(f"{where}.optional", d.get("optional", False))
    if "sandbox" in d and not command:
        raise ConfigError(f"{where}.sandbox: only for a bot with a command")
    own = _sandbox(f"{where}.sandbox", d.get("sandbox", {}), sandbox, base, top=False)
    build, build_timeout, build_network = _build(where, d, base, bool(command))
    spec = BotSpec(
        name,
        command,
        str(cwd.resolve()),
        env,
        token,
        optional,
        own,
        build,
        build_timeout,
        build_network,
    )
    if command and not optional and not Path(spec.cwd).is_dir():
        raise ConfigError(f"{where}.cwd: {spec.cwd} is not a folder")
    return spec


BUILD_TIMEOUT_LIMITS = (1.0, 7200.0)
"""Allowed range of ``bots[].build_timeout_s``, in seconds."""


def _build(
    where: str, d: dict[str, Any], base: Path, launched: bool
) -> tuple[tuple[str, ...], float, bool]:
    """A bot's ``build``, ``build_timeout_s`` and ``build_network``."""
    for key in ("build", "build_timeout_s", "build_network"):
        if key in d and not launched:
            raise ConfigError(f"{where}.{key}: only for a bot with a command")
    build: tuple[str, ...] = ()
    if "build" in d:
        b = d["build"]
        if not isinstance(b, list) or not b or not all(isinstance(x, str) and x for x in b):
            raise ConfigError(f"{where}.build: must be a list of strings, like command")
        for x in b:
            for unknown in ("{addr}", "{token}"):
                if unknown in x:
                    raise ConfigError(
                        f"{where}.build: {unknown} is not known at build time (only {{python}}, "
                        "{name} and {config_dir})"
                    )
        build = tuple(x.replace("{config_dir}", str(base)) for x in b)
    lo, hi = BUILD_TIMEOUT_LIMITS
    timeout = d.get("build_timeout_s", 600.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not lo <= timeout <= hi:
        raise ConfigError(
            f"{where}.build_timeout_s: must be a number of seconds from {lo:g} to {hi:g}, "
            f"got {_shown(str(timeout))}"
        )
    network = _bool(f"{where}.build_network", d.get("build_network", False))
    return build, float(timeout), network


def parse(data: dict[str, Any], base: Path, *, warn: Any = None) -> TournamentConfig:
    """Validate a parsed TOML document. ``base`` resolves relative paths (the config's folder).
    Optional bots whose program is missing are dropped, with ``warn(message)`` called."""
    _table("config", data, {"tournament", "rules", "time_control", "faults", "sandbox", "bots"})
    sandbox = _sandbox("sandbox", data.get("sandbox", {}), SandboxSpec(), base, top=True)
    t = _table(
        "tournament",
        data.get("tournament", {}),
        {
            "name",
            "seed",
            "blocks",
            "concurrency",
            "output",
            "pair_meetings",
            "hands",
            "precision_elo",
            "until",
            "alpha",
            "indifference_elo",
            "max_hands",
        },
    )
    name = _str("tournament.name", t.get("name", "tournament"))
    if not NAME_RE.match(name) or len(name) > 32:
        raise ConfigError(
            f"tournament.name: {_shown(name)} must be 1-32 letters, digits, '.', '-' or '_'"
        )
    # none given: a secret one (a known default let a bot recompute every seat's cards)
    seed = _int("tournament.seed", t["seed"], 0, 2**63 - 1) if "seed" in t else _secret_seed()
    blocks = _int("tournament.blocks", t.get("blocks", 1), 1, 10_000)
    concurrency = _int("tournament.concurrency", t.get("concurrency", 8), 1, 1024)
    output = _str("tournament.output", t.get("output", f"tournament-{name}"))
    if not output.strip():
        raise ConfigError(
            "tournament.output: empty; give the run's folder (or leave the key out for "
            f"tournament-{name})"
        )
    if "\0" in output:
        raise ConfigError("tournament.output: a path cannot hold a NUL character")
    pair_meetings = _int("tournament.pair_meetings", t.get("pair_meetings", 1), 1, 100)
    top = schedule.MAX_PLAN_HANDS
    hands = _int("tournament.hands", t.get("hands", 0), 0, top) if "hands" in t else 0
    if "hands" in t and hands < 24:
        raise ConfigError(
            f"tournament.hands: must be at least 24 (one duplicate block), got {hands}"
        )
    precision = 0.0
    if "precision_elo" in t:
        precision = _float("tournament.precision_elo", t["precision_elo"], 1.0, 1000.0)
    given = [k for k in ("blocks", "hands", "precision_elo") if k in t]
    if len(given) > 1:
        raise ConfigError(
            f"tournament.{given[1]}: give only one of blocks, hands and precision_elo "
            f"(both {given[0]} and {given[1]} are set)"
        )

    until, alpha, indifference, max_hands = _until(t)

    rules_raw = data.get("rules", {})
    if not isinstance(rules_raw, dict):
        raise ConfigError(f"rules: must be a table, got {_shown(rules_raw)}")
    rules = dict(rules_raw)
    if rules.get("scoring", "single_hand") != "single_hand":
        raise ConfigError("rules.scoring: a tournament hand is always single_hand; leave it out")
    rules["scoring"] = "single_hand"
    if rules.get("seats", 4) != 4:
        raise ConfigError("rules.seats: tournament tables have 4 seats; leave it out")
    rules["seats"] = 4
    known_rules = {f.name for f in dataclasses.fields(RuleSet)}
    for key in rules:
        if key not in known_rules:
            raise ConfigError(
                f"rules.{_key(key)}: unknown option (known: {', '.join(sorted(known_rules))})"
            )
    try:
        RuleSet.from_dict(rules)
    except InvalidRulesError as exc:
        raise ConfigError(str(exc)) from exc
    except TypeError as exc:  # pragma: no cover - from_dict checks the names first
        raise ConfigError(f"rules: {exc}") from exc

    tc = _table(
        "time_control",
        data.get("time_control", {}),
        {"decision_ms", "time_bank_ms", "reconnect_grace_ms"},
    )
    time_control = TimeControlSpec(
        decision_ms=_int("time_control.decision_ms", tc.get("decision_ms", 1000), 50, 600_000),
        time_bank_ms=_int("time_control.time_bank_ms", tc.get("time_bank_ms", 0), 0, 3_600_000),
        reconnect_grace_ms=_int(
            "time_control.reconnect_grace_ms", tc.get("reconnect_grace_ms", 5000), 0, 600_000
        ),
    )
    f = _table(
        "faults",
        data.get("faults", {}),
        {"strikes", "fallback", "max_restarts", "startup_timeout_s", "forfeit"},
    )
    fallback = _str("faults.fallback", f.get("fallback", "heuristic"))
    if fallback not in FALLBACKS:
        raise ConfigError(
            f"faults.fallback: must be one of {', '.join(FALLBACKS)}, got {_shown(fallback)}"
        )
    forfeit = _str("faults.forfeit", f.get("forfeit", "last"))
    if forfeit not in FORFEIT_DESCRIPTIONS:
        raise ConfigError(
            f"faults.forfeit: must be one of {', '.join(FORFEIT_DESCRIPTIONS)}, "
            f"got {_shown(forfeit)}"
        )
    faults = FaultSpec(
        strikes=_int("faults.strikes", f.get("strikes", 3), 1, 1000),
        fallback=fallback,
        max_restarts=_int("faults.max_restarts", f.get("max_restarts", 5), 0, 1000),
        startup_timeout_s=_float(
            "faults.startup_timeout_s", f.get("startup_timeout_s", 30.0), 1.0, 3600.0
        ),
        forfeit=forfeit,
    )

    bots_raw = data.get("bots")
    if not isinstance(bots_raw, list) or not bots_raw:
        raise ConfigError("bots: give at least four [[bots]] entries")
    if len(bots_raw) > MAX_BOTS:
        raise ConfigError(
            f"bots: {len(bots_raw)} [[bots]] entries; a tournament takes at most {MAX_BOTS} "
            "(its schedule grows as the fourth power of the field: hold a league, or split the "
            "field into groups)"
        )
    bots: list[BotSpec] = []
    seen: set[str] = set()
    token_of: dict[str, int] = {}
    for i, raw in enumerate(bots_raw):
        b = _bot(i, raw, base, sandbox)
        for message in placeholders.warnings(f"bots[{i}]", raw) if warn is not None else ():
            warn(message)
        if b.name in seen:
            raise ConfigError(f"bots[{i}].name: {_shown(b.name)} is used twice")
        like = [n for n in seen if n.casefold() == b.name.casefold()]
        if like:  # two bots a reader (and a case-blind file system's logs) cannot tell apart
            raise ConfigError(
                f"bots[{i}].name: {_shown(b.name)} differs from {_shown(like[0])} only in case; "
                "choose another name"
            )
        seen.add(b.name)
        if b.token and token_of.setdefault(b.token, i) != i:
            raise ConfigError(
                f"bots[{token_of[b.token]}].token and bots[{i}].token: the same token; "
                "the server takes one token per bot"
            )
        missing = b.missing_program()
        if missing is not None:
            if b.optional:
                if warn is not None:
                    warn(f"bots[{i}] ({b.name}): skipped, {missing} is not there")
                continue
            raise ConfigError(f"bots[{i}].command: program {missing} not found")
        bots.append(b)
    if len(bots) < 4:
        raise ConfigError(f"bots: a table needs four distinct bots, {len(bots)} available")
    too_big = schedule.plan_size_problem(
        len(bots),
        blocks=blocks,
        hands=hands,
        precision_elo=precision,
        pair_meetings=pair_meetings,
        max_hands=max_hands,
        sequential=bool(until),
    )
    if too_big is not None:  # the whole plan is made in memory before the first hand
        raise ConfigError(too_big)
    return TournamentConfig(
        name=name,
        bots=tuple(bots),
        seed=seed,
        blocks=blocks,
        concurrency=concurrency,
        output=output,
        rules=RuleSet.from_dict(rules).to_dict(),
        time_control=time_control,
        faults=faults,
        pair_meetings=pair_meetings,
        hands=hands,
        precision_elo=precision,
        sandbox=sandbox,
        until=until,
        alpha=alpha,
        indifference_elo=indifference,
        max_hands=max_hands,
    )


def _until(t: dict[str, Any]) -> tuple[str, float, float, int]:
    """``until``, ``alpha``, ``indifference_elo`` and ``max_hands`` of ``[tournament]``."""
    seq_keys = [k for k in ("alpha", "indifference_elo", "max_hands") if k in t]
    if "until" not in t:
        if seq_keys:
            raise ConfigError(
                f'tournament.{seq_keys[0]}: only with until = "settled" (a run that stops '
                "when the ranking is settled)"
            )
        return "", DEFAULT_ALPHA, DEFAULT_INDIFFERENCE_ELO, 0
    until = _str("tournament.until", t["until"])
    if until not in UNTIL_VALUES:
        raise ConfigError(
            f"tournament.until: must be {' or '.join(map(repr, UNTIL_VALUES))}, got {_shown(until)}"
        )
    for other in ("blocks", "hands", "precision_elo"):
        if other in t:
            raise ConfigError(
                f'tournament.{other}: not with until = "settled" (the run sizes itself; '
                "give its budget as max_hands)"
            )
    alpha = t.get("alpha", DEFAULT_ALPHA)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float):
        raise ConfigError(f"tournament.alpha: must be a number, got {_shown(alpha)}")
    if not ALPHA_RANGE[0] <= alpha <= ALPHA_RANGE[1]:  # nan too: one wording for every miss
        raise ConfigError(f"tournament.alpha: {ALPHA_TEXT}, got {alpha:g}")
    indifference = _float(
        "tournament.indifference_elo",
        t.get("indifference_elo", DEFAULT_INDIFFERENCE_ELO),
        *INDIFFERENCE_RANGE,
    )
    max_hands = _int(
        "tournament.max_hands", t.get("max_hands", DEFAULT_MAX_HANDS), *MAX_HANDS_RANGE
    )
    return until, alpha, indifference, max_hands


def read_text(path: str | Path) -> str:
    """A configuration file's text, read once (what :func:`load` parses is what a run keeps):
    at most MAX_CONFIG_BYTES of UTF-8 in a regular file, else a ConfigError naming it."""
    try:
        return read_text_file(Path(path), MAX_CONFIG_BYTES, "configuration file")
    except TextFileError as exc:
        raise ConfigError(str(exc)) from exc


def load(path: str | Path, *, warn: Any = None, text: str | None = None) -> TournamentConfig:
    """The configuration in ``path`` (``text``: its text, already read by :func:`read_text`)."""
    p = Path(path)
    if text is None:
        text = read_text(p)
    try:
        data = loads_toml(text)  # a BOM (Notepad) is no statement; too deep is bad TOML
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {_cut(' '.join(str(exc).split()))}") from exc
    try:
        return parse(data, p.resolve().parent, warn=warn)
    except ConfigError as exc:  # also what parse() passes on from elsewhere: never 200 KB
        raise ConfigError(f"{p}: {_cut(' '.join(str(exc).split()), 600)}") from exc
