"""Every SDK artifact of ``make dist``, installed alone, outside the repository, the way a
stranger installs a package from its registry, then playing 20 hands against a live server.

The artifacts are built by ``clients/dist.py --quick`` (what ``make dist`` runs, without cargo's
own verification build: the Rust test below builds the unpacked crate outside the repository,
which is that verification) into a temporary ``dist/``. Each test then takes one artifact from
there into an empty folder outside the repository and uses only its ecosystem's ordinary
commands:

- Python: ``pip install uno_arena_bot-V-py3-none-any.whl`` into a fresh venv (and the sdist into
  another one);
- TypeScript: ``npm install uno-arena-bot-V.tgz`` in a new npm project;
- Rust: the unpacked ``.crate`` as a path dependency;
- Java: the deployed file repository merged into a local Maven repository;
- Go: ``go get MODULE@vV`` with ``GOPROXY=file://.../dist/go`` (the module proxy's layout);
- proto: the zip, compiled with protoc.

The bot is the README's minimal bot (the same code blocks the out-of-tree tests run), and the
hands are played with the helpers of ``live_arena``: every hand finished, 0 timeouts, 0 rejected
actions, 0 takeovers. Build caches are shared with the rest of the suite (``~/.cargo``,
``~/.m2`` seeded into a private copy, the npm and Go caches; Rust's compiled dependencies via
``CARGO_TARGET_DIR``), never the SDK's sources.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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
from .test_out_of_tree_go import readme_block
from .test_out_of_tree_java import seed_repository
from .test_out_of_tree_python import readme_bot

CLIENTS = ROOT / "clients"
GO_MODULE = "github.com/uno-arena/uno-arena/clients/go"
TOOLS = {
    "python": (),
    "npm": ("node", "npm"),
    "rust": ("cargo",),
    "maven": ("java", "mvn"),
    "go": ("go",),
    "proto": (),
}


# ------------------------------------------------------------------------------ versions


def declared_versions() -> dict[str, str]:
    """Every place an SDK states its version: manifests, lock files, source constants."""
    found: dict[str, str] = {}

    def source(rel: str, pattern: str) -> None:
        m = re.search(pattern, (ROOT / rel).read_text(), re.M)
        assert m, f"{rel}: no version matching {pattern!r}"
        found[rel] = m.group(1)

    py = tomllib.loads((CLIENTS / "python/pyproject.toml").read_text())
    found["clients/python/pyproject.toml"] = py["project"]["version"]
    source("clients/python/uno_bot/_version.py", r'^__version__ = "([^"]+)"')
    pkg = json.loads((CLIENTS / "typescript/package.json").read_text())
    found["clients/typescript/package.json"] = pkg["version"]
    lock = json.loads((CLIENTS / "typescript/package-lock.json").read_text())
    found["clients/typescript/package-lock.json"] = lock["packages"][""]["version"]
    source("clients/typescript/src/client.ts", r'^export const SDK_VERSION = "([^"]+)"')
    cargo = tomllib.loads((CLIENTS / "rust/Cargo.toml").read_text())
    found["clients/rust/Cargo.toml"] = cargo["package"]["version"]
    cargo_lock = tomllib.loads((CLIENTS / "rust/Cargo.lock").read_text())
    (own,) = [p for p in cargo_lock["package"] if p["name"] == "uno-arena-bot"]
    found["clients/rust/Cargo.lock"] = own["version"]
    source("clients/java/pom.xml", r"<artifactId>uno-bot</artifactId>\s*<version>([^<]+)<")
    source(
        "clients/java/src/main/java/uno/arena/sdk/UnoBotClient.java",
        r'^\s*public static final String SDK_VERSION = "([^"]+)";',
    )
    # Rust's constant is the manifest's version by construction
    lib = (CLIENTS / "rust/src/lib.rs").read_text()
    assert 'pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");' in lib
    source("clients/go/unobot/bot.go", r'^const Version = "([^"]+)"')
    return found


def test_every_sdk_states_one_version() -> None:
    found = declared_versions()
    assert len(set(found.values())) == 1, found
    version = next(iter(found.values()))
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    # the changelog has an entry for it, and the READMEs install that version
    assert f"## SDK {version}" in (ROOT / "CHANGELOG.md").read_text()


def sdk_version() -> str:
    return tomllib.loads((CLIENTS / "rust/Cargo.toml").read_text())["package"]["version"]


# ------------------------------------------------------------------------------ the artifacts


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An empty dist folder, outside the repository; steps are built into it on demand."""
    yield outside_repo(tmp_path_factory.mktemp("dist"))


_built: dict[str, float] = {}


def artifacts(dist: Path, step: str) -> Path:
    """Runs ``clients/dist.py --quick STEP`` once per session; returns the dist folder."""
    need_tools(*TOOLS[step])
    if step not in _built:
        t0 = time.monotonic()
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        cmd = [sys.executable, str(CLIENTS / "dist.py"), "--quick", "--out", str(dist), step]
        run(cmd, cwd=ROOT, env=env, timeout=1200)
        _built[step] = time.monotonic() - t0
        print(f"\ndist {step}: built in {_built[step]:.0f} s")
    return dist


def stranger_env(**extra: str) -> dict[str, str]:
    """The environment of someone without our checkout: none of our venv, paths or settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "NODE_PATH", "GOWORK", "GOFLAGS")
        and not k.startswith("UNO_ARENA_")
    }
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    return {**env, **extra}


def play_20_hands(cmd: list[str], cwd: Path, tmp: Path, token: str) -> str:
    """Starts the bot (``cmd`` with ``{addr}`` and ``{token}`` filled in) as ``my-bot`` against a
    live server, in a stranger's environment (:func:`stranger_env`), plays 20 hands and checks
    them; returns the bot's log."""
    unset = [f"--unset={k}" for k in os.environ if k not in stranger_env()]
    with serve({"my-bot": token}) as server:
        full = [c.replace("{addr}", server.addr).replace("{token}", token) for c in cmd]
        full = ["env", *unset, *full]
        log = tmp / "my-bot.log"
        with bot_process(full, cwd=cwd, log=log) as bot:
            infos = play(server, "my-bot", bot, log)
    check(infos, "my-bot")
    return log.read_text(errors="replace")


# ------------------------------------------------------------------------------ Python


def test_python_wheel_and_sdist_install_alone_and_play(dist: Path, tmp_path: Path) -> None:
    v = sdk_version()
    out = artifacts(dist, "python") / "python"
    wheel, sdist = out / f"uno_arena_bot-{v}-py3-none-any.whl", out / f"uno_arena_bot-{v}.tar.gz"
    assert sorted(p.name for p in out.iterdir()) == sorted([wheel.name, sdist.name])
    env = stranger_env()
    base = getattr(sys, "_base_executable", sys.executable)
    pip = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]

    # the sdist holds the protocol code and builds a wheel of its own (setuptools from PyPI)
    sdist_dir = outside_repo(tmp_path / "from-sdist")
    run([base, "-m", "venv", str(sdist_dir / ".venv")], cwd=tmp_path, env=env)
    sdist_py = str(sdist_dir / ".venv" / "bin" / "python")
    run([sdist_py, *pip, str(sdist)], cwd=tmp_path, env=env)
    probe = "from uno_bot.proto import bot_pb2; import uno_bot; print(uno_bot.__version__)"
    res = subprocess.run(
        [sdist_py, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert res.stdout.strip() == v, res

    bot_dir = outside_repo(tmp_path / "my-bot")
    run([base, "-m", "venv", str(bot_dir / ".venv")], cwd=tmp_path, env=env)
    py = str(bot_dir / ".venv" / "bin" / "python")
    run([py, *pip, str(wheel)], cwd=bot_dir, env=env)
    (bot_dir / "my_bot.py").write_text(readme_bot())
    cmd = [py, "my_bot.py", "--addr", "{addr}", "--token", "{token}"]
    log = play_20_hands(cmd, bot_dir, tmp_path, "py-dist-token")
    assert "Traceback" not in log


# ------------------------------------------------------------------------------ TypeScript


def test_npm_tarball_installs_alone_and_plays(dist: Path, tmp_path: Path) -> None:
    v = sdk_version()
    tgz = artifacts(dist, "npm") / "npm" / f"uno-arena-bot-{v}.tgz"
    with tarfile.open(tgz) as tf:
        names = set(tf.getnames())
    assert "package/dist/src/index.js" in names and "package/CHANGELOG.md" in names
    assert not any(n.startswith("package/dist/test/") for n in names), "tests are not shipped"
    env = stranger_env(npm_config_audit="false", npm_config_fund="false")
    bot_dir = outside_repo(tmp_path / "my-bot")
    bot_dir.mkdir()
    run(["npm", "init", "-y"], cwd=bot_dir, env=env)
    run(["npm", "install", str(tgz)], cwd=bot_dir, env=env)
    run(["npm", "install", "--save-dev", "typescript", "@types/node"], cwd=bot_dir, env=env)
    installed = bot_dir / "node_modules" / "uno-arena-bot"
    assert not installed.is_symlink()
    assert json.loads((installed / "package.json").read_text())["version"] == v
    (bot_dir / "bot.ts").write_text(readme_block(CLIENTS / "typescript/README.md", "bot.ts"))
    build = readme_block(CLIENTS / "typescript/README.md", "build").strip()
    run(["bash", "-e", "-c", build], cwd=bot_dir, env=env)
    play_20_hands(env_cmd("node", "bot.js"), bot_dir, tmp_path, "ts-dist-token")


def env_cmd(*cmd: str) -> list[str]:
    """A bot configured by UNO_ARENA_ADDR / UNO_ARENA_TOKEN (the Go and TypeScript quick starts)."""
    return ["UNO_ARENA_ADDR={addr}", "UNO_ARENA_TOKEN={token}", *cmd]


# ------------------------------------------------------------------------------ Rust


def test_rust_crate_builds_alone_and_plays(dist: Path, tmp_path: Path) -> None:
    v = sdk_version()
    crate = artifacts(dist, "rust") / "rust" / f"uno-arena-bot-{v}.crate"
    work = outside_repo(tmp_path)
    with tarfile.open(crate) as tf:
        names = tf.getnames()
        tf.extractall(work, filter="data")
    unpacked = work / f"uno-arena-bot-{v}"
    # the protocol travels inside the crate, equal to the repository's
    for proto in sorted((ROOT / "proto/uno/v1").glob("*.proto")):
        packed = unpacked / "proto/uno/v1" / proto.name
        assert packed.read_text() == proto.read_text(), f"{packed} differs from proto/"
    assert "../../proto" not in (unpacked / "build.rs").read_text()
    assert not any("/target/" in n for n in names)

    files = readme_files(CLIENTS / "rust/README.md", "my-bot")
    assert set(files) == {"Cargo.toml", "src/main.rs"}, sorted(files)
    toml = re.sub(
        r"^uno-arena-bot = .*$",
        f'uno-arena-bot = {{ path = "{unpacked}" }}',
        files["Cargo.toml"],
        flags=re.M,
    )
    assert str(unpacked) in toml
    bot_dir = work / "my-bot"
    write_files(bot_dir, {**files, "Cargo.toml": toml})
    shutil.copy(unpacked / "Cargo.lock", bot_dir / "Cargo.lock")  # the README's optional step
    # compiled dependencies are shared with the suite's other Rust builds (a bot's dependency
    # features differ from the SDK's own build, which adds its dev-dependencies' features: the
    # first of this test and test_out_of_tree_rust compiles them, the other reuses them); the
    # SDK itself is compiled from the unpacked crate (another path: another package to cargo)
    target = CLIENTS / "rust" / "target"
    env = stranger_env(CARGO_TARGET_DIR=str(target))
    run(["cargo", "build", "--release"], cwd=bot_dir, env=env, timeout=2400)
    exe = target / "release" / "my-bot"
    log = play_20_hands(
        [str(exe), "--addr", "{addr}", "--token", "{token}", "--name", "my-bot"],
        bot_dir,
        tmp_path,
        "rust-dist-token",
    )
    assert "turns, won=" in log, "match_ended of the README's bot ran"


# ------------------------------------------------------------------------------ Java


def test_maven_repository_installs_alone_and_plays(dist: Path, tmp_path: Path) -> None:
    v = sdk_version()
    repo_out = artifacts(dist, "maven") / "maven"
    base = repo_out / "uno/arena/uno-bot" / v
    for suffix in (".jar", "-sources.jar", ".pom"):
        assert (base / f"uno-bot-{v}{suffix}").is_file(), suffix
    with zipfile.ZipFile(base / f"uno-bot-{v}-sources.jar") as zf:
        assert "uno/arena/sdk/UnoBotClient.java" in zf.namelist()
    # a local repository holding what ~/.m2 holds (not the SDK), plus the deployed one
    m2 = outside_repo(tmp_path / "m2")
    seed_repository(m2)
    assert not (m2 / "uno/arena/uno-bot").exists()
    shutil.copytree(repo_out, m2, dirs_exist_ok=True)
    local = f"-Dmaven.repo.local={m2}"

    files = readme_files(CLIENTS / "java/README.md", "my-bot")
    assert set(files) == {"pom.xml", "src/main/java/mybot/MyBot.java"}, sorted(files)
    assert f"<version>{v}</version>" in files["pom.xml"], "the README depends on this version"
    bot_dir = outside_repo(tmp_path / "my-bot")
    write_files(bot_dir, files)
    run(["mvn", "-q", "-B", local, "package"], cwd=bot_dir, env=stranger_env(), timeout=1200)
    jar = bot_dir / "target" / "my-bot-1.0.jar"
    cmd = ["java", "-jar", str(jar), "--addr", "{addr}", "--token", "{token}", "--name", "my-bot"]
    log = play_20_hands(cmd, bot_dir, tmp_path, "java-dist-token")
    assert "turns, won=" in log, "onMatchEnded of the README's bot ran"


# ------------------------------------------------------------------------------ Go


def test_go_module_from_a_file_proxy_plays(dist: Path, tmp_path: Path) -> None:
    v = sdk_version()
    proxy = artifacts(dist, "go") / "go"
    at = proxy / GO_MODULE / "@v"
    assert (at / "list").read_text().split() == [f"v{v}"]
    with zipfile.ZipFile(at / f"v{v}.zip") as zf:
        names = zf.namelist()
    assert all(n.startswith(f"{GO_MODULE}@v{v}/") for n in names)
    assert f"{GO_MODULE}@v{v}/go.mod" in names and f"{GO_MODULE}@v{v}/unobot/bot.go" in names
    assert not any("/bin/" in n or "/.bin/" in n for n in names), "no build outputs"

    env = stranger_env(
        # the module from dist/go, everything else from the Go module proxy; the module is not
        # in the public checksum database (it is not published), its own go.sum lines are new
        GOPROXY=f"{proxy.as_uri()},https://proxy.golang.org",
        GONOSUMDB=GO_MODULE,
        GOWORK="off",
    )
    bot_dir = outside_repo(tmp_path / "my-bot")
    bot_dir.mkdir()
    readme = CLIENTS / "go/README.md"
    (bot_dir / "main.go").write_text(readme_block(readme, "main.go"))
    run(["go", "mod", "init", "my-bot"], cwd=bot_dir, env=env)
    run(["go", "get", f"{GO_MODULE}@v{v}"], cwd=bot_dir, env=env)
    run(["go", "mod", "tidy"], cwd=bot_dir, env=env, timeout=1200)
    run(["go", "build", "-o", "my-bot", "."], cwd=bot_dir, env=env, timeout=1200)
    assert f"{GO_MODULE} v{v}" in (bot_dir / "go.mod").read_text()
    assert "replace" not in (bot_dir / "go.mod").read_text()
    play_20_hands(env_cmd(str(bot_dir / "my-bot")), bot_dir, tmp_path, "go-dist-token")


# ------------------------------------------------------------------------------ proto


def test_proto_zip_generates_stubs_on_its_own(dist: Path, tmp_path: Path) -> None:
    v = sdk_version()
    zipped = artifacts(dist, "proto") / f"uno-arena-proto-{v}.zip"
    work = outside_repo(tmp_path)
    with zipfile.ZipFile(zipped) as zf:
        zf.extractall(work)
    protos = sorted((ROOT / "proto/uno/v1").glob("*.proto"))
    for proto in protos:
        assert (work / "proto/uno/v1" / proto.name).read_text() == proto.read_text()
    assert (work / "proto/README.md").is_file()
    out = work / "gen"
    out.mkdir()
    cmd = [sys.executable, "-m", "grpc_tools.protoc", "-I", "proto", f"--python_out={out}"]
    run([*cmd, *(f"proto/uno/v1/{p.name}" for p in protos)], cwd=work)
    assert sorted(p.name for p in (out / "uno/v1").glob("*_pb2.py")) == sorted(
        f"{p.stem}_pb2.py" for p in protos
    )


# ------------------------------------------------------------------------------ documentation

README_INSTALL = {
    # each SDK README installs from the registry and from the artifact of `make dist`
    "python": ("pip install uno-arena-bot", "uno_arena_bot-{v}-py3-none-any.whl"),
    "typescript": ("npm install uno-arena-bot", "uno-arena-bot-{v}.tgz"),
    "rust": ('uno-arena-bot = "{v}"', "uno-arena-bot-{v}.crate"),
    "java": ("<version>{v}</version>", "dist/maven"),
    "go": ("go get github.com/uno-arena/uno-arena/clients/go@v{v}", "dist/go"),
}
PUBLISH = (
    "twine upload",
    "npm publish",
    "cargo publish",
    "mvn deploy",
    "GOPROXY=proxy.golang.org go list -m",
)


def test_readmes_install_without_a_checkout_and_docs_say_how_to_publish() -> None:
    v = sdk_version()
    for lang, needles in README_INSTALL.items():
        text = (CLIENTS / lang / "README.md").read_text()
        m = re.search(r"^## Install\n(.*?)(?=^## )", text, re.M | re.S)
        assert m, f"clients/{lang}/README.md has no '## Install' section"
        for needle in needles:
            assert needle.format(v=v) in m.group(1), f"clients/{lang}/README.md: {needle}"
    sdks = (ROOT / "docs/sdks.md").read_text()
    for command in PUBLISH:
        assert command in sdks, f"docs/sdks.md does not say `{command}`"
    assert "make dist" in sdks
