"""Every node is a request router (docs/cluster.md "Every node routes"): the leader answers requests itself,
any other node forwards them to the leader (replication/forwarding.py); ``/dynastore/cluster`` is answered by the
node that receives it.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from typing import Any, Protocol

import orjson

from dynastore import messages
from dynastore.errors import ServiceUnavailable
from dynastore.protocol import prometheus
from dynastore.protocol.http_server import RequestHandler
from dynastore.protocol.metrics import METRICS_PATH, cluster_page
from dynastore.protocol.protocol import Headers, RawResponse
from dynastore.replication.forwarding import FORWARDED_HEADER, Forwarder, error_response
from dynastore.replication.lease import Lease
from dynastore.replication.replica_reads import ReplicaReads, is_eventual_read
from dynastore.replication.seeding import INDEX_HEADER, SECRET_HEADER
from dynastore.storage.kv import StorageError

__all__ = ["CLUSTER_PATH", "READS_PATH", "Router"]

CLUSTER_PATH = "/dynastore/cluster"
DIGEST_PATH = CLUSTER_PATH + "/digest"
IMAGE_PATH = CLUSTER_PATH + "/image"
READS_PATH = CLUSTER_PATH + "/reads"


class Leading(Protocol):
    """The leading dynastore's request handler and store (app.Dynastore)."""

    @property
    def protocol(self) -> RequestHandler: ...

    @property
    def kv(self) -> Committed: ...


class Committed(Protocol):
    @property
    def commit_seq(self) -> int: ...


class Node(Protocol):
    """What the router reads of its node (replication/node.py)."""

    role: str
    lease: Lease
    forwarded_writes: int

    @property
    def replica_reads(self) -> ReplicaReads | None: ...

    @property
    def leading(self) -> Leading | None: ...

    def leader_url(self) -> str | None: ...

    def leader_changed(self) -> asyncio.Event: ...

    def status(self) -> dict[str, Any]: ...

    def digest(self) -> dict[str, Any]: ...

    def image(self) -> tuple[bytes, int]: ...

    def charge_reads(self, report: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def fresh(self) -> bool: ...

    def barrier_needed(self) -> bool: ...

    async def catch_up_to_head(self) -> bool: ...


class Router:
    """The request handler of a cluster node (http_server.RequestHandler)."""

    def __init__(self, node: Node, secret: str, authenticated: bool) -> None:
        self._node = node
        self._secret = secret
        self._authenticated = authenticated  # --auth sigv4: a store image is given only for the cluster secret
        self.forwarder = Forwarder(node.leader_url, node.leader_changed)
        self.replica_reads = 0  # eventually consistent reads this node answered from its replica

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        node = self._node
        if path.startswith(CLUSTER_PATH):
            return self._admin(method, headers, path, body)
        app = node.leading
        if app is not None and node.role == "leader":
            if time.monotonic() > node.lease.valid_until:
                return error_response(ServiceUnavailable(messages.CLUSTER_LEASE_LAPSED))
            response = app.protocol.handle(method, headers, body, path)
            if not response.commit_seq:
                # What it read may include writes etcd has not committed yet (they are in the leader's store from
                # the moment they ran). Its answer waits until they are durable, and if they are taken back it is
                # answered as refused: nobody sees a write that then disappears (a linearizable read).
                response.commit_seq = app.kv.commit_seq
            return response
        response = RawResponse(0, b"")
        if node.replica_reads is not None and is_eventual_read(headers, body) and node.fresh():
            if not node.barrier_needed():
                self.replica_reads += 1
                return node.replica_reads.handle(method, headers, body, path)
            response.later = asyncio.ensure_future(self._read_after_barrier(method, path, headers, body))
            return response
        if path.split("?", 1)[0] == METRICS_PATH and not self._authenticated:
            # A follower's scrape shows the cluster as this node sees it (the leader's has the tables too); also
            # during an election, when there is no leader to ask.
            return RawResponse(200, cluster_page(node.status()), prometheus.CONTENT_TYPE)
        if FORWARDED_HEADER in headers:
            return error_response(ServiceUnavailable(messages.CLUSTER_NO_LEADER))  # it took this node for the leader
        node.forwarded_writes += 1
        response.later = asyncio.ensure_future(self.forwarder.forward(method, path, headers, body))
        return response

    async def _read_after_barrier(self, method: str, path: str, headers: Headers, body: bytes) -> RawResponse:
        """An eventually consistent read after this node forwarded a write: answered from the replica once it
        holds the log's head, else by the leader."""
        node = self._node
        if await node.catch_up_to_head():
            reads = node.replica_reads
            if reads is not None:
                self.replica_reads += 1
                return reads.handle(method, headers, body, path)
        return await self.forwarder.forward(method, path, headers, body)

    def _admin(self, method: str, headers: Headers, path: str, body: bytes) -> RawResponse:
        route = path.split("?", 1)[0].rstrip("/")
        if method == "POST" and route == READS_PATH:
            return self._reads(headers, body)
        if method != "GET" or route not in (CLUSTER_PATH, DIGEST_PATH, IMAGE_PATH):
            return _json(404, {"message": f"no such cluster endpoint: {method} {route}"})
        if route == IMAGE_PATH:
            return self._image(headers)
        state = self._node.digest() if route == DIGEST_PATH else self._node.status()
        return RawResponse(200, orjson.dumps(state), "application/json")

    def _refused(self, headers: Headers) -> RawResponse | None:
        """With authentication on, what one node asks of another needs the cluster's secret."""
        given = headers.get(SECRET_HEADER, "")
        if self._authenticated and (not self._secret or not hmac.compare_digest(given, self._secret)):
            return _json(403, {"message": "this endpoint answers only the cluster's nodes (its secret)"})
        return None

    def _reads(self, headers: Headers, body: bytes) -> RawResponse:
        refusal = self._refused(headers)
        if refusal is not None:
            return refusal
        try:
            report = orjson.loads(body)
            if not isinstance(report, list):
                raise ValueError("expected a list")
            return _json(200, self._node.charge_reads(report))
        except (ValueError, KeyError, TypeError) as e:
            return _json(400, {"message": f"not a read report: {e}"})
        except StorageError as e:
            return _json(503, {"message": str(e)})

    def _image(self, headers: Headers) -> RawResponse:
        refusal = self._refused(headers)
        if refusal is not None:
            return refusal
        try:
            image, index = self._node.image()
        except StorageError as e:
            return _json(503, {"message": f"no copy of the store can be made now: {e}"})
        return RawResponse(200, image, "application/octet-stream", [(INDEX_HEADER, str(index))])

    def close(self) -> None:
        self.forwarder.close()


def _json(status: int, body: Any) -> RawResponse:
    return RawResponse(status, orjson.dumps(body), "application/json")
