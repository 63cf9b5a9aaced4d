"""A follower's replica of the store (docs/design.md "Replication"): the store over a following
``ReplicatedLog``, the apply step of one log entry, the engine that answers eventually consistent reads from it,
and what other nodes fetch of it (a copy to seed from, a digest to compare)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from dynastore.config import Config
from dynastore.replication.etcd_client import EtcdClient
from dynastore.replication.replica_reads import ReplicaReads, changes_catalog
from dynastore.replication.replicated_log import ReplicatedLog, read_applied
from dynastore.replication.seeding import image_of
from dynastore.storage.durability import decode_batch
from dynastore.storage.kv import KV
from dynastore.storage.lmdb_kv import LmdbKV

__all__ = ["Replica", "digest_of"]

_DIGEST_END = b"\xff" * 512  # above every key of the store


class Replica:
    """The store in ``config.data_dir`` as a follower holds it. ``on_durable(index)``: its file holds the log up
    to ``index`` durably (after a checkpoint)."""

    def __init__(self, config: Config, etcd: EtcdClient, on_durable: Callable[[int], None]) -> None:
        data_dir = str(config.data_dir)
        self.log = ReplicatedLog(data_dir, etcd, on_applied=on_durable)
        self.store = LmdbKV(config.data_dir, durable_log=self.log)
        self.applied_index = read_applied(data_dir)  # the newest entry in the store
        self.reads = ReplicaReads(config, self.store)

    def apply(self, index: int, payload: bytes) -> None:
        """Write log entry ``index`` into the store, in one storage transaction."""
        operations = decode_batch(memoryview(payload))
        if operations:
            self.log.expect(index)
            with self.store.write() as txn:
                for key, value in operations:
                    if value is None:
                        txn.delete(key)
                    else:
                        txn.put(key, value)
            if changes_catalog(operations):
                self.reads.catalog_changed()
        self.applied_index = index

    def image(self) -> tuple[bytes, int]:
        """A copy of the store and the log index it holds: the store's file holds exactly the applied entries
        (each is committed to it on its own)."""
        return image_of(self.store), self.applied_index

    def close(self) -> None:
        self.store.close()


def digest_of(store: KV) -> str:
    """A hash of every key and value of ``store``, in key order."""
    sha = hashlib.sha256()
    with store.read() as txn:
        for key, value in txn.iter_range(b"", _DIGEST_END):
            sha.update(len(key).to_bytes(4, "big") + key + len(value).to_bytes(4, "big") + value)
    return sha.hexdigest()
