"""The strong log of global tables with multi-region strong consistency (docs/global-tables.md "Multi-Region strong
consistency"): for every item of a table's replica set, its newest committed change, at a revision of one
sequence that orders every commit of the log.

A record's key is the item's key (its key attributes, JSON with sorted names: the same in every region, whatever
the replica's storage key there); its value is the change (global_tables/changes.py ``change_to_bytes``). A
commit names the revision of the item's record it was evaluated against (0: none) and succeeds only if that
record is still the newest: a write committed from another region in between fails the commit, which the write
path answers with ReplicatedWriteConflictException.

Two logs:

- replication/strong_log_etcd.py's ``EtcdStrongLog``: records in etcd (``--strong-etcd``), whose members span
  the regions: a commit is one etcd transaction comparing the record's mod revision, acknowledged once a
  majority of the members (of the regions) have it; reads are linearizable.
- ``LocalStrongLog``: records in this process, for replica sets whose regions are all served by this server
  (each region a namespace of the same store); the same rules, with nothing to wait for.

Errors: ``StrongLogUnavailable`` when the log cannot be reached or did not answer in time (for a commit: its
outcome is unknown).
"""

from __future__ import annotations

from typing import Protocol

import orjson

from dynastore.model.values import Item

__all__ = ["LocalStrongLog", "StrongLog", "StrongLogUnavailable", "record_key"]


class StrongLogUnavailable(Exception):
    """The strong log could not be reached, or did not answer in time."""


def record_key(key: Item) -> bytes:
    """The record key of the item whose key attributes are ``key``: the same bytes in every region."""
    return orjson.dumps(key, option=orjson.OPT_SORT_KEYS)


class StrongLog(Protocol):
    async def read(self, log_id: str, key: bytes) -> tuple[int, bytes | None]:
        """The revision of the item's newest record (0: none) and its value (linearizable)."""
        ...

    async def commit(self, log_id: str, key: bytes, expected: int, value: bytes) -> int | None:
        """Record ``value`` as the item's newest change if its newest record is still at revision ``expected``
        (0: it has none): the new record's revision, or None when another commit came first."""
        ...

    async def changes_since(self, log_id: str, revision: int) -> tuple[list[bytes], int]:
        """The values of the records committed after ``revision``, in the order committed, and the revision the
        log is at (linearizable: every commit acknowledged before the call is at or below it)."""
        ...

    async def drop(self, log_id: str) -> None:
        """Forget every record of the log (its replica set is gone)."""
        ...

    def close(self) -> None:
        """Release the connection to the log (at the server's stop)."""
        ...


class LocalStrongLog:
    """Records in this process (the regions of one server)."""

    def __init__(self) -> None:
        self._records: dict[str, dict[bytes, tuple[int, bytes]]] = {}
        self._revision = 0

    async def read(self, log_id: str, key: bytes) -> tuple[int, bytes | None]:
        record = self._records.get(log_id, {}).get(key)
        return (0, None) if record is None else record

    async def commit(self, log_id: str, key: bytes, expected: int, value: bytes) -> int | None:
        records = self._records.setdefault(log_id, {})
        current = records.get(key)
        if (0 if current is None else current[0]) != expected:
            return None
        self._revision += 1
        records[key] = (self._revision, value)
        return self._revision

    async def changes_since(self, log_id: str, revision: int) -> tuple[list[bytes], int]:
        newer = sorted(record for record in self._records.get(log_id, {}).values() if record[0] > revision)
        return [value for _, value in newer], self._revision

    async def drop(self, log_id: str) -> None:
        self._records.pop(log_id, None)
