"""The Java SDK used from outside the repository, exactly as clients/java/README.md says.

``mvn install`` puts the SDK into a temporary local Maven repository (seeded from ~/.m2, so
nothing is downloaded twice); the quick start's ``my-bot`` (pom.xml depending on
uno.arena:uno-bot:0.2.0, MyBot.java) is taken from the README's code blocks into a temporary
folder outside the repository, built with ``mvn package`` and played for 20 hands against a
live ``uno-arena serve``: 20 hands finished, no timeout, no rejected action, and exit 0 on
SIGTERM.
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

SDK = ROOT / "clients" / "java"
TOKEN = "java-out-of-tree-token"
# Written by Maven and rewritten in place: copied, never linked to the real repository's files.
_MUTABLE = ("_remote.repositories", "maven-metadata-local.xml", "resolver-status.properties")


def seed_repository(dest: Path) -> None:
    """A local Maven repository holding what ~/.m2 holds (artifacts hard-linked where possible)."""
    source = Path.home() / ".m2" / "repository"
    if not source.is_dir():
        dest.mkdir(parents=True)
        return

    def link_or_copy(src: str, dst: str) -> None:
        if Path(src).name in _MUTABLE or Path(src).suffix in (".lastUpdated", ".part"):
            shutil.copy2(src, dst)
            return
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, dest, copy_function=link_or_copy, ignore=shutil.ignore_patterns("uno"))


def test_the_readme_bot_builds_outside_the_repo_and_plays_20_hands(tmp_path: Path) -> None:
    need_tools("java", "mvn")
    repo = outside_repo(tmp_path / "m2")
    seed_repository(repo)
    local = f"-Dmaven.repo.local={repo}"
    # README step 1 (its tests already ran in `make test`'s clients-test).
    run(["mvn", "-q", "-B", local, "install", "-DskipTests"], cwd=SDK)
    assert (repo / "uno" / "arena" / "uno-bot" / "0.2.0" / "uno-bot-0.2.0.jar").exists()

    files = readme_files(SDK / "README.md", "my-bot")
    assert set(files) == {"pom.xml", "src/main/java/mybot/MyBot.java"}, sorted(files)
    bot_dir = outside_repo(tmp_path / "my-bot")
    write_files(bot_dir, files)
    run(["mvn", "-q", "-B", local, "package"], cwd=bot_dir)
    jar = bot_dir / "target" / "my-bot-1.0.jar"
    assert jar.exists()

    with serve({"my-bot": TOKEN}) as server:
        log = tmp_path / "my-bot.log"
        cmd = ["java", "-jar", str(jar), "--addr", server.addr, "--token", TOKEN]
        cmd += ["--name", "my-bot"]
        with bot_process(cmd, cwd=bot_dir, log=log) as bot:
            infos = play(server, "my-bot", bot, log)
    check(infos, "my-bot")
    assert "turns, won=" in log.read_text(), "onMatchEnded of the README's bot ran"
