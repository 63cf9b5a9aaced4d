"""Every node is a request router (docs/cluster.md "Every node routes"): the leader answers requests itself,
any other node forwards them to the leader (replication/forwarding.py); ``/dynastore/cluster`` is answered by the
node that receives it.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import orjson

from dynastore import messages
from dynastore.errors import ServiceUnavailable
from dynastore.protocol.protocol import Headers, RawResponse
from dynastore.replication.forwarding import Forwarder, error_response

if TYPE_CHECKING:
    from dynastore.replication.node import ClusterNode

__all__ = ["CLUSTER_PATH", "Router"]

CLUSTER_PATH = "/dynastore/cluster"
DIGEST_PATH = CLUSTER_PATH + "/digest"


class Router:
    """The request handler of a cluster node (http_server.RequestHandler)."""

    def __init__(self, node: ClusterNode) -> None:
        self._node = node
        self.forwarder = Forwarder(node.leader_url, node.leader_changed)

    def handle(self, method: str, headers: Headers, body: bytes, path: str = "/") -> RawResponse:
        node = self._node
        if path.startswith(CLUSTER_PATH):
            return self._admin(method, path)
        app = node.app
        if app is not None and node.role == "leader":
            if time.monotonic() > node.lease_valid_until:
                return error_response(ServiceUnavailable(messages.CLUSTER_LEASE_LAPSED))
            return app.protocol.handle(method, headers, body, path)
        response = RawResponse(0, b"")
        response.later = asyncio.ensure_future(self.forwarder.forward(method, path, headers, body))
        return response

    def _admin(self, method: str, path: str) -> RawResponse:
        route = path.split("?", 1)[0].rstrip("/")
        if method != "GET" or route not in (CLUSTER_PATH, DIGEST_PATH):
            body = orjson.dumps({"message": f"no such cluster endpoint: {method} {route}"})
            return RawResponse(404, body, "application/json")
        state = self._node.digest() if route == DIGEST_PATH else self._node.status()
        return RawResponse(200, orjson.dumps(state), "application/json")

    def close(self) -> None:
        self.forwarder.close()
