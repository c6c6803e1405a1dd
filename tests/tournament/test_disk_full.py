"""Issue 20, item 4: a full disk stops a run with one line that names the error, the path and
what to do next, and a non-zero exit; the resume that follows loses nothing and repeats nothing.

Two ways to fill the disk: a store whose write fails with ENOSPC after a few hands (in process,
so the failure comes at a known hand), and a real 64 MiB tmpfs mounted in a private mount
namespace, whose space a filler file takes away mid-run.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from uno_server.cli import main as cli_main
from uno_tournament.store import Store

from .helpers import bot_entry, write_config

PLANNED = 120  # 5 bots, one block


def _ids(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT hand_id FROM hands")]
    finally:
        conn.close()


def test_enospc_from_the_store_stops_the_run_in_one_line_and_resume_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(5)], name="full")
    out = tmp_path / "out"
    db = out / "tournament.sqlite"
    real_add = Store.add_hand
    calls = {"n": 0}

    def add_hand(self: Store, h: object) -> bool:
        calls["n"] += 1
        if calls["n"] > 6:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        return real_add(self, h)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "add_hand", add_hand)
    code = cli_main(["tournament", "run", str(cfg), "--quiet"])
    err = capsys.readouterr().err
    assert code != 0, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    line = lines[0]
    assert "No space left on device" in line
    assert str(db) in line  # the path
    assert f"uno-arena tournament resume {out}" in line  # what to do next
    assert "Free space" in line
    assert "6 of 120 hands stored" in line
    stored = _ids(db)
    assert len(stored) == 6
    log = [json.loads(x) for x in (out / "logs" / "tournament.log").read_text().splitlines()]
    failed = [e for e in log if e["event"] == "store write failed"]
    assert failed and failed[0]["level"] == "error" and failed[0]["path"] == str(db)
    assert failed[0]["tournament"] and failed[0]["shard"] == "0/1"

    monkeypatch.setattr(Store, "add_hand", real_add)  # space again
    assert cli_main(["tournament", "resume", str(out), "--quiet"]) == 0
    ids = _ids(db)
    assert len(ids) == len(set(ids)) == PLANNED
    assert set(stored) <= set(ids)
    assert len(list((out / "replays").glob("*.json"))) == PLANNED
    assert (out / "results.json").is_file()


def _namespace_prefix() -> list[str] | None:
    """A command prefix that runs a shell in a private mount namespace where it may mount a
    tmpfs (root: ``unshare -m``; otherwise a user namespace, ``unshare -rm``), or None."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    for prefix in ([unshare, "-m"], [unshare, "-rm"]):
        probe = subprocess.run(
            [
                *prefix,
                "sh",
                "-c",
                "mount -t tmpfs -o size=1m tmpfs /mnt 2>/dev/null || "
                'mount -t tmpfs -o size=1m tmpfs "$0"',
                "/tmp",
            ],
            capture_output=True,
            timeout=30,
            check=False,
        )
        if probe.returncode == 0:
            return prefix
    return None


SCENARIO = r"""
set -u
mnt="$1"; cfg="$2"; res="$3"; py="$4"
mount -t tmpfs -o size=64m tmpfs "$mnt" || exit 97
out="$mnt/out"
# The disk is nearly full before the run starts: 1 MiB is left, room for the run's start and
# about 15 of its 120 hands (a hand is 20-30 KiB here: rows, replay file, logs). A filler
# that waited for the run to store a few hands raced it, and a busy machine could let the run
# finish first; this way the run must fill the disk, by causality, wherever it runs.
avail_kib=$(df -k --output=avail "$mnt" | tail -1)
head -c $(( (avail_kib - 1024) * 1024 )) /dev/zero > "$mnt/filler" 2>/dev/null
"$py" -m uno_server.cli tournament run "$cfg" --out "$out" --quiet \
  > "$res/run.out" 2> "$res/run.err"
echo $? > "$res/run.rc"
"$py" -c "import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute('select count(*) from hands').fetchone()[0])" \
  "$out/tournament.sqlite" > "$res/stored_at_failure"
rm -f "$mnt/filler"
"$py" -m uno_server.cli tournament resume "$out" --quiet > "$res/resume.out" 2> "$res/resume.err"
echo $? > "$res/resume.rc"
cp "$out/tournament.sqlite" "$res/" 2>/dev/null
cp "$out/results.json" "$res/" 2>/dev/null
ls "$out/replays" | wc -l > "$res/replays"
exit 0
"""


def test_a_real_full_filesystem_stops_the_run_in_one_line_and_resume_loses_nothing(
    tmp_path: Path,
) -> None:
    prefix = _namespace_prefix()
    if prefix is None:
        pytest.skip("this kernel lets this user mount no tmpfs, even in a user namespace")
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(5)], name="tiny")
    mnt = tmp_path / "mnt"
    res = tmp_path / "res"
    mnt.mkdir()
    res.mkdir()
    proc = subprocess.run(
        [*prefix, "bash", "-c", SCENARIO, "scenario", str(mnt), str(cfg), str(res), sys.executable],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    err = (res / "run.err").read_text()
    rc = int((res / "run.rc").read_text())
    stored = int((res / "stored_at_failure").read_text())
    print(f"a 64 MiB tmpfs filled mid-run: exit {rc}, {stored} of {PLANNED} stored; {err!r}")
    assert rc != 0, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "No space left on device" in lines[0] or "full" in lines[0], lines[0]
    assert str(mnt / "out") in lines[0]  # the path
    assert f"uno-arena tournament resume {mnt / 'out'}" in lines[0]
    assert 0 < stored < PLANNED
    assert int((res / "resume.rc").read_text()) == 0, (res / "resume.err").read_text()
    ids = _ids(res / "tournament.sqlite")
    assert len(ids) == len(set(ids)) == PLANNED
    assert int((res / "replays").read_text()) == PLANNED
    assert (res / "results.json").is_file()
