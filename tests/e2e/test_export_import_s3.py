"""Export and import through a real S3-compatible server: moto's standalone server (``moto[s3]`` with Flask), a separate
process speaking S3's HTTP API, started by the test; dynastore reaches it with --s3-endpoint-url as it would
Amazon S3 or any S3-compatible store."""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from tests.e2e.server_process import ServerProcess
from tests.e2e.test_export_import import KEYS, scan_all, source_table, wait_export, wait_import

CREDENTIALS = {"aws_access_key_id": "s3key", "aws_secret_access_key": "s3secret"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1).close()
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def s3(s3_url: str) -> Any:
    client = boto3.client("s3", endpoint_url=s3_url, region_name="us-east-1", **CREDENTIALS)
    client.create_bucket(Bucket="exports")
    return client


@pytest.fixture(scope="module")
def server(s3_url: str, s3: Any) -> Iterator[ServerProcess]:
    process = ServerProcess(
        "--s3-endpoint-url",
        s3_url,
        "--s3-access-key-id",
        CREDENTIALS["aws_access_key_id"],
        env={"DYNASTORE_S3_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"]},
    )
    try:
        yield process
    finally:
        process.close()


def test_an_export_to_s3_imports_back(server: ServerProcess, s3: Any) -> None:
    ddb = server.ddb
    arn = source_table(ddb, "s3source", 25)
    started = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports", S3Prefix="nightly")
    done = wait_export(ddb, started["ExportDescription"]["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED"
    assert done["ItemCount"] == 25
    export_id = done["ExportArn"].rsplit("/", 1)[1]
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="exports", Prefix="nightly/")["Contents"])
    root = f"nightly/AWSDynamoDB/{export_id}/"
    assert [k for k in keys if "/data/" not in k] == [
        root + "_started",
        root + "manifest-files.checksum",
        root + "manifest-files.json",
        root + "manifest-summary.checksum",
        root + "manifest-summary.json",
    ]
    summary = json.loads(s3.get_object(Bucket="exports", Key=root + "manifest-summary.json")["Body"].read())
    assert summary["itemCount"] == 25 and summary["exportArn"] == done["ExportArn"]
    [data_key] = [k for k in keys if "/data/" in k]
    lines = gzip.decompress(s3.get_object(Bucket="exports", Key=data_key)["Body"].read()).splitlines()
    assert len(lines) == 25

    imported = ddb.import_table(
        S3BucketSource={"S3Bucket": "exports", "S3KeyPrefix": root + "data/"},
        InputFormat="DYNAMODB_JSON",
        InputCompressionType="GZIP",
        TableCreationParameters={"TableName": "s3copy", **KEYS},
    )["ImportTableDescription"]
    finished = wait_import(ddb, imported["ImportArn"])
    assert finished["ImportStatus"] == "COMPLETED"
    assert finished["ImportedItemCount"] == 25
    assert scan_all(ddb, "s3copy") == scan_all(ddb, "s3source")


def test_a_missing_bucket_on_s3_fails_with_s3_s_code(server: ServerProcess) -> None:
    ddb = server.ddb
    started = ddb.import_table(
        S3BucketSource={"S3Bucket": "nosuchbucket"},
        InputFormat="CSV",
        TableCreationParameters={"TableName": "s3missing", **KEYS},
    )["ImportTableDescription"]
    done = wait_import(ddb, started["ImportArn"])
    assert done["ImportStatus"] == "FAILED"
    assert done["FailureCode"] == "S3NoSuchBucket"
    assert done["FailureMessage"].startswith("The specified bucket does not exist")
    assert "s3missing" not in ddb.list_tables()["TableNames"]
