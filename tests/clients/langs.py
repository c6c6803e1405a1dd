"""The example bot of every client language: its toolchain, build and start commands.

Used by the live conformance tests and by the tournament runner's example config. A language
whose toolchain is missing is skipped with the reason, except under CI=true, where a missing
toolchain is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"


@dataclass(frozen=True)
class Lang:
    name: str
    tools: tuple[str, ...]
    build: tuple[tuple[str, ...], ...]  # commands run in the language folder
    folder: Path

    def missing(self) -> list[str]:
        return [t for t in self.tools if shutil.which(t) is None]

    def command(self, addr: str, token: str, bot_name: str) -> list[str]:
        args = ["--addr", addr, "--token", token, "--name", bot_name]
        if self.name == "python":
            return [sys.executable, "-m", "uno_bot.examples.heuristic_bot", *args]
        if self.name == "go":
            return [str(self.folder / "bin" / "heuristic-bot"), *args]
        if self.name == "typescript":
            return ["node", str(self.folder / "dist" / "src" / "bot.js"), *args]
        if self.name == "rust":
            return [
                str(self.folder / "target" / "release" / "heuristic-bot"),
                "--addr",
                f"http://{addr}",
                "--token",
                token,
                "--name",
                bot_name,
            ]
        if self.name == "java":
            jars = sorted((self.folder / "target").glob("*-jar-with-dependencies.jar"))
            jar = str(jars[-1]) if jars else str(self.folder / "target" / "missing.jar")
            return ["java", "-jar", jar, *args]
        raise ValueError(self.name)


LANGS: dict[str, Lang] = {
    "python": Lang("python", (), (), CLIENTS / "python"),
    "go": Lang("go", ("go",), (("go", "build", "-o", "bin/", "./cmd/..."),), CLIENTS / "go"),
    "typescript": Lang(
        "typescript",
        ("node", "npm"),
        (("npm", "ci", "--no-audit", "--no-fund"), ("npm", "run", "build")),
        CLIENTS / "typescript",
    ),
    "rust": Lang(
        "rust", ("cargo",), (("cargo", "build", "--release", "--locked"),), CLIENTS / "rust"
    ),
    "java": Lang(
        "java", ("java", "mvn"), (("mvn", "-q", "-B", "package", "-DskipTests"),), CLIENTS / "java"
    ),
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def build(lang: Lang) -> None:
    for cmd in lang.build:
        res = subprocess.run(cmd, cwd=lang.folder, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-30:])
            raise RuntimeError(f"{lang.name}: `{' '.join(cmd)}` failed:\n{tail}")
