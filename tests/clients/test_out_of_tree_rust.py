"""The Rust SDK used from outside the repository, exactly as clients/rust/README.md says.

The quick start's ``my-bot`` (Cargo.toml with the path dependency, src/main.rs) is taken from the
README's code blocks into a temporary folder outside the repository, built with ``cargo build
--release`` and played for 20 hands against a live ``uno-arena serve``: 20 hands finished, no
timeout, no rejected action, and exit 0 on SIGTERM.

To keep the build to the bot's own crate, the test uses the SDK's ``Cargo.lock`` (the README's
optional step) and its target folder (``CARGO_TARGET_DIR``), where ``cargo test --release`` and
the conformance test have built the dependencies already.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .live_arena import (
    ROOT,
    bot_process,
    check,
    need_tools,
    outside_repo,
    play,
    readme_files,
    run,
    serve,
    write_files,
)

SDK = ROOT / "clients" / "rust"
TOKEN = "rust-out-of-tree-token"


def test_the_readme_bot_builds_outside_the_repo_and_plays_20_hands(tmp_path: Path) -> None:
    need_tools("cargo")
    files = readme_files(SDK / "README.md", "my-bot")
    assert set(files) == {"Cargo.toml", "src/main.rs"}, sorted(files)
    readme_path = '{ path = "../uno-arena/clients/rust" }'
    assert readme_path in files["Cargo.toml"]
    # The one change a reader makes: where their checkout of the repository is.
    files["Cargo.toml"] = files["Cargo.toml"].replace(readme_path, f'{{ path = "{SDK}" }}')
    bot_dir = outside_repo(tmp_path / "my-bot")
    write_files(bot_dir, files)
    shutil.copy(SDK / "Cargo.lock", bot_dir / "Cargo.lock")

    target = SDK / "target"
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    run(["cargo", "build", "--release"], cwd=bot_dir, env=env)
    exe = target / "release" / "my-bot"
    assert exe.exists()

    with serve({"my-bot": TOKEN}) as server:
        log = tmp_path / "my-bot.log"
        cmd = [str(exe), "--addr", server.addr, "--token", TOKEN, "--name", "my-bot"]
        with bot_process(cmd, cwd=bot_dir, log=log) as bot:
            infos = play(server, "my-bot", bot, log)
    check(infos, "my-bot")
    assert "turns, won=" in log.read_text(), "match_ended of the README's bot ran"
