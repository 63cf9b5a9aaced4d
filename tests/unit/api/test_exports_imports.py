"""ExportTableToPointInTime and ImportTable in process (no runner: the jobs stay IN_PROGRESS), for what needs a
moment the server never leaves still: recovery on but its first base not taken yet, and the job records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynastore.errors import InvalidExportTimeException, ResourceInUseException
from tests.unit.api.operations import T0, call, create, make_ctx

TABLE_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"


def _decoded(response: Any) -> Any:
    return json.loads(response) if isinstance(response, bytes) else response


@pytest.fixture
def ops() -> dict[str, Any]:
    _, ops, _ = make_ctx()
    create(ops, "tbl", 5, 5)
    call(ops, "UpdateContinuousBackups", TableName="tbl",
         PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})  # fmt: skip
    return ops


def test_before_the_first_base_the_present_exports_and_the_past_does_not(ops: dict[str, Any]) -> None:
    started = _decoded(call(ops, "ExportTableToPointInTime", TableArn=TABLE_ARN + "tbl", S3Bucket="bkt"))
    description = started["ExportDescription"]
    assert description["ExportStatus"] == "IN_PROGRESS"
    assert description["ExportTime"] == T0
    assert description["ExportArn"].startswith(TABLE_ARN + "tbl/export/01700000000000-")
    with pytest.raises(InvalidExportTimeException) as e:
        call(ops, "ExportTableToPointInTime", TableArn=TABLE_ARN + "tbl", S3Bucket="bkt", ExportTime=T0 - 10)
    assert e.value.message == (
        "Point in time recovery of table 'tbl' has no restorable time yet: it was turned on a moment ago"
    )


def test_the_records_list_in_time_order_per_table(ops: dict[str, Any]) -> None:
    request = {"TableArn": TABLE_ARN + "tbl", "S3Bucket": "bkt"}
    arns = [
        _decoded(call(ops, "ExportTableToPointInTime", **request))["ExportDescription"]["ExportArn"] for _ in range(3)
    ]
    listed = _decoded(call(ops, "ListExports", TableArn=TABLE_ARN + "tbl"))["ExportSummaries"]
    assert sorted(s["ExportArn"] for s in listed) == sorted(arns)
    assert {s["ExportStatus"] for s in listed} == {"IN_PROGRESS"}


def test_an_import_creates_its_table_creating_until_loaded(ops: dict[str, Any]) -> None:
    creation = {
        "TableName": "loaded",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    request = {"S3BucketSource": {"S3Bucket": "bkt"}, "InputFormat": "ION", "TableCreationParameters": creation}
    started = _decoded(call(ops, "ImportTable", **request))["ImportTableDescription"]
    assert started["ImportStatus"] == "IN_PROGRESS"
    assert started["TableArn"] == TABLE_ARN + "loaded"
    assert started["InputCompressionType"] == "NONE"
    table = _decoded(call(ops, "DescribeTable", TableName="loaded"))["Table"]
    assert table["TableStatus"] == "CREATING"
    assert table["TableId"] == started["TableId"]
    with pytest.raises(ResourceInUseException) as e:
        call(ops, "ImportTable", **request)
    assert e.value.message == "Table already exists: loaded"
