"""What --cluster accepts (replication/etcd_config.py parse_endpoints)."""

from __future__ import annotations

import pytest

from dynastore.replication.etcd_client import EtcdClient
from dynastore.replication.etcd_config import parse_endpoints


@pytest.mark.parametrize(
    ("spec", "endpoints"),
    [
        ("etcd://127.0.0.1:2379", [("127.0.0.1", 2379)]),
        ("127.0.0.1:2379", [("127.0.0.1", 2379)]),
        ("etcd://a:1,b:2, c:3", [("a", 1), ("b", 2), ("c", 3)]),
        ("etcd://etcd.example:2379/", [("etcd.example", 2379)]),
        (" etcd://h:5 ", [("h", 5)]),
    ],
)
def test_good_specs(spec: str, endpoints: list[tuple[str, int]]) -> None:
    assert parse_endpoints(spec) == endpoints


@pytest.mark.parametrize(
    "spec", ["", "etcd://", "etcd://host", "etcd://:2379", "etcd://host:", "etcd://host:port", "a:1,,b:2", "a:1,b"]
)
def test_bad_specs(spec: str) -> None:
    with pytest.raises(ValueError, match=r"expected etcd://HOST:PORT\[,HOST:PORT\.\.\.\], got "):
        parse_endpoints(spec)


def test_a_client_needs_an_endpoint() -> None:
    with pytest.raises(ValueError, match="no etcd endpoint"):
        EtcdClient([])
