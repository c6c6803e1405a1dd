"""Fixtures of the tournament tests: a real PostgreSQL (see :mod:`tests.tournament.pg`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .pg import TempPostgres, temp_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[TempPostgres]:
    """One throwaway PostgreSQL cluster for the whole session."""
    with temp_postgres() as pg:
        yield pg


@pytest.fixture
def pg_url(postgres: TempPostgres) -> Iterator[str]:
    """A URL of a new, empty database owned by the test role (dropped afterwards)."""
    name = postgres.new_database()
    try:
        yield postgres.url(name)
    finally:
        postgres.drop_database(name)
