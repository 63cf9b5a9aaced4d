"""DynamoDB's reserved words (573 of them, from the Developer Guide), loaded from a package data file."""

from __future__ import annotations

from importlib import resources

__all__ = ["RESERVED_WORDS", "is_reserved"]


def _load() -> frozenset[str]:
    text = resources.files(__package__).joinpath("reserved_words.txt").read_text(encoding="utf-8")
    return frozenset(line.strip().upper() for line in text.splitlines() if line.strip())


RESERVED_WORDS: frozenset[str] = _load()


def is_reserved(name: str) -> bool:
    """Reserved words are matched case-insensitively (``status``, ``Status`` and ``STATUS``)."""
    return name.upper() in RESERVED_WORDS
