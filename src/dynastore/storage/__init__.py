"""Storage: the engine-neutral KV interface, its engines, the durability seam (durability.py) and its local
write-ahead log, the key layout, key/item codecs and group commit.

Only this package imports lmdb or sortedcontainers; the engine layer works against ``KV``.
"""

from __future__ import annotations

from dynastore.storage.group_commit import GroupCommitter
from dynastore.storage.kv import KV, DurabilityError, ReadTxn, StorageCorruptionError, StorageError, WriteTxn
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.memory_kv import MemoryKV

__all__ = [
    "KV",
    "DurabilityError",
    "GroupCommitter",
    "LmdbKV",
    "MemoryKV",
    "ReadTxn",
    "StorageCorruptionError",
    "StorageError",
    "WriteTxn",
]
