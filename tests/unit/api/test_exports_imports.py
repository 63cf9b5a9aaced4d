"""ExportTableToPointInTime and ImportTable in process (no runner: the jobs stay IN_PROGRESS), for what needs a
moment the server never leaves still: recovery on but its first base not taken yet, and the job records."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dynastore.engine.exports import SPOOL_CHUNK_ITEMS, ExportResult, run_export
from dynastore.engine.transfer_jobs import EXPORT, ExportJob, find_job
from dynastore.errors import InvalidExportTimeException, ResourceInUseException
from dynastore.storage.buckets import DirectoryBuckets
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


def test_describe_export_shows_the_items_read_so_far_while_the_export_runs(tmp_path: Path) -> None:
    """The export runs on an event loop beside a watcher that describes it at every turn of the loop (the moments
    a request could): while IN_PROGRESS, ItemCount and BilledSizeBytes grow chunk by chunk."""
    ctx, ops, _ = make_ctx()
    create(ops, "big", 5, 40_000)
    total = 2 * SPOOL_CHUNK_ITEMS + 10
    for i in range(total):
        call(ops, "PutItem", TableName="big", Item={"pk": {"S": f"k{i}"}, "v": {"S": "x" * 20}})
    call(ops, "UpdateContinuousBackups", TableName="big",
         PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})  # fmt: skip
    (tmp_path / "bkt").mkdir()
    request = {"TableArn": TABLE_ARN + "big", "S3Bucket": "bkt", "ClientToken": "progress"}
    started = _decoded(call(ops, "ExportTableToPointInTime", **request))
    arn = started["ExportDescription"]["ExportArn"]
    assert (started["ExportDescription"]["ItemCount"], started["ExportDescription"]["BilledSizeBytes"]) == (0, 0)
    job = find_job(ctx, EXPORT, arn)
    assert isinstance(job, ExportJob)
    seen: list[tuple[int, int]] = []

    async def export_and_watch() -> ExportResult:
        task = asyncio.create_task(run_export(ctx, job, ctx.catalog.get("big"), DirectoryBuckets(tmp_path)))
        while not task.done():
            description = _decoded(call(ops, "DescribeExport", ExportArn=arn))["ExportDescription"]
            assert description["ExportStatus"] == "IN_PROGRESS"
            seen.append((description["ItemCount"], description["BilledSizeBytes"]))
            retried = _decoded(call(ops, "ExportTableToPointInTime", **request))["ExportDescription"]
            assert retried["ItemCount"] == description["ItemCount"]  # a retry of the request answers the same
            await asyncio.sleep(0)
        return task.result()

    result = asyncio.run(export_and_watch())
    counts = sorted({items for items, _ in seen})
    assert counts == [0, SPOOL_CHUNK_ITEMS, 2 * SPOOL_CHUNK_ITEMS, total]
    sizes = sorted({size for items, size in seen if items})
    assert len(sizes) == 3 and sizes[-1] == result.billed_bytes and 0 < sizes[0] < sizes[1] < sizes[2]
    assert ctx.recovery.exports_running == {}
