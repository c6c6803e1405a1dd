"""A build may add at most ``sandbox.build_files`` files, folders and links to its bot's folder:
``build_disk_mb`` counts blocks, and an examination's build made 600,000 empty files in 11 MiB
(60 folders of 10,000), which fill a disk's inodes and were accepted."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.tournament.test_build import _py, _spec
from tests.tournament.test_sandbox import _need_sandbox
from uno_tournament.build import BuildError, build_bot, folder_usage
from uno_tournament.config import ConfigError, parse

MANY = (
    "import os, time\n"
    "for d in range(60):\n"
    "    os.mkdir(f'd{d}')\n"
    "    for i in range(100):\n"
    "        open(f'd{d}/f{i}', 'wb').close()\n"
    "    time.sleep(0.02)\n"
    "time.sleep(600)\n"
)


def test_a_build_that_makes_too_many_files_is_stopped_and_named(tmp_path: Path) -> None:
    _need_sandbox()
    spec = _spec(tmp_path, _py(MANY), sandbox={"build_files": 500}, build_timeout_s=60)
    with pytest.raises(BuildError) as err:
        asyncio.run(build_bot(spec, tmp_path / "logs"))
    assert "its build made more than 500 files and folders in the bot's folder" in str(err.value)
    assert "(sandbox.build_files)" in str(err.value)
    assert len(str(err.value).splitlines()) == 1
    made = len(list(tmp_path.glob("d*")))
    assert made < 60, made  # stopped while it ran, long before its end
    time.sleep(0.5)
    assert len(list(tmp_path.glob("d*"))) == made  # and nothing of it writes on


def test_a_build_within_its_file_limit_is_not_stopped(tmp_path: Path) -> None:
    _need_sandbox()
    (tmp_path / "given").mkdir()
    for i in range(50):  # what was submitted does not count against the build
        (tmp_path / "given" / f"g{i}").write_text("")
    code = "import os\nfor i in range(40):\n    open(f'f{i}', 'wb').close()\n"
    spec = _spec(tmp_path, _py(code), sandbox={"build_files": 45})
    asyncio.run(build_bot(spec, tmp_path / "logs"))
    assert len(list(tmp_path.glob("f*"))) == 40


def test_the_end_of_a_build_is_counted_too(tmp_path: Path) -> None:
    """A build that makes its files between two looks of the watch is counted when it ends."""
    _need_sandbox()
    from uno_tournament import build as build_mod

    code = "import os\nfor i in range(300):\n    open(f'f{i}', 'wb').close()\n"
    spec = _spec(tmp_path, _py(code), sandbox={"build_files": 100})
    old = build_mod.DISK_POLL_S
    build_mod.DISK_POLL_S = 3600.0  # the watch never looks: only the end's count can
    try:
        with pytest.raises(BuildError) as err:
            asyncio.run(build_bot(spec, tmp_path / "logs"))
    finally:
        build_mod.DISK_POLL_S = old
    assert "made more than 100 files and folders" in str(err.value), err.value


def test_folder_usage_counts_entries_and_stops_past_a_limit(tmp_path: Path) -> None:
    for d in range(3):
        (tmp_path / f"d{d}").mkdir()
        for i in range(10):
            (tmp_path / f"d{d}" / f"f{i}").write_text("")
    assert folder_usage(tmp_path)[1] == 33
    assert 5 < folder_usage(tmp_path, None, 5)[1] < 33


@pytest.mark.parametrize("value", [0, 10_000_001, "many", 1.5])
def test_build_files_is_validated_like_the_other_limits(tmp_path: Path, value: object) -> None:
    with pytest.raises(ConfigError, match=r"sandbox\.build_files"):
        parse({"tournament": {"hands": 24}, "sandbox": {"build_files": value}}, tmp_path)


def test_defang_reaches_below_path_max(tmp_path: Path) -> None:
    """A build's folders nested past PATH_MAX (20 x 250 characters): clearing the unsafe bits
    walked by path and stopped with ENAMETOOLONG, a traceback that left the copy behind."""
    import os
    import stat

    from uno_tournament.league.submit import defang

    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(20):
            os.mkdir("d" * 250, dir_fd=fd)
            fd, old = os.open("d" * 250, os.O_RDONLY, dir_fd=fd), fd
            os.close(old)
        os.close(os.open("bottom", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
        os.chmod("bottom", 0o4777, dir_fd=fd)
        defang(tmp_path)
        assert stat.S_IMODE(os.stat("bottom", dir_fd=fd).st_mode) == 0o755
    finally:
        os.close(fd)
