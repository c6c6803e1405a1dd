"""The tournament config's size limit and cut echoes (issue 21): a 60 MB file of comments is
refused unread, and a 200,000-character key or value is not repeated whole. The command line
prints one line and exits 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from uno_tournament.config import MAX_CONFIG_BYTES, ConfigError, load

BOTS = "".join(f'[[bots]]\nname = "b{i}"\ntoken = "token-of-b{i}"\n' for i in range(4))


def _run(path: Path, tmp_path: Path) -> tuple[int, list[str]]:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "tournament",
            "run",
            str(path),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return res.returncode, res.stderr.strip().splitlines()


def test_a_60_mb_file_of_comments_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    with path.open("w") as f:
        chunk = ("# " + "c" * 998 + "\n") * 1000
        for _ in range(60):
            f.write(chunk)
    code, lines = _run(path, tmp_path)
    assert code == 2 and len(lines) == 1, lines[:5]
    assert str(path) in lines[0] and "larger than 1024 KiB" in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_the_limit_is_on_the_size_only(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    body = "[tournament]\nblocks = 1\n" + BOTS
    path.write_text(body + "#" * (MAX_CONFIG_BYTES - len(body) - 1) + "\n")
    assert path.stat().st_size == MAX_CONFIG_BYTES
    assert len(load(path).bots) == 4
    path.write_text(body + "#" * (MAX_CONFIG_BYTES - len(body)) + "\n")
    with pytest.raises(ConfigError, match="larger than 1024 KiB"):
        load(path)


@pytest.mark.parametrize(
    "doc",
    [
        "[tournament]\n" + "k" * 200_000 + " = 1\n" + BOTS,  # an unknown key
        '[tournament]\nname = "' + "n" * 200_000 + '"\n' + BOTS,  # a bad value
        '[tournament]\nblocks = "' + "v" * 200_000 + '"\n' + BOTS,  # the wrong type
        '[faults]\nfallback = "' + "f" * 200_000 + '"\n' + BOTS,
        "[rules]\n" + "r" * 200_000 + " = 1\n" + BOTS,
        BOTS + '[[bots]]\nname = "' + "b" * 200_000 + '"\ntoken = "token-token"\n',
        "[" + "t" * 200_000 + "]\n" + BOTS,
    ],
)
def test_echoed_input_is_cut_short(tmp_path: Path, doc: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(doc)
    with pytest.raises(ConfigError) as err:
        load(path)
    text = str(err.value)
    assert "\n" not in text and len(text) < len(str(path)) + 620, text[:300]


def test_the_command_line_prints_a_cut_line_for_a_huge_key(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("[tournament]\n" + "k" * 200_000 + " = 1\n" + BOTS)
    code, lines = _run(path, tmp_path)
    assert code == 2 and len(lines) == 1, lines[:3]
    assert "tournament.kkkk" in lines[0] and "…" in lines[0] and len(lines[0]) < 600, lines[0]


def test_tokens_follow_the_servers_rule_and_are_not_shared(tmp_path: Path) -> None:
    """A token the server would refuse is refused here first, naming the entry."""
    path = tmp_path / "t.toml"
    path.write_text(BOTS + '[[bots]]\nname = "x"\ntoken = "has a space"\n')
    with pytest.raises(ConfigError, match=r"bots\[4\]\.token: a token is 8-128 .* a space"):
        load(path)
    path.write_text(BOTS + '[[bots]]\nname = "x"\ntoken = "token-of-b1"\n')
    with pytest.raises(ConfigError, match=r"bots\[1\]\.token and bots\[4\]\.token: the same"):
        load(path)
