"""Where a league's records are: ``DIR/league.sqlite`` (:class:`.store.LeagueStore`), or with
``--store postgresql://...`` a PostgreSQL database (:class:`.pgleague.PgLeagueStore`); what every
``league`` subcommand opens its league with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..pgstore import redact
from .pgleague import PgLeagueStore
from .store import DB_NAME, STORE_NOTE, LeagueError, LeagueStore

__all__ = ["create_league", "is_store_url", "open_league"]


def is_store_url(text: str) -> bool:
    """Whether ``--store`` names a PostgreSQL database."""
    return text.startswith(("postgresql://", "postgres://"))


def _check_url(url: str) -> None:
    if not is_store_url(url):
        raise LeagueError(
            f"--store: {redact(url)[:80]!r} is no PostgreSQL URL; give postgresql://USER:PASSWORD@HOST"
            "/DB (a SQLite league needs no --store: its folder is the league)"
        )


def create_league(folder: Path, settings: dict[str, Any], url: str | None = None) -> LeagueStore:
    """``league init``: a SQLite league in ``folder``, or with ``url`` a PostgreSQL one (the
    folder then holds only local files, and :data:`STORE_NOTE`)."""
    if url is None:
        return LeagueStore.create(folder, settings)
    _check_url(url)
    if (folder / STORE_NOTE).exists():
        where = (folder / STORE_NOTE).read_text(errors="replace").strip()[:200]
        raise LeagueError(
            f"{folder} already holds the local files of the league in {where}; give the new "
            "league another folder"
        )
    if (folder / DB_NAME).exists():
        raise LeagueError(
            f"{folder} already holds a SQLite league ({DB_NAME}); give the PostgreSQL league "
            "another folder"
        )
    return PgLeagueStore.create_url(url, folder, settings)


def open_league(folder: Path, url: str | None = None, *, readonly: bool = False) -> LeagueStore:
    """The league of ``folder`` (its ``league.sqlite``), or with ``url`` the league in that
    PostgreSQL database (its local files in ``folder``)."""
    if url is None:
        return LeagueStore.open(folder, readonly=readonly)
    _check_url(url)
    return PgLeagueStore.open_url(url, folder)
