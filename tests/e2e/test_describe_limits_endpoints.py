"""DescribeLimits and DescribeEndpoints end to end."""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.e2e.conftest import make_client
from tests.e2e.server_process import ServerProcess


class TestDescribeLimits:
    def test_default_quotas(self, ddb: Any) -> None:
        response = ddb.describe_limits()
        response.pop("ResponseMetadata")
        assert response == {
            "AccountMaxReadCapacityUnits": 80000,
            "AccountMaxWriteCapacityUnits": 80000,
            "TableMaxReadCapacityUnits": 40000,
            "TableMaxWriteCapacityUnits": 40000,
        }

    def test_extra_members_are_ignored(self, ddb: Any) -> None:
        assert ddb.describe_limits()["TableMaxReadCapacityUnits"] == 40000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class TestDescribeEndpoints:
    def test_address_of_a_server_on_a_fixed_port(self) -> None:
        """DynamoDB answers with its regional host name; a local server answers with host:port (a divergence)."""
        port = free_port()
        server = ServerProcess("--port", str(port))
        try:
            response = make_client(server.url).describe_endpoints()
            assert response["Endpoints"] == [{"Address": f"127.0.0.1:{port}", "CachePeriodInMinutes": 1440}]
        finally:
            server.stop()

    @pytest.mark.not_on_cluster(
        "a follower forwards DescribeEndpoints to the leader, which answers with its own address (docs/cluster.md)"
    )
    def test_address_of_a_server_on_port_zero(self, ddb: Any, endpoint: str) -> None:
        parsed = urlparse(endpoint)
        assert ddb.describe_endpoints()["Endpoints"] == [
            {"Address": f"{parsed.hostname}:{parsed.port}", "CachePeriodInMinutes": 1440}
        ]
