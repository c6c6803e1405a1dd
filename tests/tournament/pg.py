"""A real PostgreSQL for the tests: Debian's server binaries, a throwaway cluster in a temporary
folder, on a free port of 127.0.0.1 with password (SCRAM) authentication over TCP.

``initdb`` refuses to run as root, so as root the cluster belongs to the ``postgres`` user that
Debian's package creates (``runuser -u postgres``). In CI (``CI=true``) a missing PostgreSQL is a
failure: ``.ci/run`` installs the ``postgresql`` package. Elsewhere the tests that need it skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "uno"
PASSWORD = "uno-test-password"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def server_bin() -> Path | None:
    """The folder of ``initdb``/``pg_ctl``: on PATH, else the newest /usr/lib/postgresql/*/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    dirs = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return Path(dirs[-1]).parent if dirs else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class TempPostgres:
    folder: Path
    port: int
    bindir: Path
    as_user: list[str]

    @property
    def admin_conninfo(self) -> str:
        return f"host={self.folder} port={self.port} user=postgres dbname=postgres"

    def url(self, db: str, *, password: str = PASSWORD, port: int | None = None) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{port or self.port}/{db}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_conninfo, autocommit=True) as conn:
            conn.execute(sql.encode())

    def new_database(self) -> str:
        name = f"t_{secrets.token_hex(4)}"
        self.admin(f"CREATE DATABASE {name} OWNER {USER}")
        return name

    def drop_database(self, name: str) -> None:
        with contextlib.suppress(Exception):
            self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self.as_user, *args], check=True, capture_output=True, text=True, timeout=120
        )

    def start(self) -> None:
        data = self.folder / "data"
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
        )
        conf = (
            f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
            f"unix_socket_directories = '{self.folder}'\nfsync = off\n"
            "synchronous_commit = off\nfull_page_writes = off\nmax_connections = 60\n"
            "shared_buffers = 32MB\n"
        )
        with (data / "postgresql.conf").open("a") as f:
            f.write(conf)
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(self.folder / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        self.admin(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.folder / "data"),
                "-m",
                "immediate",
                "stop",
            )


@contextlib.contextmanager
def temp_postgres() -> Iterator[TempPostgres]:
    bindir = server_bin()
    if bindir is None or not (bindir / "pg_ctl").exists():
        msg = "PostgreSQL is not installed (Debian package 'postgresql'; .ci/run installs it)"
        if in_ci():
            pytest.fail(msg)
        pytest.skip(msg)
    as_user: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="uno-pg-"))
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail("running as root, and there is no 'postgres' user to own the cluster")
        os.chown(folder, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    pg = TempPostgres(folder, _free_port(), bindir, as_user)
    try:
        pg.start()
        yield pg
    finally:
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
