"""Counts in words: ``count(1, "hand")`` is "1 hand", ``count(2, "hand")`` "2 hands" (an
examination read "1 planned hands not played yet" and "1 hands had a stand-in")."""

from __future__ import annotations


def plural(n: int | float, word: str, many: str = "") -> str:
    """``word`` or its plural (``many``, default ``word + "s"``) for ``n``."""
    return word if n == 1 else (many or word + "s")


def count(n: int | float, word: str, many: str = "") -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1."""
    return f"{n} {plural(n, word, many)}"
