"""An item's version in a global table, and the conflict rule (docs/design.md "Global tables").

Every change of an item of a global table stamps its version in the write's own transaction: the hybrid clock's
stamp, the region where the write was made, and whether it deleted the item. The version of a deleted item is its
tombstone: it stays after the item is gone, so that an older write arriving late loses against it, and is purged
once older than the tombstone retention (far beyond the worst replication lag).

Stored under ``keyspace.version_key(item_key)`` as orjson ``[stamp, region, deleted]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from dynastore.storage import keyspace
from dynastore.storage.kv import ReadTxn, WriteTxn

__all__ = ["TOMBSTONE_RETENTION", "Version", "decode", "encode", "read", "stamp", "wins", "write"]

TOMBSTONE_RETENTION = 86400.0  # seconds a tombstone is kept by default (config: tombstone_retention_seconds)


@dataclass(frozen=True, slots=True)
class Version:
    """Who wrote an item last and when (``stamp``: hybrid_clock's; ``deleted``: a tombstone)."""

    stamp: int
    region: str
    deleted: bool


def wins(incoming: Version, local: Version | None) -> bool:
    """Whether a replicated change with version ``incoming`` replaces the local item: last writer wins, on the
    stamp, then the region's name (two regions never give the same stamp to one item's change otherwise)."""
    return local is None or (incoming.stamp, incoming.region) > (local.stamp, local.region)


def encode(version: Version) -> bytes:
    return orjson.dumps([version.stamp, version.region, version.deleted])


def decode(raw: bytes) -> Version:
    stamp, region, deleted = orjson.loads(raw)
    return Version(int(stamp), str(region), bool(deleted))


def read(txn: ReadTxn, item_key: bytes) -> Version | None:
    """The version of the item at ``item_key`` (its storage key), None when it has none."""
    raw = txn.get(keyspace.version_key(item_key))
    return None if raw is None else decode(raw)


def write(txn: WriteTxn, item_key: bytes, version: Version) -> None:
    txn.put(keyspace.version_key(item_key), encode(version))


def stamp(txn: WriteTxn, item_key: bytes, stamp: int, region: str, deleted: bool) -> None:
    """``write`` of the version (stamp, region, deleted) without making a Version (the write path's own)."""
    txn.put(keyspace.version_key(item_key), orjson.dumps([stamp, region, deleted]))
