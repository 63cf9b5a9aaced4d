"""Eventually consistent reads served by a follower from its own replica (docs/cluster.md "Read paths").

GetItem, Query, Scan and BatchGetItem without ``ConsistentRead: true`` are answered by the node that receives
them, from its store as the apply loop left it, by a dynastore engine of its own over a read-only view of that
store (the same request path, validation, expressions, pages and capacity accounting as the leader's). Its
catalog is read again whenever an applied log entry changed a catalog record (a table created, updated or
deleted on the leader). Nothing the engine does here can write: the view refuses writes and reports itself not
writable, which the engine treats as a read-only store (statistics and capacity records are the leader's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from dynastore.app import authenticator, build_context, request_services
from dynastore.config import Config
from dynastore.engine.capacity.state import Capacity
from dynastore.protocol import dispatch
from dynastore.protocol.protocol import Headers, Protocol, RawResponse
from dynastore.security.caller import AnonymousCallers
from dynastore.storage.catalog import Catalog
from dynastore.storage.keyspace import META_TAG
from dynastore.storage.kv import KV, BackgroundSync, HeldFile, LossListener, ReadTxn, StorageUnavailableError, WriteTxn

__all__ = ["ReplicaReads", "changes_catalog", "is_eventual_read"]

_READ_TARGETS = frozenset(f"DynamoDB_20120810.{name}" for name in ("GetItem", "Query", "Scan", "BatchGetItem"))
# A strongly consistent read anywhere in the body (BatchGetItem names it per table) goes to the leader. A string
# value that happens to contain this text sends an eventual read to the leader too, which is only slower.
_CONSISTENT = re.compile(rb'"ConsistentRead"\s*:\s*true')


def is_eventual_read(headers: Headers, body: bytes) -> bool:
    """Whether this request is a read a replica may answer: no strongly consistent read in it, and no index read
    (a GSI's entries are written by the leader's propagation after the item, as later log entries, and on one
    server a GSI read waits for that propagation: the leader answers them, as the single server does)."""
    return (
        headers.get("x-amz-target", "") in _READ_TARGETS
        and _CONSISTENT.search(body) is None
        and b'"IndexName"' not in body
    )


def changes_catalog(operations: list[tuple[bytes, bytes | None]]) -> bool:
    """Whether applying these operations changes a catalog record."""
    return any(key[:1] == META_TAG for key, _ in operations)


class _ReadOnlyView:
    """A store as the replica's engine sees it: every read of the replica, no write."""

    def __init__(self, store: KV) -> None:
        self._store = store

    def read(self) -> AbstractContextManager[ReadTxn]:
        return self._store.read()

    def held_file(self) -> HeldFile | None:
        return None

    def snapshot(self) -> AbstractContextManager[ReadTxn]:
        return self._store.read()

    def write(self, frees_space: bool = False) -> AbstractContextManager[WriteTxn]:
        return _refused()

    @property
    def writable(self) -> bool:
        return False

    def watch_losses(self, listener: LossListener) -> None:
        pass

    def recover(self, error: BaseException) -> None:
        pass

    def retry_writes(self) -> bool:
        return False

    @property
    def commit_seq(self) -> int:
        return 0

    @property
    def durable_seq(self) -> int:
        return 0

    def enable_batching(self, on_open: Callable[[], None]) -> None:
        pass

    def seal(self) -> None:
        pass

    def background_sync(self) -> BackgroundSync | None:
        return None

    def flush(self) -> int:
        return 0

    def close(self) -> None:
        pass


@contextmanager
def _refused() -> Iterator[WriteTxn]:
    raise StorageUnavailableError("a replica's store changes only by applying the cluster's log")
    yield  # pragma: no cover - never reached: a generator, so that the refusal happens on entering


class ReplicaReads:
    """The request handler for eventually consistent reads over ``store`` (a follower's replica)."""

    def __init__(self, config: Config, store: KV) -> None:
        view = _ReadOnlyView(store)
        self.catalog = Catalog.load(view, config)
        engine = build_context(config, view, self.catalog)
        self._engine = engine
        self.protocol = Protocol(
            dispatch.bind(engine, request_services(config)),
            region=config.region,
            commit_seq=lambda: 0,
            account_id=config.account_id,
        )
        self.protocol.authenticator = authenticator(config)
        self.protocol.anonymous = AnonymousCallers(config.account_id, config.region, shared=config.shared_namespace)

    @property
    def capacity(self) -> Capacity:
        """The partition buckets the reads this node answers are metered against."""
        return self._engine.capacity

    def catalog_changed(self) -> None:
        """An applied entry changed a catalog record: read the tables again."""
        self.catalog.reload()
        self._engine.shards.clear()

    def handle(self, method: str, headers: Headers, body: bytes, path: str) -> RawResponse:
        return self.protocol.handle(method, headers, body, path)
