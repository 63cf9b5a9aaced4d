"""The strong log of global tables with multi-region strong consistency (global_tables/strong_log.py) kept in etcd
(``--strong-etcd``; docs/global-tables.md "Multi-Region strong consistency"): an etcd cluster whose members span
the regions, so a commit, one etcd transaction, is acknowledged once a majority of the regions have it.

Each item's newest change is one etcd key, ``/dynastore/strong/<log id>/<record key>``; its mod revision is the
record's revision. A commit compares it with the revision the write was evaluated against (a missing key
compares as 0); ``changes_since`` reads the keys modified after a revision, in revision order. Reads are etcd's
linearizable reads. Calls go through the node's etcd client (replication/etcd_client.py: its own thread and
loop, endpoints rotated on failure).
"""

from __future__ import annotations

from typing import Any

from aetcd import rpc

from dynastore.global_tables.strong_log import StrongLogUnavailable
from dynastore.replication.etcd_client import CALL_TIMEOUT, EtcdClient, EtcdUnavailable

__all__ = ["EtcdStrongLog"]

PREFIX = b"/dynastore/strong/"


class EtcdStrongLog:
    """Records in etcd, through the node's etcd client (replication/etcd_client.py: its own thread and loop)."""

    def __init__(self, endpoints: list[tuple[str, int]]) -> None:
        self._client = EtcdClient(endpoints)

    async def read(self, log_id: str, key: bytes) -> tuple[int, bytes | None]:
        request = rpc.RangeRequest(key=_etcd_key(log_id, key))
        response = await self._run(lambda client: client.kvstub.Range(request, timeout=CALL_TIMEOUT))
        if not response.kvs:
            return 0, None
        kv = response.kvs[0]
        return int(kv.mod_revision), bytes(kv.value)

    async def commit(self, log_id: str, key: bytes, expected: int, value: bytes) -> int | None:
        etcd_key = _etcd_key(log_id, key)
        # A missing key compares as mod revision 0: ``expected`` 0 is "no record yet".
        compare = [rpc.Compare(key=etcd_key, result=rpc.Compare.EQUAL, target=rpc.Compare.MOD, mod_revision=expected)]
        success = [rpc.RequestOp(request_put=rpc.PutRequest(key=etcd_key, value=value))]
        request = rpc.TxnRequest(compare=compare, success=success)
        response = await self._run(lambda client: client.kvstub.Txn(request, timeout=CALL_TIMEOUT))
        return int(response.header.revision) if response.succeeded else None

    async def changes_since(self, log_id: str, revision: int) -> tuple[list[bytes], int]:
        prefix = _etcd_prefix(log_id)
        request = rpc.RangeRequest(
            key=prefix,
            range_end=_prefix_end(prefix),
            min_mod_revision=revision + 1,
            sort_order=rpc.RangeRequest.ASCEND,
            sort_target=rpc.RangeRequest.MOD,
        )
        response = await self._run(lambda client: client.kvstub.Range(request, timeout=CALL_TIMEOUT))
        return [bytes(kv.value) for kv in response.kvs], int(response.header.revision)

    async def drop(self, log_id: str) -> None:
        prefix = _etcd_prefix(log_id)
        request = rpc.DeleteRangeRequest(key=prefix, range_end=_prefix_end(prefix))
        await self._run(lambda client: client.kvstub.DeleteRange(request, timeout=CALL_TIMEOUT))

    async def _run(self, make: Any) -> Any:
        try:
            return await self._client.run(make)
        except EtcdUnavailable as e:  # (for a commit: its outcome is unknown)
            raise StrongLogUnavailable(str(e)) from e

    def close(self) -> None:
        self._client.close()


def _etcd_prefix(log_id: str) -> bytes:
    return PREFIX + log_id.encode() + b"/"


def _etcd_key(log_id: str, key: bytes) -> bytes:
    return _etcd_prefix(log_id) + key


def _prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])
