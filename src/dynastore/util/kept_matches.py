"""Texts a regular expression fully matched, kept so that the next test of the same text is a set look-up.

A request names the same few things in request after request (its table, its expressions' ``#name`` and
``:value`` keys), and a regular expression's match costs about ten times a set look-up. Only texts that matched are
kept, up to a bound: a stream of made-up texts costs a match each, and empties the set now and then.
"""

from __future__ import annotations

import re

__all__ = ["KEPT_MATCHES_MAX", "KeptMatches"]

KEPT_MATCHES_MAX = 4096


class KeptMatches:
    """``matches(text)``: whether ``pattern`` matches the whole of ``text``."""

    __slots__ = ("_fullmatch", "_kept", "_limit")

    def __init__(self, pattern: str, limit: int = KEPT_MATCHES_MAX) -> None:
        self._fullmatch = re.compile(pattern).fullmatch
        self._kept: set[str] = set()
        self._limit = limit

    def matches(self, text: str) -> bool:
        if text in self._kept:
            return True
        if self._fullmatch(text) is None:
            return False
        if len(self._kept) >= self._limit:
            self._kept.clear()
        self._kept.add(text)
        return True

    def __len__(self) -> int:
        return len(self._kept)
