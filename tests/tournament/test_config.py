"""Tournament configuration: validation messages name the bad field."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from uno_tournament.cli import example_config
from uno_tournament.config import ConfigError, TournamentConfig, load, parse

BOT = '[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "-c", "pass"]\n'


def _cfg(extra: str = "", bots: int = 4) -> str:
    return extra + "\n" + "".join(BOT.format(n=f"b{i}") for i in range(bots))


def _err(text: str, tmp_path: Path) -> str:
    with pytest.raises(ConfigError) as exc:
        parse(tomllib.loads(text), tmp_path)
    return str(exc.value)


def test_a_valid_config_parses_with_defaults(tmp_path: Path) -> None:
    cfg = parse(tomllib.loads(_cfg()), tmp_path)
    assert [b.name for b in cfg.bots] == ["b0", "b1", "b2", "b3"]
    assert cfg.rules["scoring"] == "single_hand" and cfg.rules["seats"] == 4
    assert cfg.faults.strikes == 3 and cfg.faults.fallback == "heuristic"
    assert TournamentConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            _cfg() + '[[bots]]\nname = "x"\ncommand = "python bot.py"\n',
            "bots[4].command: must be a list of strings",
        ),
        (
            _cfg() + '[[bots]]\nname = "x"\ncommand = [1, 2]\n',
            "bots[4].command: must be a list of strings",
        ),
        (
            _cfg() + '[[bots]]\nname = "b0"\ntoken = "abcdefgh12"\n',
            "bots[4].name: 'b0' is used twice",
        ),
        (_cfg() + '[[bots]]\nname = "x"\n', "bots[4]: give a command"),
        # an examination's rough edges: an empty command was "must be a list of strings", and
        # names alike but for case were accepted
        (
            _cfg() + '[[bots]]\nname = "x"\ncommand = []\n',
            "bots[4].command: empty; give the program and its arguments",
        ),
        (
            _cfg() + '[[bots]]\nname = "B0"\ntoken = "abcdefgh12"\n',
            "bots[4].name: 'B0' differs from 'b0' only in case",
        ),
        (_cfg() + '[[bots]]\nname = "bad name"\ntoken = "abcdefgh12"\n', "bots[4].name:"),
        (
            _cfg() + '[[bots]]\nname = "x"\ntoken = "abcdefgh12"\ncolour = 1\n',
            "bots[4].colour: unknown setting",
        ),
        (_cfg() + '[[bots]]\nname = "x"\ntoken = "short"\n', "bots[4].token: a token is 8-128"),
        (
            _cfg() + '[[bots]]\nname = "x"\ncommand = ["/no/such/bot"]\n',
            "bots[4].command: program /no/such/bot not found",
        ),
        (_cfg("[tournament]\nblocks = 0\n"), "tournament.blocks: must be 1-10000, got 0"),
        (
            _cfg('[tournament]\nconcurrency = "many"\n'),
            "tournament.concurrency: must be an integer",
        ),
        (_cfg("[tournament]\nrounds = 3\n"), "tournament.rounds: unknown setting"),
        (_cfg('[rules]\nstacking = "yes"\n'), "rules.stacking: must be true or false"),
        (_cfg('[rules]\nscoring = "standard"\n'), "rules.scoring:"),
        (_cfg("[rules]\nseats = 3\n"), "rules.seats:"),
        (_cfg("[rules]\nfoo = 1\n"), "rules.foo: unknown option"),
        (_cfg("[time_control]\ndecision_ms = 10\n"), "time_control.decision_ms: must be 50-600000"),
        (
            _cfg('[faults]\nfallback = "human"\n'),
            "faults.fallback: must be one of heuristic, random",
        ),
        (_cfg("[faults]\nstrikes = 0\n"), "faults.strikes: must be 1-1000"),
        (_cfg(bots=3), "bots: a table needs four distinct bots, 3 available"),
        ("[tournament]\n", "bots: give at least four"),
        (_cfg("[extra]\n"), "config.extra: unknown setting"),
    ],
)
def test_errors_name_the_field(text: str, message: str, tmp_path: Path) -> None:
    assert message in _err(text, tmp_path)


def test_optional_bot_with_a_missing_program_is_skipped_with_a_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    text = _cfg() + '[[bots]]\nname = "go"\noptional = true\ncommand = ["bin/nope"]\n'
    cfg = parse(tomllib.loads(text), tmp_path, warn=warnings.append)
    assert "go" not in [b.name for b in cfg.bots]
    assert warnings and "bots[4] (go): skipped" in warnings[0]


def test_load_reports_the_file_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[tournament\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(bad)


def test_bundled_example_config_loads() -> None:
    cfg = load(example_config(), warn=lambda m: None)
    names = [b.name for b in cfg.bots]
    assert {"py-heuristic", "py-random-card", "py-blunders-25", "py-blunders-50"} <= set(names)
    assert len(names) >= 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_cfg("[tournament]\nblocks = 2\nhands = 5000\n"), "tournament.hands: give only one of"),
        (
            _cfg("[tournament]\nhands = 5000\nprecision_elo = 30\n"),
            "tournament.precision_elo: give only one of",
        ),
        (_cfg("[tournament]\nhands = 10\n"), "tournament.hands: must be at least 24"),
        (_cfg('[tournament]\nprecision_elo = "fine"\n'), "tournament.precision_elo: must be"),
        (_cfg("[tournament]\nprecision_elo = 0.5\n"), "tournament.precision_elo: must be 1-1000"),
        (_cfg('[faults]\nforfeit = "ignore"\n'), "faults.forfeit: must be one of last, count"),
    ],
)
def test_errors_of_the_new_settings_name_the_field(text: str, message: str, tmp_path: Path) -> None:
    assert message in _err(text, tmp_path)


def test_sizes_and_the_forfeit_policy_parse(tmp_path: Path) -> None:
    cfg = parse(tomllib.loads(_cfg("[tournament]\nhands = 480\n")), tmp_path)
    assert cfg.hands == 480 and cfg.faults.forfeit == "last"
    assert len(cfg.plan("t")) == 480
    cfg = parse(tomllib.loads(_cfg('[faults]\nforfeit = "exclude"\n')), tmp_path)
    assert cfg.faults.forfeit == "exclude"
    assert TournamentConfig.from_dict(cfg.to_dict()) == cfg
    # a configuration stored by the first release (no new keys) still loads
    old = cfg.to_dict()
    del old["hands"], old["precision_elo"], old["faults"]["forfeit"]
    assert TournamentConfig.from_dict(old).faults.forfeit == "last"


@pytest.mark.parametrize(
    "args",
    [
        '"--trace", "/abs/not/yet/new.jsonl"',
        '"--out", "logs/later.txt"',
        '"/tmp/created-later/by-the-bot.jsonl"',
    ],
)
def test_a_bot_argument_naming_a_file_not_yet_created_is_not_refused(
    args: str, tmp_path: Path
) -> None:
    """Only the program must exist: an argument may name a file the bot will create."""
    text = _cfg() + f'[[bots]]\nname = "t"\ncommand = ["{{python}}", "-c", "pass", {args}]\n'
    cfg = parse(tomllib.loads(text), tmp_path)
    assert "t" in [b.name for b in cfg.bots]
    prog = tmp_path / "bot"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    text = _cfg() + f'[[bots]]\nname = "u"\ncommand = ["{prog}", {args}]\n'
    assert "u" in [b.name for b in parse(tomllib.loads(text), tmp_path).bots]


@pytest.mark.parametrize(
    ("command", "missing"),
    [
        ('["node", "dist/src/bot.js", "--trace", "/abs/new.jsonl"]', "dist/src/bot.js"),
        ('["java", "-Xmx64m", "-jar", "target/bot.jar", "--log", "/abs/x"]', "target/bot.jar"),
        ('["{python}", "-u", "bots/mine.py", "--trace", "/abs/new.jsonl"]', "bots/mine.py"),
    ],
)
def test_the_script_an_interpreter_runs_must_exist(
    command: str, missing: str, tmp_path: Path
) -> None:
    """For an interpreter, the script or jar it runs is the program: a missing one is refused,
    naming that file (an optional bot is skipped, as the example's Java and TypeScript bots are
    before they are built)."""
    text = _cfg() + f'[[bots]]\nname = "x"\ncommand = {command}\n'
    assert f"bots[4].command: program {tmp_path / missing} not found" in _err(text, tmp_path)


def test_the_example_bots_are_named_for_what_they_do() -> None:
    """The example's Python bots: each name says what the bot does, listed strongest first as
    far as the ladder has an order (measured: py-heuristic +117, py-random-card +25,
    py-blunders-25 +13, py-blunders-50 -155 Elo over 960 hands; the middle two are close and
    swap places in other fields: docs/tournaments.md, "The example field")."""
    from uno_tournament.bots.graded import blunders_name

    cfg = load(example_config(), warn=lambda m: None)
    by_name = {b.name: b.command for b in cfg.bots}
    ladder = ["py-heuristic", "py-random-card", "py-blunders-25", "py-blunders-50"]
    assert [n for n in by_name if n in ladder] == ladder  # listed strongest first
    assert "uno_tournament.bots.engine_heuristic" in by_name["py-heuristic"]
    # a random card when it can play one, and the UNO call kept: the SDK's random example
    assert "uno_bot.examples.random_bot" in by_name["py-random-card"]
    for name in ("py-blunders-25", "py-blunders-50"):
        cmd = list(by_name[name])
        assert "uno_tournament.bots.graded" in cmd
        assert blunders_name(float(cmd[cmd.index("--randomness") + 1])) == name
    assert not [n for n in by_name if "graded" in n or n == "py-random"]  # the old names


def test_the_example_java_bot_runs_the_jar_the_pom_builds() -> None:
    """The example names the Java bot's jar by version; a version bump in the pom without the
    example would make `make tournament` skip the Java bot silently (it is optional)."""
    import re

    root = Path(__file__).resolve().parents[2]
    pom = (root / "clients" / "java" / "pom.xml").read_text()
    version = re.search(r"<artifactId>uno-bot</artifactId>\s*<version>([^<]+)</version>", pom)
    assert version, "clients/java/pom.xml has no uno-bot version"
    cfg = load(example_config(), warn=lambda m: None)
    java = next(b for b in cfg.bots if b.name == "java-heuristic")
    assert f"target/uno-bot-{version.group(1)}-jar-with-dependencies.jar" in list(java.command)
    readme = (root / "README.md").read_text()
    assert f"uno-bot-{version.group(1)}-jar-with-dependencies.jar" in readme


def test_a_misspelt_placeholder_is_named_where_it_is(tmp_path: Path) -> None:
    # an examination: {nmae} reached the bot as it was, unremarked. A warning, not an error:
    # braces are also the bot's own (python -c f-strings, awk), and have no escape
    near = {
        'command = ["{python}", "bot.py", "--name", "{nmae}"]': ("command[3]", "{nmae}", "name"),
        'command = ["sh"]\ncwd = "{config_di}"\noptional = true': (
            "cwd",
            "{config_di}",
            "config_dir",
        ),
        'command = ["sh"]\nenv = { A = "{Token}" }': ("env.A", "{Token}", "token"),
        'command = ["sh"]\nbuild = ["make", "{adr}"]': ("build[1]", "{adr}", "addr"),
    }
    for entry, (field, word, meant) in near.items():
        said: list[str] = []
        cfg = parse(
            tomllib.loads(_cfg() + f'[[bots]]\nname = "x"\n{entry}\n'), tmp_path, warn=said.append
        )
        assert len(cfg.bots) == 5
        assert said == [
            f"bots[4].{field}: {word} is not a placeholder the runner fills in (did you mean "
            f"{{{meant}}}?); the bot gets it as it is"
        ], said
    # the shell's ${VAR}, a program's own braces and the placeholders themselves: no word
    ok = (
        '[[bots]]\nname = "x"\ncommand = ["sh", "-c", "exec ${HOME}/bot {name} {addr}", '
        '"python -c \\"print(f\'{i}{print}\')\\"", "awk \'{print $1}\'"]\n'
    )
    said = []
    cfg = parse(tomllib.loads(_cfg() + ok), tmp_path, warn=said.append)
    assert said == [] and cfg.bots[4].command[2] == "exec ${HOME}/bot {name} {addr}"


def test_the_field_has_a_limit(tmp_path: Path) -> None:
    from uno_tournament.config import MAX_BOTS

    assert len(parse(tomllib.loads(_cfg(bots=MAX_BOTS)), tmp_path).bots) == MAX_BOTS
    msg = _err(_cfg(bots=MAX_BOTS + 1), tmp_path)
    assert msg.startswith(f"bots: {MAX_BOTS + 1} [[bots]] entries") and "at most 128" in msg, msg


def test_an_empty_output_folder_is_refused(tmp_path: Path) -> None:
    # an examination: output = "" wrote the run into the current folder
    for value in ('""', '"  "'):
        msg = _err(_cfg(f"[tournament]\noutput = {value}\n"), tmp_path)
        assert msg.startswith("tournament.output: empty"), msg


def test_a_bot_name_with_a_final_newline_is_refused(tmp_path: Path) -> None:
    text = _cfg().replace('name = "b0"', 'name = "b0\\n"')
    assert "bots[0].name" in _err(text, tmp_path)
    assert "tournament.name" in _err(_cfg('[tournament]\nname = "t\\n"\n'), tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # 12 bots play all 495 four-bot tables a block: 500 blocks are 5,940,000 hands
        (_cfg("[tournament]\nblocks = 500\n", bots=12), "tournament.blocks: plans 5,940,000"),
        (_cfg("[tournament]\nhands = 2000001\n"), "tournament.hands: must be 0-2000000"),
        (_cfg("[tournament]\nprecision_elo = 1\n", bots=12), "tournament.precision_elo: plans"),
        (
            _cfg('[tournament]\nuntil = "settled"\nmax_hands = 2000001\n'),
            "tournament.max_hands: must be 24-2000000",
        ),
    ],
)
def test_a_plan_larger_than_a_run_holds_is_refused_naming_its_field(
    text: str, message: str, tmp_path: Path
) -> None:
    """A run makes its whole plan in memory before the first hand: an examination's
    max_hands = 10,000,000 (then allowed) took 3.5 GB and more than a minute before the first
    line, and ignored Ctrl-C meanwhile."""
    err = _err(text, tmp_path)
    assert message in err, err
    assert "more than the 2,000,000 one run holds in memory" in err or "must be" in err


def test_the_largest_plan_allowed_is_made(tmp_path: Path) -> None:
    from uno_tournament.schedule import MAX_PLAN_HANDS

    # 12 bots, 168 blocks: 1,995,840 hands, just under the limit (169 blocks are over it)
    cfg = parse(tomllib.loads(_cfg("[tournament]\nblocks = 168\n", bots=12)), tmp_path)
    assert cfg.design().hands == 1_995_840 <= MAX_PLAN_HANDS
    assert "tournament.blocks: plans 2,007,720" in _err(
        _cfg("[tournament]\nblocks = 169\n", bots=12), tmp_path
    )
    settled = parse(
        tomllib.loads(_cfg(f'[tournament]\nuntil = "settled"\nmax_hands = {MAX_PLAN_HANDS}\n')),
        tmp_path,
    )
    design = settled.design()  # the first block alone is planned for it
    assert design.blocks * len(design.tables) * 24 >= MAX_PLAN_HANDS
