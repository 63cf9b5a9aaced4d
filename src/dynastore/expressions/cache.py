"""Bounded LRU of successful parses: (kind, text) -> checked syntax tree. Failures are never cached.

Clients send the same expression strings over and over, so steady-state parse cost is one dict
lookup. The cached value is immutable and shared; per-request resolution builds new objects.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from dynastore.expressions.parser import parse
from dynastore.expressions.semantics import Checked, check_static

__all__ = ["ExpressionCache", "KeyTemplate", "KeyTemplates"]


class ExpressionCache:
    def __init__(self, maxsize: int = 1024) -> None:
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[tuple[str, str], Checked] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, kind: str, text: str) -> Checked:
        """Parse and statically check ``text`` as ``kind`` (a request parameter name), cached.

        Raises ExpressionError (not cached) for invalid expressions.
        """
        key = (kind, text)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry
            self.misses += 1
        checked = check_static(kind, parse(kind, text))
        with self._lock:
            self._entries[key] = checked
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return checked

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0


class KeyTemplate:
    """Which placeholders of a remembered KeyConditionExpression hold the partition key value and the sort key
    bounds (api/query.py explains when a template may be reused)."""

    __slots__ = ("hash_ref", "range_op", "range_refs")

    def __init__(self, hash_ref: str, range_op: str | None, range_refs: tuple[str, ...]) -> None:
        self.hash_ref = hash_ref
        self.range_op = range_op
        self.range_refs = range_refs


class KeyTemplates:
    """Bounded map of a Query's key-condition shape -> its KeyTemplate; emptied when full (shapes are few)."""

    def __init__(self, maxsize: int = 1024) -> None:
        self.maxsize = maxsize
        self._entries: dict[tuple[Any, ...], KeyTemplate] = {}

    def get(self, key: tuple[Any, ...]) -> KeyTemplate | None:
        return self._entries.get(key)

    def remember(self, key: tuple[Any, ...], template: KeyTemplate) -> None:
        if len(self._entries) >= self.maxsize:
            self._entries.clear()
        self._entries[key] = template
