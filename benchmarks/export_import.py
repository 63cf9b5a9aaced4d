"""Export and import rates beside the plain data-plane loads they compare with (docs/backups.md "Export and
import"), on a real server process with a data directory and a directory standing in for S3:

* ImportTable of N items (one DynamoDB JSON object, uncompressed) vs BatchWriteItem of the same N items (25 a
  request, ``THREADS`` clients in parallel);
* ExportTableToPointInTime (DYNAMODB_JSON) of the N-item table vs a parallel Scan of it (``THREADS`` segments).

Each rate is items a second from the request to the end (for export and import: until Describe reports the
end; the runner starts a job within half a second). Items are about 400 bytes.

Run: ``python benchmarks/export_import.py [items]`` (default 200,000).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.server_process import ServerProcess  # noqa: E402

THREADS = 4
KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}


def item(i: int) -> dict[str, Any]:
    return {"pk": {"S": f"user{i:08d}"}, "n": {"N": str(i)}, "v": {"S": "x" * 370}}


def wait(call: Any, key: str, status: str) -> dict[str, Any]:
    while True:
        description: dict[str, Any] = call()[key]
        if description[status] != "IN_PROGRESS":
            return description
        time.sleep(0.05)


def batch_load(server: ServerProcess, table: str, count: int) -> float:
    def load(part: int) -> None:
        ddb = server.ddb  # one client shared by the threads (botocore clients are thread-safe)
        for start in range(part * 25, count, 25 * THREADS):
            requests = [{"PutRequest": {"Item": item(i)}} for i in range(start, min(start + 25, count))]
            pending = {table: requests}
            while pending:
                pending = ddb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}

    started = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(load, range(THREADS)))
    return time.perf_counter() - started


def parallel_scan(server: ServerProcess, table: str) -> tuple[int, float]:
    def segment(number: int) -> int:
        ddb = server.ddb
        seen = 0
        kwargs: dict[str, Any] = {"TableName": table, "Segment": number, "TotalSegments": THREADS}
        while True:
            page = ddb.scan(**kwargs)
            seen += int(page["Count"])
            if "LastEvaluatedKey" not in page:
                return seen
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    started = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        total = sum(pool.map(segment, range(THREADS)))
    return total, time.perf_counter() - started


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "s3"
        (root / "bucket" / "source").mkdir(parents=True)
        with (root / "bucket" / "source" / "items.json").open("w") as out:
            for i in range(count):
                out.write(json.dumps({"Item": item(i)}) + "\n")
        server = ServerProcess("--s3-root", str(root), "--capacity", "report", data_dir=Path(tmp) / "data")
        try:
            ddb = server.ddb
            started = time.perf_counter()
            arn = ddb.import_table(
                S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": "source/"},
                InputFormat="DYNAMODB_JSON",
                TableCreationParameters={"TableName": "imported", **KEYS},
            )["ImportTableDescription"]["ImportArn"]
            done = wait(lambda: ddb.describe_import(ImportArn=arn), "ImportTableDescription", "ImportStatus")
            imported = time.perf_counter() - started
            assert done["ImportedItemCount"] == count, done

            ddb.create_table(TableName="batched", **KEYS)
            batched = batch_load(server, "batched", count)

            ddb.update_continuous_backups(
                TableName="imported", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
            )
            table_arn = ddb.describe_table(TableName="imported")["Table"]["TableArn"]
            started = time.perf_counter()
            arn = ddb.export_table_to_point_in_time(TableArn=table_arn, S3Bucket="bucket")["ExportDescription"][
                "ExportArn"
            ]
            done = wait(lambda: ddb.describe_export(ExportArn=arn), "ExportDescription", "ExportStatus")
            exported = time.perf_counter() - started
            assert done["ItemCount"] == count, done

            scanned, scan_seconds = parallel_scan(server, "imported")
            assert scanned == count
        finally:
            server.close()
    print(f"{count} items of about 400 bytes")
    print(f"ImportTable                     {count / imported:10.0f} items/s ({imported:.1f} s)")
    print(f"BatchWriteItem, {THREADS} clients        {count / batched:10.0f} items/s ({batched:.1f} s)")
    print(f"ExportTableToPointInTime        {count / exported:10.0f} items/s ({exported:.1f} s)")
    print(f"parallel Scan, {THREADS} segments        {count / scan_seconds:10.0f} items/s ({scan_seconds:.1f} s)")


if __name__ == "__main__":
    main()
