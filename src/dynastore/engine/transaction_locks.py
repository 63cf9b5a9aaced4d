"""The keys of transactions whose commit is not final yet (engine/transactions.py explains the model)."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable

from dynastore.storage.kv import KV
from dynastore.util.clock import Clock

__all__ = ["TransactionLocks"]


class TransactionLocks:
    """Storage keys written or checked by a TransactWriteItems whose commit is not final yet.

    A transaction registers its keys with the ``commit_seq`` of its KV commit; they are released once
    ``kv.durable_seq`` reaches it (and, with a hold configured, once the hold has passed). Checking costs one
    dict lookup, and nothing at all while no transaction is in flight.
    """

    __slots__ = ("_kv", "_clock", "_hold", "_owner", "_pending", "_ids")

    def __init__(self, kv: KV, clock: Clock, hold: float = 0.0) -> None:
        self._kv = kv
        self._clock = clock
        self._hold = hold
        self._owner: dict[bytes, int] = {}  # key -> id of the transaction holding it
        self._pending: deque[tuple[int, float, int, tuple[bytes, ...]]] = deque()  # (seq, release_at, id, keys)
        self._ids = itertools.count(1)

    @property
    def idle(self) -> bool:
        """True when no key may be locked (the fast path of every write)."""
        return not self._owner

    def is_locked(self, key: bytes) -> bool:
        owner = self._owner
        if key not in owner:
            return False
        self._release_finished()
        return key in owner

    def lock(self, keys: Iterable[bytes], seq: int) -> None:
        """Hold ``keys`` until commit ``seq`` is durable (plus the configured hold)."""
        held = tuple(keys)
        tid = next(self._ids)
        for key in held:
            self._owner[key] = tid
        release_at = self._clock.now() + self._hold if self._hold > 0 else 0.0
        self._pending.append((seq, release_at, tid, held))

    def locked_count(self) -> int:
        self._release_finished()
        return len(self._owner)

    def _release_finished(self) -> None:
        durable = self._kv.durable_seq
        now = self._clock.now() if self._hold > 0 else 0.0
        pending, owner = self._pending, self._owner
        while pending:
            seq, release_at, tid, keys = pending[0]
            if seq > durable or release_at > now:
                break
            pending.popleft()
            for key in keys:
                if owner.get(key) == tid:
                    del owner[key]
