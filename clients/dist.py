"""Builds every SDK as the artifact its ecosystem publishes, into one folder (`make dist`).

    python clients/dist.py [--out DIR] [--quick] [python|npm|rust|maven|go|proto ...]

What lands in DIR (default dist/), each checked the way its registry would check it:

    python/uno_arena_bot-V-py3-none-any.whl, uno_arena_bot-V.tar.gz   (python -m build; twine check)
    npm/uno-arena-bot-V.tgz                     (npm pack; npm publish --dry-run of that tarball)
    rust/uno-arena-bot-V.crate                  (cargo package: unless --quick, it also builds
                                                 the packaged crate on its own; cargo publish
                                                 --dry-run)
    maven/uno/arena/uno-bot/V/...               (mvn deploy to a file repository: jar, sources
                                                 jar, pom, the example bot's runnable jar)
    go/github.com/uno-arena/uno-arena/clients/go/@v/vV.{info,mod,zip}, list
                                                (a Go module proxy's layout: GOPROXY=file://...)
    uno-arena-proto-V.zip                       (proto/, for generating your own stubs)
    SHA256SUMS

V is the SDK version, one for all five SDKs; the build stops at once if the manifests disagree.
Every SDK is built from a copy of its folder in a temporary directory (only the files git does
not ignore), so the checkout's node_modules, target/ and build/ are neither used nor changed,
except Rust's and Maven's caches (CARGO_TARGET_DIR=clients/rust/target, ~/.m2).

--quick (used by tests/clients/test_dist.py, which then builds every artifact outside the
repository itself) skips cargo's verification build of the packaged crate, the slowest step.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "clients"
GO_MODULE = "github.com/uno-arena/uno-arena/clients/go"
STEPS = ("python", "npm", "rust", "maven", "go", "proto")


class DistError(Exception):
    """A step failed; the message says which and how."""


def manifest_versions() -> dict[str, str]:
    """The version each SDK's manifest declares (Go's is the constant unobot.Version)."""
    py = tomllib.loads((CLIENTS / "python" / "pyproject.toml").read_text())["project"]["version"]
    npm = json.loads((CLIENTS / "typescript" / "package.json").read_text())["version"]
    rust = tomllib.loads((CLIENTS / "rust" / "Cargo.toml").read_text())["package"]["version"]
    pom = (CLIENTS / "java" / "pom.xml").read_text()
    m = re.search(r"<artifactId>uno-bot</artifactId>\s*<version>([^<]+)</version>", pom)
    go = re.search(r'^const Version = "([^"]+)"', (CLIENTS / "go/unobot/bot.go").read_text(), re.M)
    return {
        "clients/python/pyproject.toml": py,
        "clients/typescript/package.json": npm,
        "clients/rust/Cargo.toml": rust,
        "clients/java/pom.xml": m.group(1) if m else "?",
        "clients/go/unobot/bot.go (Version)": go.group(1) if go else "?",
    }


def sdk_version() -> str:
    versions = manifest_versions()
    if len(set(versions.values())) != 1:
        listed = ", ".join(f"{k}: {v}" for k, v in versions.items())
        raise DistError(f"the SDK versions disagree ({listed}); make them one version")
    return next(iter(versions.values()))


def sh(cmd: Sequence[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Runs one command; on failure raises DistError with the command and its output's tail."""
    try:
        res = subprocess.run(
            [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise DistError(f"{cmd[0]} not found: install its toolchain (see docs/sdks.md)") from None
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-30:])
        raise DistError(f"`{' '.join(map(str, cmd))}` in {cwd} failed ({res.returncode}):\n{tail}")
    return res.stdout + res.stderr


def source_files(folder: Path) -> list[str]:
    """The files of ``folder`` git would commit (tracked, or new and not ignored), relative."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
        cwd=folder,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted(f for f in out.split("\0") if f and (folder / f).is_file())


def copy_sources(folder: Path, dest: Path) -> Path:
    for rel in source_files(folder):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(folder / rel, dest / rel)
    return dest


def build_python(out: Path, scratch: Path, version: str) -> list[Path]:
    src = copy_sources(CLIENTS / "python", scratch / "python")
    dest = out / "python"
    # sdist first, then the wheel built from the unpacked sdist: proves the sdist is complete
    sh([sys.executable, "-m", "build", "--outdir", dest, src], cwd=scratch)
    files = [
        dest / f"uno_arena_bot-{version}-py3-none-any.whl",
        dest / f"uno_arena_bot-{version}.tar.gz",
    ]
    sh([sys.executable, "-m", "twine", "check", "--strict", *files], cwd=scratch)
    return files


def build_npm(out: Path, scratch: Path, version: str) -> list[Path]:
    src = copy_sources(CLIENTS / "typescript", scratch / "typescript")
    shutil.copy2(ROOT / "CHANGELOG.md", src / "CHANGELOG.md")  # listed in package.json's files
    env = {**os.environ, "npm_config_audit": "false", "npm_config_fund": "false"}
    # npm ci runs `prepare`, which compiles dist/; npm pack then packs what package.json lists
    sh(["npm", "ci", "--loglevel=error"], cwd=src, env=env)
    dest = out / "npm"
    dest.mkdir(parents=True, exist_ok=True)
    sh(["npm", "pack", "--ignore-scripts", "--pack-destination", dest], cwd=src, env=env)
    tgz = dest / f"uno-arena-bot-{version}.tgz"
    # what the registry would receive: that very tarball (no scripts run, nothing is sent)
    sh(["npm", "publish", "--dry-run", "--ignore-scripts", tgz], cwd=scratch, env=env)
    return [tgz]


def build_rust(out: Path, scratch: Path, version: str, quick: bool) -> list[Path]:
    src = copy_sources(CLIENTS / "rust", scratch / "rust")
    env = {**os.environ, "CARGO_TARGET_DIR": str(CLIENTS / "rust" / "target")}
    crate = CLIENTS / "rust" / "target" / "package" / f"uno-arena-bot-{version}.crate"
    crate.unlink(missing_ok=True)
    # --allow-dirty: the copy is no git checkout. Without --no-verify cargo unpacks the .crate
    # and builds it alone, which fails if anything outside the crate (../../proto) is needed.
    cmd = ["cargo", "package", "--locked", "--allow-dirty"]
    sh([*cmd, "--no-verify"] if quick else cmd, cwd=src, env=env)
    # what crates.io would check before accepting it (metadata, dependencies on crates.io);
    # the build was verified just above
    sh(["cargo", "publish", "--dry-run", "--no-verify", "--locked", "--allow-dirty"], src, env)
    dest = out / "rust"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(crate, dest / crate.name)
    return [dest / crate.name]


def build_maven(out: Path, scratch: Path, version: str) -> list[Path]:
    # the pom generates the protocol code from ../../proto: the copy keeps that layout
    copy_sources(ROOT / "proto", scratch / "proto")
    src = copy_sources(CLIENTS / "java", scratch / "clients" / "java")
    repo = out / "maven"
    # the SDK's tests ran in `make test` (clients-test); here only what is deployed matters
    deploy = f"-DaltDeploymentRepository=local::{repo.resolve().as_uri()}"
    sh(["mvn", "-B", "-q", "deploy", "-DskipTests", deploy], cwd=src)
    base = repo / "uno" / "arena" / "uno-bot" / version
    files = [base / f"uno-bot-{version}{s}" for s in (".jar", "-sources.jar", ".pom")]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise DistError(f"mvn deploy did not write {', '.join(missing)}")
    return files


def build_go(out: Path, scratch: Path, version: str) -> list[Path]:
    """A Go module proxy's files for the module (the format `go` reads with GOPROXY=file://)."""
    folder = CLIENTS / "go"
    gomod = (folder / "go.mod").read_text()
    m = re.search(r"^module\s+(\S+)", gomod, re.M)
    if not m or m.group(1) != GO_MODULE:
        raise DistError(f"clients/go/go.mod: module is not {GO_MODULE}")
    v = f"v{version}"
    at = out / "go" / GO_MODULE / "@v"
    at.mkdir(parents=True, exist_ok=True)
    prefix = f"{GO_MODULE}@{v}/"
    with zipfile.ZipFile(at / f"{v}.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in source_files(folder):
            zf.write(folder / rel, prefix + rel)
    (at / f"{v}.mod").write_text(gomod)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (at / f"{v}.info").write_text(json.dumps({"Version": v, "Time": stamp}) + "\n")
    (at / "list").write_text(v + "\n")
    return [at / f"{v}.zip", at / f"{v}.mod", at / f"{v}.info"]


def build_proto(out: Path, version: str) -> list[Path]:
    dest = out / f"uno-arena-proto-{version}.zip"
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in source_files(ROOT / "proto"):
            zf.write(ROOT / "proto" / rel, f"proto/{rel}")
    return [dest]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("steps", nargs="*", metavar="STEP", help=f"any of {', '.join(STEPS)}")
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--quick", action="store_true", help="skip cargo's verification build")
    args = ap.parse_args(argv)
    steps = args.steps or list(STEPS)
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        ap.error(f"unknown step {', '.join(unknown)}: choose from {', '.join(STEPS)}")
    out: Path = args.out.resolve()
    try:
        version = sdk_version()
        for step in steps:  # a step's old output goes first: nothing stale survives
            old = out / f"uno-arena-proto-{version}.zip" if step == "proto" else out / step
            if old.is_dir():
                shutil.rmtree(old)
            old.unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        built: list[Path] = []
        with tempfile.TemporaryDirectory(prefix="uno-dist-") as tmp:
            for step in steps:
                t0 = time.monotonic()
                print(f"dist: {step} ...", flush=True)
                scratch = Path(tmp) / step
                scratch.mkdir()
                if step == "python":
                    files = build_python(out, scratch, version)
                elif step == "npm":
                    files = build_npm(out, scratch, version)
                elif step == "rust":
                    files = build_rust(out, scratch, version, args.quick)
                elif step == "maven":
                    files = build_maven(out, scratch, version)
                elif step == "go":
                    files = build_go(out, scratch, version)
                else:
                    files = build_proto(out, version)
                built += files
                names = ", ".join(str(f.relative_to(out)) for f in files)
                print(f"dist: {step}: {names} ({time.monotonic() - t0:.0f} s)", flush=True)
    except DistError as exc:
        print(f"dist: {exc}", file=sys.stderr)
        return 1
    sums = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(out)}"
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "SHA256SUMS"
    ]
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    print(f"dist: {len(built)} files of SDK version {version} in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
