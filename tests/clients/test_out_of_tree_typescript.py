"""The TypeScript SDK used from outside the repository, exactly as clients/typescript/README.md
says: the SDK's `npm pack` tarball installed into a new npm project.

The test takes the README's quick start (its setup commands, its bot.ts, its compile command),
runs it in a temporary folder outside the repository, and plays 20 hands with the bot against a
live `uno-arena serve` started on port 0: 20 hands finished, 0 timeouts, 0 rejected actions,
run with `--addr`, `--token` and `--name` (which win over the environment; an unknown flag or a
stray argument is refused with exit code 2). The README's `UNO_ARENA` (the reader's clone) is a
temporary copy of clients/typescript, so that building the tarball leaves this checkout's
node_modules and dist alone. A missing Node.js or npm skips the test, except under CI=true,
where it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from .test_out_of_tree_go import (
    ROOT,
    WRONG_ENV,
    check_refuses_bad_arguments,
    flags_for,
    live_server,
    need,
    outside_repo,
    play_hands,
    readme_block,
    running,
    sh,
)

SDK = ROOT / "clients" / "typescript"
README = SDK / "README.md"


def test_typescript_bot_outside_the_repo_plays_20_hands(tmp_path: Path) -> None:
    need("node", "npm", "bash")
    tmp = outside_repo(tmp_path)
    clone = tmp / "clone"
    shutil.copytree(
        SDK,
        clone / "clients" / "typescript",
        ignore=shutil.ignore_patterns("node_modules", "dist", "*.tgz"),
    )
    setup = readme_block(README, "setup")
    setup = re.sub(r"^UNO_ARENA=\S+", f"UNO_ARENA={clone}", setup, count=1, flags=re.M)
    env = {**os.environ, "npm_config_audit": "false", "npm_config_fund": "false"}
    work = tmp / "work"
    work.mkdir()
    t0 = time.monotonic()
    sh(setup, work, env, "the README's setup")
    bot_dir = work / "my-bot"
    (bot_dir / "bot.ts").write_text(readme_block(README, "bot.ts"))
    sh(readme_block(README, "build"), bot_dir, env, "the README's compile")
    print(f"\ntypescript quick start (npm pack tarball): {time.monotonic() - t0:.1f} s")
    deps = (bot_dir / "package.json").read_text()
    assert "uno-arena-bot-0.2.0.tgz" in deps, deps
    assert not (bot_dir / "node_modules" / "uno-arena-bot").is_symlink(), "a copy, not a link"

    # The compiled bot refuses a malformed address at once, with one line and exit code 2.
    res = subprocess.run(
        ["node", "bot.js"],
        cwd=bot_dir,
        env={**env, "UNO_ARENA_ADDR": "localhost", "UNO_ARENA_TOKEN": "t"},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.splitlines() == [
        'my-bot: invalid address "localhost" (no port): '
        "use HOST:PORT, http://HOST:PORT or https://HOST:PORT"
    ]

    # ... the flag's address wins over the environment's; an unknown flag or a stray argument
    # is refused
    res = subprocess.run(
        ["node", "bot.js", "--addr", "also-no-port", "--token", "t" * 8],
        cwd=bot_dir,
        env={**env, "UNO_ARENA_ADDR": "localhost"},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert res.returncode == 2 and '"also-no-port"' in res.stderr, res.stderr
    check_refuses_bad_arguments(["node", "bot.js"], bot_dir, "flags: --addr, --token, --name")

    token = "out-of-tree-ts-token"
    with live_server(tmp, {"my-bot": token}) as server:
        # run as `uno-arena play`'s waiting screen says; the flags win over the environment
        bot_env = {**env, **WRONG_ENV}
        bot_log = tmp / "bot.log"
        cmd = ["node", "bot.js", *flags_for(server.addr, token)]
        with running(cmd, bot_dir, bot_env, bot_log) as proc:
            play_hands(server, "my-bot", proc, bot_log)
