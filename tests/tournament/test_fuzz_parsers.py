"""Issue 9 (hardening): fuzz the tournament configuration parser and the replay-file parser.

Every malformed input must give ONE clear error that names the field (``ConfigError`` /
``ReplayError``, one line), never another exception and never a traceback. Inputs come three
ways: arbitrary bytes as a file, arbitrary TOML/JSON-shaped trees, and valid documents with one
field replaced by an arbitrary value (the shape a user's typo takes).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uno_server.cli import main as cli_main
from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_server.engine.match import Match
from uno_server.engine.simulate import play_hand
from uno_tournament.config import ConfigError, load, parse
from uno_tournament.replay import ReplayError, check, validate
from uno_tournament.replay import load as load_replay

FIELD = re.compile(r"^(config|tournament|rules|time_control|faults|bots)(\.|\[|:)")
REPLAY_FIELD = re.compile(r"'[a-z_]+(\.[a-z_]+|\[\d+\])*'|expected a JSON object")

SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

toml_scalars = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.datetimes(min_value=dt.datetime(1900, 1, 1))
    | st.dates()
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

VALID = """
[tournament]
name = "fz"
seed = 3
blocks = 1
concurrency = 4
[rules]
uno_window_ms = 200
[time_control]
decision_ms = 500
[faults]
strikes = 3
fallback = "heuristic"
forfeit = "last"
max_restarts = 2
startup_timeout_s = 10
""" + "".join(
    f'[[bots]]\nname = "b{i}"\ncommand = ["{{python}}", "-c", "pass"]\n' for i in range(4)
)
PATHS = [
    ("tournament", k)
    for k in ("name", "seed", "blocks", "concurrency", "output", "pair_meetings", "hands")
] + [
    ("tournament", "precision_elo"),
    ("rules", "uno_window_ms"),
    ("rules", "stacking"),
    ("rules", "scoring"),
    ("time_control", "decision_ms"),
    ("time_control", "time_bank_ms"),
    ("faults", "strikes"),
    ("faults", "fallback"),
    ("faults", "forfeit"),
    ("faults", "startup_timeout_s"),
    ("bots", 0),
    ("bots", 2),
]
BOT_KEYS = ("name", "command", "cwd", "env", "token", "optional")


def _config_error(data: Any, base: Path) -> str | None:
    try:
        parse(data, base)
    except ConfigError as exc:
        msg = str(exc)
        assert "\n" not in msg, msg
        assert FIELD.match(msg), msg
        return msg
    return None


@SETTINGS
@given(data=toml_values)
def test_any_document_is_a_config_or_one_error_naming_a_field(data: Any, tmp_path: Path) -> None:
    _config_error(data if isinstance(data, dict) else {"tournament": data}, tmp_path)


@SETTINGS
@given(where=st.sampled_from(PATHS), value=toml_values)
def test_one_bad_value_names_its_field(where: tuple[str, Any], value: Any, tmp_path: Path) -> None:
    data = tomllib.loads(VALID)
    table, key = where
    data[table][key] = value
    msg = _config_error(data, tmp_path)
    if msg is not None and table != "bots":
        assert msg.startswith(f"{table}.") or msg.startswith(f"{table}:"), msg


@SETTINGS
@given(key=st.sampled_from(BOT_KEYS) | st.text(max_size=8), value=toml_values)
def test_one_bad_bot_field_names_the_bot(key: str, value: Any, tmp_path: Path) -> None:
    data = tomllib.loads(VALID)
    data["bots"][1][key] = value
    msg = _config_error(data, tmp_path)
    if msg is not None:
        assert msg.startswith("bots[1]") or msg.startswith("bots:"), msg


@SETTINGS
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_file_loads_or_gives_one_error(raw: bytes, tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_bytes(raw)
    try:
        load(path)
    except ConfigError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path)), str(exc)


# ------------------------------------------------------------------------------------ replays


def _real_replay() -> dict[str, Any]:
    rules = RuleSet(scoring="single_hand")
    match_seed = 99
    seed = Match(rules, match_seed, dealer=0).hand.seed
    hand = play_hand(Hand.deal(rules, seed, 0), [HeuristicBot(i) for i in range(4)])
    return {
        "format": "uno-arena-replay/2",
        "tournament": "fz-1",
        "hand_id": "fz-1/t0/b0/d0/r0",
        "rules": rules.to_dict(),
        "seed": seed,
        "match_seed": match_seed,
        "dealer": 0,
        "bots": ["a", "b", "c", "d"],
        "actions": [list(a) for a in hand.actions],
        "result": {"winner": hand.winner, "points_held": [hand.points_held(s) for s in range(4)]},
    }


REPLAY = _real_replay()
REPLAY_KEYS = [
    ("rules",),
    ("seed",),
    ("dealer",),
    ("actions",),
    ("result",),
    ("result", "winner"),
    ("result", "points_held"),
    ("bots",),
    ("hand_id",),
    ("match_seed",),
    ("schedule",),
    ("actions", 0),
    ("actions", 3),
    ("rules", "seats"),
    ("rules", "hand_size"),
]


def _replay_outcome(data: Any) -> None:
    try:
        validate(data)
    except ReplayError as exc:
        assert "\n" not in str(exc) and REPLAY_FIELD.search(str(exc)), str(exc)
        return
    verdict = check(data)  # never raises: a verdict
    assert "\n" not in verdict.message


def test_the_real_replay_is_confirmed() -> None:
    assert check(copy.deepcopy(REPLAY)).ok


@SETTINGS
@given(data=json_values)
def test_any_json_is_a_replay_verdict_or_one_error_naming_a_field(data: Any) -> None:
    _replay_outcome(data)


@SETTINGS
@given(where=st.sampled_from(REPLAY_KEYS), value=json_values)
def test_one_bad_replay_field(where: tuple[Any, ...], value: Any) -> None:
    data = copy.deepcopy(REPLAY)
    node = data
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = value
    _replay_outcome(data)


@SETTINGS
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_replay_file_loads_or_gives_one_error(raw: bytes, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(raw)
    try:
        _replay_outcome(load_replay(path))
    except ReplayError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path)), str(exc)


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe garbage", b"[1, 2]", b'{"rules": {}, "seed": "x"}', json.dumps({"a": 1}).encode()],
)
def test_the_replay_command_prints_one_line(
    content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(content)
    assert cli_main(["replay", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("uno-arena: ")
