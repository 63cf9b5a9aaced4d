"""GET /metrics on a real server: after some requests, the counters, latency histograms, a throttled request, item
counts and the server's own numbers read back from the Prometheus text format; --metrics-port and --no-metrics."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ADMIN, create_provisioned_table_with_gsi, error_of, make_client
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.prometheus_text import Series, parse, value

_METRICS_LINE = re.compile(r"dynastore metrics on (http://[\d.]+:\d+/metrics)")


server = server_fixture("--manual-clock", "--metrics-port", "0", data_dir=True)


@pytest.fixture(scope="module")
def own_port(server: ServerProcess) -> str:
    """The --metrics-port address: the line after "listening on" on stdout."""
    assert server.process.stdout is not None
    match = _METRICS_LINE.search(server.process.stdout.readline())
    assert match is not None
    return match.group(1)


def scrape(url: str) -> tuple[dict[Series, float], dict[str, str]]:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        return parse(response.read().decode())


def provisioned_table(ddb: Any) -> str:
    return create_provisioned_table_with_gsi(ddb, read=1, write=1)


def spend_burst(server: ServerProcess, table: str) -> None:
    request = urllib.request.Request(
        f"{server.url}/dynastore/partitions/{table}", json.dumps({"spend_burst": True}).encode(), ADMIN
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def advance(server: ServerProcess, seconds: float) -> None:
    request = urllib.request.Request(f"{server.url}/dynastore/clock", json.dumps({"advance": seconds}).encode(), ADMIN)
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def test_metrics_after_requests(server: ServerProcess, own_port: str) -> None:
    ddb = make_client(server.url)
    name = provisioned_table(ddb)
    spend_burst(server, name)  # one second of 1 WCU left and no burst credit; the clock stands still
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "g": {"S": "x"}})
    assert error_of(lambda: ddb.put_item(TableName=name, Item={"pk": {"S": "b"}}))[0] == (
        "ProvisionedThroughputExceededException"
    )
    advance(server, 2.0)
    ddb.put_item(TableName=name, Item={"pk": {"S": "b"}, "g": {"S": "y"}})
    for _ in range(3):
        ddb.get_item(TableName=name, Key={"pk": {"S": "a"}})  # eventually consistent: half a unit each
        advance(server, 1.0)
    assert error_of(lambda: ddb.get_item(TableName=name, Key={"pk": {"N": "1"}}))[0] == "ValidationException"
    values, types = scrape(f"{server.url}/metrics")
    assert scrape(own_port)[1] == types  # the same page on its own port

    assert types["dynastore_requests_total"] == "counter"
    assert types["dynastore_request_duration_seconds"] == "histogram"
    assert value(values, "dynastore_requests_total", operation="CreateTable", outcome="ok") == 1
    assert value(values, "dynastore_requests_total", operation="PutItem", outcome="ok") == 2
    assert value(values, "dynastore_requests_total", operation="PutItem", outcome="throttled") == 1
    assert value(values, "dynastore_requests_total", operation="GetItem", outcome="ok") == 3
    assert value(values, "dynastore_requests_total", operation="GetItem", outcome="ValidationException") == 1
    # Histogram buckets are cumulative and end with +Inf, which holds every request of the operation.
    buckets = sorted(
        (float(dict(labels)["le"]), v)
        for (metric, labels), v in values.items()
        if metric == "dynastore_request_duration_seconds_bucket" and dict(labels)["operation"] == "GetItem"
    )
    assert buckets[-1] == (float("inf"), 4)
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)
    assert value(values, "dynastore_request_duration_seconds_count", operation="GetItem") == 4
    assert value(values, "dynastore_request_duration_seconds_count", operation="PutItem") == 3

    table, index = {"table": name, "index": ""}, {"table": name, "index": "by_g"}
    assert value(values, "dynastore_consumed_write_capacity_units_total", **table) == 2
    assert value(values, "dynastore_consumed_write_capacity_units_total", **index) == 2
    assert value(values, "dynastore_consumed_read_capacity_units_total", **table) == 1.5
    assert value(values, "dynastore_throttled_requests_total", kind="write", **table) == 1
    assert value(values, "dynastore_throttled_requests_total", kind="read", **table) == 0
    assert value(values, "dynastore_table_items", table=name) == 2
    assert value(values, "dynastore_wal_sync_duration_seconds_count") >= 1
    assert value(values, "dynastore_wal_sync_group_size_sum") >= 3  # the table, two items (and their GSI entries)
    assert value(values, "dynastore_storage_bytes") > 0
    assert value(values, "dynastore_open_connections") >= 1  # the client's
    assert (
        value(values, "dynastore_gsi_propagation_lag_seconds_count")
        + value(values, "dynastore_gsi_propagation_backlog")
        == 2
    )


def test_the_metrics_port_serves_nothing_else(own_port: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(own_port.replace("/metrics", "/"), timeout=10)
    refused.value.close()
    assert refused.value.code == 404


def test_no_metrics_serves_no_page(tmp_path: Path) -> None:
    process = ServerProcess("--no-metrics", data_dir=tmp_path)
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{process.url}/metrics", timeout=10)
        refused.value.close()
        assert refused.value.code == 404
    finally:
        process.stop()
