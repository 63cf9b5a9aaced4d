"""protocol/metrics.py: the value of every metric, through a dynastore driven without a socket (app.py)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.engine import indexes
from dynastore.protocol.connections import ConnectionLimits, Registry
from dynastore.protocol.metrics import OTHER, RequestMetrics, cluster_page, directory_bytes, outcome_of
from dynastore.protocol.protocol import MetricsEndpoint
from dynastore.util.clock import ManualClock
from tests.prometheus_text import Series, parse, value

HEADERS = {
    "content-type": "application/x-amz-json-1.0",
    "authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host, Signature=ab",
    "x-amz-date": "20260101T000000Z",
}
TABLE = {
    "TableName": "things",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "g", "AttributeType": "S"},
    ],
    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        }
    ],
}


@pytest.fixture
def app() -> Iterator[Dynastore]:
    dynastore = Dynastore(Config(in_memory=True, manual_clock=True, clock=ManualClock()))
    try:
        yield dynastore
    finally:
        dynastore.close()


def call(app: Dynastore, operation: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    headers = {**HEADERS, "x-amz-target": f"DynamoDB_20120810.{operation}"}
    response = app.protocol.handle("POST", headers, orjson.dumps(body))
    return response.status, orjson.loads(response.body)


def scrape(app: Dynastore) -> dict[Series, float]:
    response = app.protocol.handle("GET", {}, b"", "/metrics")
    assert response.status == 200
    assert response.content_type == "text/plain; version=0.0.4; charset=utf-8"
    return parse(response.body.decode())[0]


def test_requests_are_counted_by_operation_and_outcome(app: Dynastore) -> None:
    assert call(app, "CreateTable", TABLE)[0] == 200
    assert call(app, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}})[0] == 200
    assert call(app, "GetItem", {"TableName": "nothing", "Key": {"pk": {"S": "a"}}})[0] == 400
    assert call(app, "GetItem", {"TableName": "things"})[0] == 400
    headers = {**HEADERS, "x-amz-target": "DynamoDB_20120810.NoSuchThing"}
    assert app.protocol.handle("POST", headers, b"{}").status == 400
    assert app.protocol.handle("GET", {}, b"").status == 200  # the health check
    assert app.protocol.handle("PUT", {}, b"x").status == 404  # DynamoDB's bare 404
    assert app.protocol.handle("GET", {}, b"", "/dynastore/partitions/nothing").status == 404  # an own endpoint
    values = scrape(app)
    assert value(values, "dynastore_requests_total", operation="CreateTable", outcome="ok") == 1
    assert value(values, "dynastore_requests_total", operation="GetItem", outcome="ok") == 1
    assert value(values, "dynastore_requests_total", operation="GetItem", outcome="ResourceNotFoundException") == 1
    assert value(values, "dynastore_requests_total", operation="GetItem", outcome="ValidationException") == 1
    assert value(values, "dynastore_requests_total", operation=OTHER, outcome="UnknownOperationException") == 2
    assert value(values, "dynastore_requests_total", operation=OTHER, outcome="client_error") == 1
    assert value(values, "dynastore_requests_total", operation=OTHER, outcome="ok") == 1
    requests = [v for (name, _), v in values.items() if name == "dynastore_requests_total"]
    assert sum(requests) == 8  # the scrape itself is not counted
    assert value(values, "dynastore_request_duration_seconds_count", operation="GetItem") == 3
    assert value(values, "dynastore_request_duration_seconds_bucket", operation="GetItem", le="+Inf") == 3
    assert value(values, "dynastore_request_duration_seconds_bucket", operation="GetItem", le="10") == 3
    assert value(values, "dynastore_request_duration_seconds_sum", operation="GetItem") > 0


def test_streams_requests_are_counted_under_their_operation(app: Dynastore) -> None:
    headers = {**HEADERS, "x-amz-target": "DynamoDBStreams_20120810.ListStreams"}
    assert app.protocol.handle("POST", headers, b"{}").status == 200
    values = scrape(app)
    assert value(values, "dynastore_requests_total", operation="ListStreams", outcome="ok") == 1


def test_capacity_and_throttling_are_counted_per_table_and_index(app: Dynastore) -> None:
    assert call(app, "CreateTable", TABLE)[0] == 200
    app.engine.capacity.spend_burst(app.engine.capacity.find("things"))  # one second of 1 WCU left, no burst
    item = {"pk": {"S": "a"}, "g": {"S": "x"}}
    assert call(app, "PutItem", {"TableName": "things", "Item": item})[0] == 200
    status, body = call(app, "PutItem", {"TableName": "things", "Item": item})  # the clock stands still
    assert (status, body["__type"].rsplit("#", 1)[1]) == (400, "ProvisionedThroughputExceededException")
    assert call(app, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}, "ConsistentRead": True})[0] == 200
    values = scrape(app)
    table, index = {"table": "things", "index": ""}, {"table": "things", "index": "by_g"}
    assert value(values, "dynastore_consumed_write_capacity_units_total", **table) == 1
    assert value(values, "dynastore_consumed_write_capacity_units_total", **index) == 1
    assert value(values, "dynastore_consumed_read_capacity_units_total", **table) == 1
    assert value(values, "dynastore_consumed_read_capacity_units_total", **index) == 0
    assert value(values, "dynastore_throttled_requests_total", kind="write", **table) == 1
    assert value(values, "dynastore_throttled_requests_total", kind="read", **table) == 0
    assert value(values, "dynastore_throttled_requests_total", kind="write", **index) == 0
    assert value(values, "dynastore_requests_total", operation="PutItem", outcome="throttled") == 1
    assert value(values, "dynastore_requests_total", operation="PutItem", outcome="ok") == 1


def test_item_counts_sizes_and_the_gsi_lag_come_from_the_catalog_and_the_change_log(app: Dynastore) -> None:
    assert call(app, "CreateTable", {**TABLE, "TableName": "other"})[0] == 200
    assert call(app, "CreateTable", TABLE)[0] == 200
    app.engine.capacity.spend_burst(app.engine.capacity.find("things"))
    values = scrape(app)
    assert value(values, "dynastore_table_items", table="things") == 0
    assert value(values, "dynastore_gsi_propagation_lag_seconds_count") == 0
    assert math.isnan(value(values, "dynastore_gsi_propagation_lag_seconds", quantile="0.5"))  # no sample yet
    for key in ("a", "b"):
        app.engine.config.clock.advance(1.0)  # type: ignore[attr-defined]
        item = {"pk": {"S": key}, "g": {"S": "x"}}
        assert call(app, "PutItem", {"TableName": "things", "Item": item})[0] == 200
    assert value(scrape(app), "dynastore_gsi_propagation_backlog") == 2
    while indexes.propagate(app.engine):
        pass
    values = scrape(app)
    assert value(values, "dynastore_table_items", table="things") == 2
    assert value(values, "dynastore_table_items", table="other") == 0
    assert value(values, "dynastore_table_size_bytes", table="things") == 2 * (2 + 1 + 1 + 1)  # pk a, g x
    assert value(values, "dynastore_gsi_propagation_backlog") == 0
    assert value(values, "dynastore_gsi_propagation_lag_seconds_count") == 2
    assert value(values, "dynastore_gsi_propagation_lag_seconds_sum") > 0
    assert value(values, "dynastore_gsi_propagation_lag_seconds", quantile="0.99") > 0
    assert ("dynastore_storage_bytes", ()) not in values  # in memory: no files
    assert value(values, "dynastore_open_connections") == 0


def test_a_deleted_table_leaves_the_capacity_series(app: Dynastore) -> None:
    assert call(app, "CreateTable", TABLE)[0] == 200
    assert call(app, "GetItem", {"TableName": "things", "Key": {"pk": {"S": "a"}}})[0] == 200
    assert ("dynastore_consumed_read_capacity_units_total", (("index", ""), ("table", "things"))) in scrape(app)
    assert call(app, "DeleteTable", {"TableName": "things"})[0] == 200
    values = scrape(app)
    assert not [s for s in values if s[0].startswith("dynastore_consumed_")]
    assert ("dynastore_table_items", (("table", "things"),)) not in values


def test_syncs_and_open_connections_are_reported(app: Dynastore) -> None:
    assert app.metrics is not None
    app.metrics.syncs.synced(0.003, 4)
    registry = Registry(ConnectionLimits(), descriptors=1 << 20)
    registry.open.update({object(), object()})  # type: ignore[arg-type]
    app.metrics.watch_connections(registry)
    values = scrape(app)
    assert value(values, "dynastore_wal_sync_duration_seconds_count") == 1
    assert value(values, "dynastore_wal_sync_duration_seconds_bucket", le="0.0025") == 0
    assert value(values, "dynastore_wal_sync_duration_seconds_bucket", le="0.005") == 1
    assert value(values, "dynastore_wal_sync_group_size_bucket", le="2") == 0
    assert value(values, "dynastore_wal_sync_group_size_bucket", le="4") == 1
    assert value(values, "dynastore_wal_sync_group_size_sum") == 4
    assert value(values, "dynastore_open_connections") == 2


def test_the_storage_size_is_the_data_directory_s_files(tmp_path: Path) -> None:
    (tmp_path / "wal").mkdir()
    (tmp_path / "data.mdb").write_bytes(b"x" * 100)
    (tmp_path / "wal" / "0001").write_bytes(b"y" * 23)
    assert directory_bytes(tmp_path) == 123
    assert directory_bytes(tmp_path / "missing") == 0
    dynastore = Dynastore(Config(data_dir=tmp_path / "data"))
    try:
        values = scrape(dynastore)
        assert value(values, "dynastore_storage_bytes") == directory_bytes(tmp_path / "data") > 0
    finally:
        dynastore.close()


def test_without_metrics_nothing_is_served_or_counted() -> None:
    dynastore = Dynastore(Config(in_memory=True, metrics=False))
    try:
        assert dynastore.metrics is None and dynastore.protocol.metrics is None
        assert dynastore.protocol.handle("GET", {}, b"", "/metrics").status == 404
    finally:
        dynastore.close()


def test_other_methods_on_metrics_are_refused_and_the_metrics_port_serves_only_metrics(app: Dynastore) -> None:
    response = app.protocol.handle("POST", {}, b"", "/metrics")
    assert (response.status, dict(response.headers)["Allow"]) == (405, "GET")
    assert app.metrics is not None
    endpoint = MetricsEndpoint(app.metrics)
    assert endpoint.handle("GET", {}, b"", "/metrics?x=1").status == 200
    assert endpoint.handle("GET", {}, b"", "/").status == 404
    assert endpoint.handle("POST", HEADERS, b"{}", "/").status == 404


@pytest.mark.parametrize(
    ("error_type", "status", "outcome"),
    [
        (None, 200, "ok"),
        ("ValidationException", 400, "ValidationException"),
        ("ConditionalCheckFailedException", 400, "ConditionalCheckFailedException"),
        ("ProvisionedThroughputExceededException", 400, "throttled"),
        ("ThrottlingException", 400, "throttled"),
        ("RequestLimitExceeded", 400, "throttled"),
        ("InternalServerError", 500, "server_error"),
        ("ServiceUnavailable", 503, "server_error"),
        (None, 404, "client_error"),
    ],
)
def test_outcomes(error_type: str | None, status: int, outcome: str) -> None:
    assert outcome_of(error_type, status) == outcome


class FakeDurability:
    def __init__(self) -> None:
        self.durable_seq = 0
        self.waiting: list[tuple[int, Callable[[BaseException | None], None]]] = []

    def when_durable(self, seq: int, callback: Callable[[BaseException | None], None]) -> None:
        self.waiting.append((seq, callback))


def test_a_write_is_timed_until_it_is_durable() -> None:
    metrics = RequestMetrics(["PutItem"])
    durability = metrics.durability = FakeDurability()
    metrics.observe("DynamoDB_20120810.PutItem", None, 200, 5, time.perf_counter() - 1.0)
    stats = metrics._stats["PutItem"]
    assert stats.outcomes == {"ok": 1} and stats.latency.count == 0  # not durable yet
    (seq, callback) = durability.waiting.pop()
    assert seq == 5
    callback(None)
    assert stats.latency.count == 1 and stats.latency.sum >= 1.0
    durability.durable_seq = 6
    metrics.observe("DynamoDB_20111205.PutItem", None, 200, 6, time.perf_counter())  # durable already
    assert stats.latency.count == 2 and not durability.waiting


def test_writes_waiting_for_their_sync_share_one_waiter() -> None:
    metrics = RequestMetrics(["PutItem"])
    durability = metrics.durability = FakeDurability()
    for seq in (1, 2, 3):
        metrics.observe("DynamoDB_20120810.PutItem", None, 200, seq, time.perf_counter())
    stats = metrics._stats["PutItem"]
    assert [seq for seq, _ in durability.waiting] == [1]
    durability.durable_seq = 2  # the sync made 1 and 2 durable; 3 committed after it began
    durability.waiting.pop()[1](None)
    assert stats.latency.count == 2
    assert [seq for seq, _ in durability.waiting] == [3]  # the rest wait for the last of them
    metrics.observe("DynamoDB_20120810.PutItem", None, 200, 4, time.perf_counter())
    assert len(durability.waiting) == 1  # still one waiter
    durability.waiting.pop()[1](OSError("the sync failed"))  # 3 is lost: settled, timed, 4 waits on
    assert stats.latency.count == 3
    assert [seq for seq, _ in durability.waiting] == [4]
    durability.durable_seq = 4
    durability.waiting.pop()[1](None)
    assert stats.latency.count == 4 and not durability.waiting and not metrics._unsynced


def test_writes_timed_out_of_commit_order_are_all_settled() -> None:
    metrics = RequestMetrics(["PutItem"])
    durability = metrics.durability = FakeDurability()
    for seq in (5, 12, 7):
        metrics.observe("DynamoDB_20120810.PutItem", None, 200, seq, time.perf_counter())
    durability.durable_seq = 8  # 5 and 7 are durable, 12 is not
    durability.waiting.pop()[1](None)
    assert metrics._stats["PutItem"].latency.count == 1  # 7 waits behind 12, timed with it
    assert [seq for seq, _ in durability.waiting] == [12]
    durability.durable_seq = 12
    durability.waiting.pop()[1](None)
    assert metrics._stats["PutItem"].latency.count == 3 and not durability.waiting


def test_the_point_in_time_storage_of_each_table_is_reported(app: Dynastore) -> None:
    import asyncio

    from dynastore.engine import continuous_backups
    from tests.unit.engine.pitr_stand_in import use_memory_images

    use_memory_images(app.engine)
    assert call(app, "CreateTable", TABLE)[0] == 200
    assert call(app, "PutItem", {"TableName": "things", "Item": {"pk": {"S": "a"}, "g": {"S": "x"}}})[0] == 200
    values = scrape(app)
    assert not [s for s in values if s[0] == "dynastore_point_in_time_bytes"]  # recovery is off
    spec = {"PointInTimeRecoveryEnabled": True}
    body = {"TableName": "things", "PointInTimeRecoverySpecification": spec}
    assert call(app, "UpdateContinuousBackups", body)[0] == 200
    asyncio.run(continuous_backups.take_due_bases(app.engine))
    assert call(app, "PutItem", {"TableName": "things", "Item": {"pk": {"S": "b"}, "g": {"S": "y"}}})[0] == 200
    continuous_backups.maintain(app.engine)  # counts the records written since the base
    values = scrape(app)
    assert value(values, "dynastore_point_in_time_bytes", table="things", kind="bases") > 0
    assert value(values, "dynastore_point_in_time_bytes", table="things", kind="log") > 0


# GET /dynastore/cluster of node n2, a follower that applied up to 95 of 100; n3 last published 90.
CLUSTER_STATUS = {
    "node": "n2",
    "role": "follower",
    "leader": "n1",
    "leaderUrl": "http://10.0.0.1:8000",
    "appliedIndex": 95,
    "logHead": 100,
    "leaderChanges": 3,
    "nodes": [
        {"node": "n1", "url": "http://10.0.0.1:8000", "appliedIndex": 100},
        {"node": "n2", "url": "http://10.0.0.2:8000", "appliedIndex": 93},
        {"node": "n3", "url": "http://10.0.0.3:8000", "appliedIndex": 90},
    ],
}


def test_a_cluster_node_reports_leadership_applied_indexes_and_lag(app: Dynastore) -> None:
    assert app.metrics is not None
    app.metrics.cluster_status = lambda: CLUSTER_STATUS
    values = scrape(app)
    assert value(values, "dynastore_cluster_leader") == 0
    assert value(values, "dynastore_cluster_leader_known") == 1
    assert value(values, "dynastore_cluster_leader_changes_total") == 3
    assert value(values, "dynastore_cluster_log_head_index") == 100
    assert value(values, "dynastore_cluster_log_entries") == 10  # etcd keeps the log from n3's 90 on
    applied = {node: value(values, "dynastore_cluster_applied_index", node=node) for node in ("n1", "n2", "n3")}
    assert applied == {"n1": 100, "n2": 95, "n3": 90}  # n2's own index is its newest, not the one it published
    lag = {node: value(values, "dynastore_cluster_replication_lag_entries", node=node) for node in ("n1", "n2", "n3")}
    assert lag == {"n1": 0, "n2": 5, "n3": 10}


def test_the_leader_during_an_election_and_a_server_that_is_not_clustered(app: Dynastore) -> None:
    assert app.metrics is not None
    assert not [series for series in scrape(app) if series[0].startswith("dynastore_cluster_")]
    alone = {**CLUSTER_STATUS, "node": "n1", "role": "leader", "appliedIndex": 100, "nodes": []}
    app.metrics.cluster_status = lambda: alone
    values = scrape(app)
    assert value(values, "dynastore_cluster_leader") == 1
    assert value(values, "dynastore_cluster_log_entries") == 0
    electing = {**CLUSTER_STATUS, "role": "follower", "leader": None, "leaderUrl": None}
    app.metrics.cluster_status = lambda: electing
    assert value(scrape(app), "dynastore_cluster_leader_known") == 0


def test_a_follower_s_own_page_holds_the_cluster_families_only() -> None:
    values, types = parse(cluster_page(CLUSTER_STATUS).decode())
    assert {name for name, _ in values} == {
        "dynastore_cluster_leader",
        "dynastore_cluster_leader_known",
        "dynastore_cluster_leader_changes_total",
        "dynastore_cluster_log_head_index",
        "dynastore_cluster_log_entries",
        "dynastore_cluster_applied_index",
        "dynastore_cluster_replication_lag_entries",
    }
    assert types["dynastore_cluster_leader_changes_total"] == "counter"
    assert value(values, "dynastore_cluster_replication_lag_entries", node="n3") == 10
