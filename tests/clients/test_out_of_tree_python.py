"""The Python SDK used from outside the repository exactly as clients/python/README.md says:
build the wheel, install it into a fresh venv in a temp folder, write the README's quick-start
bot there, and play 20 hands against a live ``uno-arena serve`` on port 0: 20 hands finished,
0 timeouts, 0 rejected actions, 0 takeovers.

The bot's code is taken from the README itself (the block after the ``quick-start-bot``
marker), so the README cannot drift from what works.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from uno_server.gen.uno.v1 import admin_pb2, game_pb2

from .langs import ROOT, Admin, Serve, seat_totals

SDK = ROOT / "clients" / "python"
HANDS = 20
NAME, TOKEN = "my-bot", "MY-TOKEN-out-of-tree"


REQUIRES = (
    "import importlib.metadata as m, re; "
    "print(*sorted(re.split('[ <>=;]', r)[0] for r in m.requires('uno-arena-bot')))"
)


def readme_bot() -> str:
    text = (SDK / "README.md").read_text()
    m = re.search(r"<!-- quick-start-bot[^>]*-->\s*```python\n(.*?)```", text, re.S)
    assert m is not None, "README.md lost its quick-start-bot block"
    return m.group(1)


def sh(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    res = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert res.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{res.stdout}\n{res.stderr}"
    return res.stdout


def test_readme_quick_start_from_a_wheel_plays_20_hands(tmp_path: Path) -> None:
    assert not tmp_path.resolve().is_relative_to(ROOT), "the bot must live outside the repo"
    # a clean environment: nothing of this repository's venv leaks into the bot's
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("UNO_ARENA_")
    }
    t0 = time.monotonic()
    # 1. the wheel, as the README builds it; from a clean copy of the SDK, since setuptools
    # builds in the source folder and a stale build/ could slip old files into the wheel
    src = tmp_path / "arena-clients-python"
    shutil.copytree(
        SDK, src, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__")
    )
    dist = tmp_path / "dist"
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", src, "-w", dist, cwd=tmp_path, env=env)
    wheels = list(dist.glob("uno_arena_bot-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    # 2. an empty folder with its own venv, the wheel installed from PyPI's grpcio/protobuf
    folder = tmp_path / "my-bot"
    folder.mkdir()
    base = getattr(sys, "_base_executable", sys.executable)
    sh(base, "-m", "venv", ".venv", cwd=folder, env=env)
    py = folder / ".venv" / "bin" / "python"
    sh(
        py,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        wheels[0],
        cwd=folder,
        env=env,
    )
    requires = sh(py, "-c", REQUIRES, cwd=folder, env=env).split()
    assert requires == ["grpcio", "protobuf"], requires  # its only direct dependencies
    installed = json.loads(sh(py, "-m", "pip", "list", "--format", "json", cwd=folder, env=env))
    names = {d["name"].lower().replace("_", "-") for d in installed}
    assert not names & {"uno-arena", "numpy", "rich", "structlog", "prometheus-client"}, names
    sh(
        py,
        "-c",
        "import importlib.util as u; assert u.find_spec('uno_server') is None",
        cwd=folder,
        env=env,
    )
    # 3. the README's bot
    (folder / "my_bot.py").write_text(readme_bot())
    setup_s = time.monotonic() - t0

    server = Serve({NAME: TOKEN})
    log = (tmp_path / "bot.log").open("wb")
    bot = subprocess.Popen(
        [py, "my_bot.py", "--addr", server.addr, "--token", TOKEN],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        infos = asyncio.run(_play(server.addr, bot))
    finally:
        bot.terminate()
        code = bot.wait(15)
        log.close()
        server.stop()
    bot_log = (tmp_path / "bot.log").read_text()
    assert code == 0, f"the bot exited {code} on SIGTERM:\n{bot_log[-3000:]}"
    assert all(i.state == admin_pb2.MATCH_STATE_FINISHED for i in infos)
    totals = seat_totals(infos, NAME)
    assert sum(i.hand_number for i in infos) == HANDS
    assert totals["seats"] == HANDS and totals["decisions"] >= HANDS
    assert (totals["timeouts"], totals["rejected"], totals["takeovers"]) == (0, 0, 0), totals
    assert "Traceback" not in bot_log
    print(f"\nout of tree (python): setup {setup_s:.1f} s, {json.dumps(totals)}")


async def _play(addr: str, bot: subprocess.Popen[bytes]) -> list[admin_pb2.MatchInfo]:
    admin = Admin(addr)
    try:
        await admin.wait_connected([NAME], [bot])
        seats: list[str | int] = [
            NAME,
            game_pb2.BUILTIN_BOT_HEURISTIC,
            game_pb2.BUILTIN_BOT_RANDOM,
            game_pb2.BUILTIN_BOT_HEURISTIC,
        ]
        return await asyncio.wait_for(admin.play(seats, HANDS), 300)
    finally:
        await admin.close()


def test_readme_bot_block_is_a_complete_program() -> None:
    code = readme_bot()
    compile(code, "my_bot.py", "exec")
    assert "uno_server" not in code and 'if __name__ == "__main__":' in code
