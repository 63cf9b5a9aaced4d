"""A bounded cache of parsed statements, keyed by the statement's text (successes only).

A dynastore keeps one among its request-side services (api/services.py): a client repeating a statement with
new parameters parses it once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from dynastore.partiql.parser import ParsedStatement, parse

__all__ = ["StatementCache"]


class StatementCache:
    __slots__ = ("maxsize", "hits", "misses", "_entries", "_lock")

    def __init__(self, maxsize: int = 1024) -> None:
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, ParsedStatement] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, text: str) -> ParsedStatement:
        """The parsed statement; raises PartiQLSyntaxError (not cached) for a statement DynamoDB refuses."""
        with self._lock:
            entry = self._entries.get(text)
            if entry is not None:
                self._entries.move_to_end(text)
                self.hits += 1
                return entry
            self.misses += 1
        parsed = parse(text)
        if self.maxsize > 0:
            with self._lock:
                self._entries[text] = parsed
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
        return parsed
