"""ExportTableToPointInTime, DescribeExport, ListExports, ImportTable, DescribeImport, ListImports through boto3
against a server whose buckets are directories (--s3-root): the files as DynamoDB lays them out, round trips in
every format and compression, a DynamoDB export imported, malformed lines reported, errors as DynamoDB's."""

from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import zstandard
from amazon.ion import simpleion
from botocore.exceptions import ClientError

from tests.e2e.conftest import aws, needs_aws_cli
from tests.e2e.server_process import ServerProcess

ACCOUNT_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
FIXTURES = Path(__file__).parent / "fixtures" / "dynamodb_export"
KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "N"},
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


@pytest.fixture(scope="module")
def s3_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("s3")
    (root / "bucket").mkdir()
    return root


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def server(s3_root: Path, data_dir: Path) -> Any:
    process = ServerProcess("--s3-root", str(s3_root), data_dir=data_dir)
    try:
        yield process
    finally:
        process.close()


@pytest.fixture(scope="module")
def clocked(s3_root: Path) -> Any:
    """A server of the same buckets whose clock moves only when told (exports of the past)."""
    process = ServerProcess("--s3-root", str(s3_root), "--manual-clock")
    try:
        yield process
    finally:
        process.close()


@pytest.fixture(scope="module")
def ddb(server: ServerProcess) -> Any:
    return server.ddb


def items(count: int) -> list[dict[str, Any]]:
    return [
        {
            "pk": {"S": f"user{i % 7}"},
            "sk": {"N": str(i)},
            "name": {"S": f"name {i}"},
            "tags": {"SS": ["a", f"t{i}"]},
            "blob": {"B": bytes([i % 256, 1, 2])},
            "scores": {"L": [{"N": "1.5"}, {"BOOL": True}, {"NULL": True}]},
            "meta": {"M": {"n": {"NS": ["1", str(i + 2)]}, "bs": {"BS": [b"x", b"yz"]}}},
        }
        for i in range(count)
    ]


def source_table(ddb: Any, name: str, count: int) -> str:
    """A table of ``count`` items with point-in-time recovery on; its ARN."""
    ddb.create_table(TableName=name, **KEYS)
    ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    for item in items(count):
        ddb.put_item(TableName=name, Item=item)
    return ACCOUNT_ARN + name


def wait_restorable(ddb: Any, name: str) -> None:
    """Until the table's first point-in-time base is in (a maintenance pass after recovery is turned on): its
    past can be exported from then on."""
    for _ in range(600):
        described = ddb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
        if "EarliestRestorableDateTime" in described["PointInTimeRecoveryDescription"]:
            return
        time.sleep(0.05)
    raise AssertionError(f"table {name} has no restorable time")


def wait_export(ddb: Any, arn: str) -> dict[str, Any]:
    for _ in range(600):
        description: dict[str, Any] = ddb.describe_export(ExportArn=arn)["ExportDescription"]
        if description["ExportStatus"] != "IN_PROGRESS":
            return description
        time.sleep(0.1)
    raise AssertionError(f"export {arn} still IN_PROGRESS")


def wait_import(ddb: Any, arn: str) -> dict[str, Any]:
    for _ in range(600):
        description: dict[str, Any] = ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
        if description["ImportStatus"] != "IN_PROGRESS":
            return description
        time.sleep(0.1)
    raise AssertionError(f"import {arn} still IN_PROGRESS")


def export(ddb: Any, table_arn: str, prefix: str, **extra: Any) -> dict[str, Any]:
    started = ddb.export_table_to_point_in_time(TableArn=table_arn, S3Bucket="bucket", S3Prefix=prefix, **extra)
    assert started["ExportDescription"]["ExportStatus"] == "IN_PROGRESS"
    return wait_export(ddb, started["ExportDescription"]["ExportArn"])


def import_into(ddb: Any, name: str, prefix: str, fmt: str, compression: str, **extra: Any) -> dict[str, Any]:
    started = ddb.import_table(
        S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": prefix},
        InputFormat=fmt,
        InputCompressionType=compression,
        TableCreationParameters={"TableName": name, **KEYS},
        **extra,
    )
    description = started["ImportTableDescription"]
    assert description["ImportStatus"] == "IN_PROGRESS"
    return wait_import(ddb, description["ImportArn"])


def scan_all(ddb: Any, name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": name}
    while True:
        page = ddb.scan(**kwargs)
        found += page["Items"]
        if "LastEvaluatedKey" not in page:
            return sorted(found, key=lambda item: int(item["sk"]["N"]))
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def export_dir(s3_root: Path, description: dict[str, Any]) -> Path:
    return s3_root / "bucket" / Path(description["ExportManifest"]).parent


class TestValidation:
    def test_a_missing_table_is_table_not_found(self, ddb: Any) -> None:
        arn = ACCOUNT_ARN + "nosuchtable"
        with pytest.raises(ClientError) as e:
            ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket")
        assert e.value.response["Error"]["Code"] == "TableNotFoundException"
        assert e.value.response["Error"]["Message"] == f"Table not found: {arn}"

    def test_an_export_needs_point_in_time_recovery(self, ddb: Any) -> None:
        ddb.create_table(TableName="nopitr", **KEYS)
        with pytest.raises(ClientError) as e:
            ddb.export_table_to_point_in_time(TableArn=ACCOUNT_ARN + "nopitr", S3Bucket="bucket")
        assert e.value.response["Error"]["Code"] == "PointInTimeRecoveryUnavailableException"
        assert e.value.response["Error"]["Message"] == "Point in time recovery is not enabled for table 'nopitr'"

    def test_constraints_of_the_request(self, ddb: Any) -> None:
        with pytest.raises(ClientError) as e:
            ddb.export_table_to_point_in_time(TableArn=ACCOUNT_ARN + "x", S3Bucket="-bad-", ExportFormat="CSV")
        assert e.value.response["Error"]["Code"] == "ValidationException"
        assert e.value.response["Error"]["Message"] == (
            "1 validation error detected: Value at 'S3Bucket' failed to satisfy constraint: Member must satisfy "
            "regular expression pattern: ^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$"
        )

    def test_an_incremental_export_needs_its_period(self, ddb: Any) -> None:
        arn = source_table(ddb, "incrnospec", 1)
        with pytest.raises(ClientError) as e:
            ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ExportType="INCREMENTAL_EXPORT")
        assert e.value.response["Error"]["Code"] == "ValidationException"
        assert e.value.response["Error"]["Message"] == (
            "IncrementalExportSpecification with ExportFromTime is required for an INCREMENTAL_EXPORT"
        )

    def test_an_export_time_in_the_future_is_invalid(self, ddb: Any) -> None:
        arn = source_table(ddb, "future", 1)
        with pytest.raises(ClientError) as e:
            ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ExportTime=4102444800)
        assert e.value.response["Error"]["Code"] == "InvalidExportTimeException"
        assert e.value.response["Error"]["Message"] == "Export time 2100-01-01T00:00:00+00:00 is in the future"

    def test_unknown_export_and_import(self, ddb: Any) -> None:
        arn = ACCOUNT_ARN + "gone/export/01700000000000-0123abcd"
        with pytest.raises(ClientError) as e:
            ddb.describe_export(ExportArn=arn)
        assert e.value.response["Error"]["Code"] == "ExportNotFoundException"
        assert e.value.response["Error"]["Message"] == f"Export not found: {arn}"
        arn = ACCOUNT_ARN + "gone/import/01700000000000-0123abcd"
        with pytest.raises(ClientError) as e:
            ddb.describe_import(ImportArn=arn)
        assert e.value.response["Error"]["Code"] == "ImportNotFoundException"
        assert e.value.response["Error"]["Message"] == f"Import not found: {arn}"

    def test_an_import_into_an_existing_table_is_resource_in_use(self, ddb: Any) -> None:
        ddb.create_table(TableName="taken", **KEYS)
        with pytest.raises(ClientError) as e:
            ddb.import_table(
                S3BucketSource={"S3Bucket": "bucket"},
                InputFormat="CSV",
                TableCreationParameters={"TableName": "taken", **KEYS},
            )
        assert e.value.response["Error"]["Code"] == "ResourceInUseException"
        assert e.value.response["Error"]["Message"] == "Table already exists: taken"
        assert "taken" in ddb.list_tables()["TableNames"]

    def test_table_creation_parameters_are_checked_as_create_table_checks_them(self, ddb: Any) -> None:
        with pytest.raises(ClientError) as e:
            ddb.import_table(
                S3BucketSource={"S3Bucket": "bucket"},
                InputFormat="DYNAMODB_JSON",
                TableCreationParameters={
                    "TableName": "badparams",
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                },
            )
        assert e.value.response["Error"]["Code"] == "ValidationException"
        assert e.value.response["Error"]["Message"] == (
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be "
            "specified when BillingMode is PROVISIONED"
        )
        assert "badparams" not in ddb.list_tables()["TableNames"]


class TestExport:
    def test_the_files_are_laid_out_as_dynamodb_lays_them_out(self, ddb: Any, s3_root: Path) -> None:
        arn = source_table(ddb, "layout", 20)
        done = export(ddb, arn, "exports/layout")
        assert done["ExportStatus"] == "COMPLETED"
        assert done["ItemCount"] == 20
        assert done["BilledSizeBytes"] > 0
        assert done["ExportFormat"] == "DYNAMODB_JSON"
        assert done["ExportType"] == "FULL_EXPORT"
        export_id = done["ExportArn"].rsplit("/", 1)[1]
        assert done["ExportArn"] == f"{arn}/export/{export_id}"
        assert done["ExportManifest"] == f"exports/layout/AWSDynamoDB/{export_id}/manifest-summary.json"
        root = export_dir(s3_root, done)
        assert sorted(p.name for p in root.iterdir()) == [
            "_started",
            "data",
            "manifest-files.checksum",
            "manifest-files.json",
            "manifest-summary.checksum",
            "manifest-summary.json",
        ]
        summary = json.loads((root / "manifest-summary.json").read_text())
        assert summary["version"] == "2020-06-30"
        assert summary["exportArn"] == done["ExportArn"]
        assert summary["tableArn"] == arn
        assert summary["itemCount"] == 20
        assert summary["outputFormat"] == "DYNAMODB_JSON"
        assert summary["s3Bucket"] == "bucket" and summary["s3Prefix"] == "exports/layout"
        assert summary["manifestFilesS3Key"] == f"exports/layout/AWSDynamoDB/{export_id}/manifest-files.json"
        files = [json.loads(line) for line in (root / "manifest-files.json").read_text().splitlines()]
        assert sum(f["itemCount"] for f in files) == 20
        lines = []
        for entry in files:
            assert entry["dataFileS3Key"].startswith(f"exports/layout/AWSDynamoDB/{export_id}/data/")
            assert entry["dataFileS3Key"].endswith(".json.gz")
            lines += gzip.decompress((s3_root / "bucket" / entry["dataFileS3Key"]).read_bytes()).splitlines()
        exported = sorted((json.loads(line)["Item"] for line in lines), key=lambda item: int(item["sk"]["N"]))
        table = scan_all(ddb, "layout")
        assert [(i["pk"], i["sk"], i["name"], i["meta"]["M"]["n"]) for i in exported] == [
            (i["pk"], i["sk"], i["name"], i["meta"]["M"]["n"]) for i in table
        ]
        assert exported[3]["pk"] == {"S": "user3"}
        assert exported[3]["blob"] == {"B": "AwEC"}

    def test_an_ion_export_writes_ion_lines(self, ddb: Any, s3_root: Path) -> None:
        arn = source_table(ddb, "ionsource", 5)
        done = export(ddb, arn, "exports/ion", ExportFormat="ION")
        assert done["ExportStatus"] == "COMPLETED"
        assert done["ExportFormat"] == "ION"
        [data] = list((export_dir(s3_root, done) / "data").iterdir())
        assert data.name.endswith(".ion.gz")
        lines = gzip.decompress(data.read_bytes()).decode().splitlines()
        assert len(lines) == 5
        assert all(line.startswith("$ion_1_0 {Item:{") for line in lines)
        assert "$dynamodb_SS::" in lines[0]
        assert simpleion.loads(lines[0])["Item"]["name"].startswith("name ")

    def test_an_export_to_a_missing_bucket_fails_with_s3_s_code(self, ddb: Any) -> None:
        arn = source_table(ddb, "nobucket", 1)
        started = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="nosuchbucket")
        done = wait_export(ddb, started["ExportDescription"]["ExportArn"])
        assert done["ExportStatus"] == "FAILED"
        assert done["FailureCode"] == "S3NoSuchBucket"
        assert done["FailureMessage"] == "The specified bucket does not exist: nosuchbucket"

    def test_a_client_token_makes_the_request_idempotent(self, ddb: Any) -> None:
        arn = source_table(ddb, "idem", 1)
        first = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ClientToken="tok-1")
        again = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ClientToken="tok-1")
        assert again["ExportDescription"]["ExportArn"] == first["ExportDescription"]["ExportArn"]
        with pytest.raises(ClientError) as e:
            ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", S3Prefix="x", ClientToken="tok-1")
        assert e.value.response["Error"]["Code"] == "ExportConflictException"
        assert e.value.response["Error"]["Message"] == (
            "The ClientToken tok-1 was used by another export request with different parameters"
        )
        wait_export(ddb, first["ExportDescription"]["ExportArn"])

    def test_list_exports_pages_and_filters_by_table(self, ddb: Any) -> None:
        arn = source_table(ddb, "listed", 1)
        arns = [export(ddb, arn, f"listed{i}")["ExportArn"] for i in range(3)]
        page = ddb.list_exports(TableArn=arn, MaxResults=2)
        assert [s["ExportArn"] for s in page["ExportSummaries"]] == arns[:2]
        assert page["ExportSummaries"][0] == {
            "ExportArn": arns[0],
            "ExportStatus": "COMPLETED",
            "ExportType": "FULL_EXPORT",
        }
        rest = ddb.list_exports(TableArn=arn, MaxResults=2, NextToken=page["NextToken"])
        assert [s["ExportArn"] for s in rest["ExportSummaries"]] == arns[2:]
        assert "NextToken" not in rest


class TestRoundTrip:
    @pytest.mark.parametrize("fmt", ["DYNAMODB_JSON", "ION"])
    @pytest.mark.parametrize("compression", ["GZIP", "NONE", "ZSTD"])
    def test_an_export_imports_into_the_same_items(self, ddb: Any, s3_root: Path, fmt: str, compression: str) -> None:
        name = f"rt{fmt[:3].lower()}{compression.lower()}"
        arn = source_table(ddb, name, 30)
        done = export(ddb, arn, f"rt/{name}", ExportFormat=fmt)
        data = export_dir(s3_root, done) / "data"
        prefix = str(Path(done["ExportManifest"]).parent / "data") + "/"
        if compression != "GZIP":  # the same lines, stored as the import is told to find them
            prefix = f"recompressed/{name}/"
            target = s3_root / "bucket" / prefix
            target.mkdir(parents=True)
            for path in data.iterdir():
                raw = gzip.decompress(path.read_bytes())
                packed = zstandard.ZstdCompressor().compress(raw) if compression == "ZSTD" else raw
                (target / path.name).write_bytes(packed)
        imported = import_into(ddb, name + "copy", prefix, fmt, compression)
        assert imported["ImportStatus"] == "COMPLETED"
        assert imported["ProcessedItemCount"] == 30
        assert imported["ImportedItemCount"] == 30
        assert imported["ErrorCount"] == 0
        assert imported["InputCompressionType"] == compression
        assert imported["ProcessedSizeBytes"] > 0
        assert ddb.describe_table(TableName=name + "copy")["Table"]["TableStatus"] == "ACTIVE"
        assert scan_all(ddb, name + "copy") == scan_all(ddb, name)

    def test_a_csv_import_with_a_header_list_and_delimiter(self, ddb: Any, s3_root: Path) -> None:
        folder = s3_root / "bucket" / "csv"
        folder.mkdir()
        (folder / "songs.csv").write_text("user1;1;Song One\nuser2;2;Song Two\n")
        done = import_into(
            ddb,
            "songs",
            "csv/",
            "CSV",
            "NONE",
            InputFormatOptions={"Csv": {"Delimiter": ";", "HeaderList": ["pk", "sk", "title"]}},
        )
        assert done["ImportStatus"] == "COMPLETED"
        assert done["InputFormatOptions"] == {"Csv": {"Delimiter": ";", "HeaderList": ["pk", "sk", "title"]}}
        assert scan_all(ddb, "songs") == [
            {"pk": {"S": "user1"}, "sk": {"N": "1"}, "title": {"S": "Song One"}},
            {"pk": {"S": "user2"}, "sk": {"N": "2"}, "title": {"S": "Song Two"}},
        ]


class TestImport:
    def test_a_dynamodb_export_imports(self, ddb: Any, s3_root: Path) -> None:
        shutil.copytree(FIXTURES, s3_root / "bucket" / "fromdynamodb")
        started = ddb.import_table(
            S3BucketSource={
                "S3Bucket": "bucket",
                "S3KeyPrefix": "fromdynamodb/AWSDynamoDB/01693685827463-2d8752fd/data/",
            },
            InputFormat="DYNAMODB_JSON",
            InputCompressionType="GZIP",
            TableCreationParameters={
                "TableName": "ProductCatalog",
                "KeySchema": [{"AttributeName": "Id", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "Id", "AttributeType": "N"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        done = wait_import(ddb, started["ImportTableDescription"]["ImportArn"])
        assert done["ImportStatus"] == "COMPLETED"
        assert done["ImportedItemCount"] == 3
        book = ddb.get_item(TableName="ProductCatalog", Key={"Id": {"N": "103"}})["Item"]
        assert book["Authors"] == {"SS": ["Author1", "Author2"]}
        assert book["Title"] == {"S": "Book 103 Title"}
        assert book["InPublication"] == {"BOOL": False}

    def test_malformed_lines_are_counted_reported_and_skipped(self, ddb: Any, s3_root: Path) -> None:
        folder = s3_root / "bucket" / "malformed"
        folder.mkdir()
        good = json.dumps({"Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}})
        (folder / "part1.json").write_text(
            "\n".join(
                [
                    good,
                    "{not json",
                    json.dumps({"Item": {"pk": {"S": "b"}}}),
                    json.dumps({"Item": {"pk": {"N": "1"}, "sk": {"N": "2"}}}),
                    json.dumps({"Item": {"pk": {"S": "c"}, "sk": {"N": "3"}, "bad": {"SS": []}}}),
                    json.dumps({"Item": {"pk": {"S": "d"}, "sk": {"N": "4"}}}),
                ]
            )
        )
        done = import_into(ddb, "malformed", "malformed/", "DYNAMODB_JSON", "NONE")
        assert done["ImportStatus"] == "FAILED"
        assert done["FailureCode"] == "ItemValidationError"
        assert done["FailureMessage"] == (
            "Some of the items failed validation checks and were not imported. Please check CloudWatch error logs "
            "for more details."
        )
        assert done["ProcessedItemCount"] == 6
        assert done["ErrorCount"] == 4
        assert done["ImportedItemCount"] == 2
        assert ddb.describe_table(TableName="malformed")["Table"]["TableStatus"] == "ACTIVE"
        assert [item["pk"]["S"] for item in scan_all(ddb, "malformed")] == ["a", "d"]

    def test_the_failed_lines_are_in_the_log_and_the_error_report(
        self, ddb: Any, server: ServerProcess, data_dir: Path
    ) -> None:
        log = server.log_text()
        assert "malformed/part1.json line 2: Unparsable DynamoDB JSON" in log
        assert "malformed/part1.json line 3: One or more parameter values were invalid: Missing the key sk" in log
        assert "malformed/part1.json line 4: One or more parameter values were invalid: Type mismatch for key" in log
        [summary] = ddb.list_imports(TableArn=ACCOUNT_ARN + "malformed")["ImportSummaryList"]
        report = data_dir / "imports" / (summary["ImportArn"].rsplit("/", 1)[1] + ".errors.jsonl")
        entries = [json.loads(line) for line in report.read_text().splitlines()]
        assert [(e["object"], e["line"]) for e in entries] == [("malformed/part1.json", n) for n in (2, 3, 4, 5)]
        assert entries[3]["message"].startswith("bad: ")
        assert report.stat().st_mode & 0o777 == 0o600

    def test_a_source_without_objects_fails_and_leaves_no_table(self, ddb: Any) -> None:
        done = import_into(ddb, "nosource", "nothing-here/", "DYNAMODB_JSON", "NONE")
        assert done["ImportStatus"] == "FAILED"
        assert done["FailureCode"] == "InvalidImportSource"
        assert done["FailureMessage"] == "No objects found under s3://bucket/nothing-here/"
        assert "nosource" not in ddb.list_tables()["TableNames"]

    def test_a_client_token_makes_the_import_idempotent(self, ddb: Any, s3_root: Path) -> None:
        request = {
            "S3BucketSource": {"S3Bucket": "bucket", "S3KeyPrefix": "csv/"},
            "InputFormat": "CSV",
            "InputFormatOptions": {"Csv": {"Delimiter": ";", "HeaderList": ["pk", "sk", "title"]}},
            "TableCreationParameters": {"TableName": "idemimport", **KEYS},
            "ClientToken": "imp-1",
        }
        first = ddb.import_table(**request)["ImportTableDescription"]
        again = ddb.import_table(**request)["ImportTableDescription"]
        assert again["ImportArn"] == first["ImportArn"]
        with pytest.raises(ClientError) as e:
            ddb.import_table(**{**request, "InputCompressionType": "GZIP"})
        assert e.value.response["Error"]["Code"] == "ImportConflictException"
        assert e.value.response["Error"]["Message"] == (
            "The ClientToken imp-1 was used by another import request with different parameters"
        )
        assert wait_import(ddb, first["ImportArn"])["ImportStatus"] == "COMPLETED"

    def test_list_imports(self, ddb: Any) -> None:
        table_arn = ACCOUNT_ARN + "songs"
        [summary] = ddb.list_imports(TableArn=table_arn)["ImportSummaryList"]
        assert summary["ImportStatus"] == "COMPLETED"
        assert summary["TableArn"] == table_arn
        assert summary["InputFormat"] == "CSV"
        assert summary["S3BucketSource"] == {"S3Bucket": "bucket", "S3KeyPrefix": "csv/"}
        page = ddb.list_imports(PageSize=1)
        assert len(page["ImportSummaryList"]) == 1
        second = ddb.list_imports(PageSize=1, NextToken=page["NextToken"])
        assert second["ImportSummaryList"][0]["ImportArn"] != page["ImportSummaryList"][0]["ImportArn"]


class TestPointInTime:
    """Exports of the past, read from the point-in-time archive, on a server whose clock moves only when told."""

    def test_a_full_export_of_a_past_time_and_an_incremental_export(
        self, clocked: ServerProcess, s3_root: Path
    ) -> None:
        ddb = clocked.ddb
        ddb.create_table(TableName="history", **KEYS)
        ddb.update_continuous_backups(
            TableName="history", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
        wait_restorable(ddb, "history")
        ddb.put_item(TableName="history", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "1"}})
        ddb.put_item(TableName="history", Item={"pk": {"S": "b"}, "sk": {"N": "2"}, "v": {"N": "1"}})
        before = clocked.advance(60)
        ddb.put_item(TableName="history", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "2"}})
        ddb.delete_item(TableName="history", Key={"pk": {"S": "b"}, "sk": {"N": "2"}})
        ddb.put_item(TableName="history", Item={"pk": {"S": "c"}, "sk": {"N": "3"}, "v": {"N": "1"}})
        now = clocked.advance(20 * 60)
        arn = ACCOUNT_ARN + "history"

        past = export(ddb, arn, "history/past", ExportTime=before - 1)
        assert past["ExportStatus"] == "COMPLETED"
        assert past["ItemCount"] == 2
        [data] = list((export_dir(s3_root, past) / "data").iterdir())
        old = sorted(json.loads(line)["Item"]["pk"]["S"] + json.loads(line)["Item"]["v"]["N"]
                     for line in gzip.decompress(data.read_bytes()).splitlines())  # fmt: skip
        assert old == ["a1", "b1"]

        spec = {"ExportFromTime": before - 1, "ExportToTime": now, "ExportViewType": "NEW_AND_OLD_IMAGES"}
        changes = export(ddb, arn, "history/incr", ExportType="INCREMENTAL_EXPORT", IncrementalExportSpecification=spec)
        assert changes["ExportStatus"] == "COMPLETED"
        assert changes["ExportType"] == "INCREMENTAL_EXPORT"
        assert changes["ItemCount"] == 3
        assert changes["IncrementalExportSpecification"]["ExportViewType"] == "NEW_AND_OLD_IMAGES"
        [data] = list((export_dir(s3_root, changes) / "data").iterdir())
        lines = {
            json.loads(line)["Keys"]["pk"]["S"]: json.loads(line)
            for line in gzip.decompress(data.read_bytes()).splitlines()
        }
        assert lines["a"]["OldImage"]["v"] == {"N": "1"} and lines["a"]["NewImage"]["v"] == {"N": "2"}
        assert "NewImage" not in lines["b"] and lines["b"]["OldImage"]["pk"] == {"S": "b"}
        assert "OldImage" not in lines["c"] and lines["c"]["NewImage"]["v"] == {"N": "1"}
        assert lines["a"]["Metadata"]["WriteTimestampMicros"]["N"].isdigit()
        summary = json.loads((export_dir(s3_root, changes) / "manifest-summary.json").read_text())
        assert summary["exportType"] == "INCREMENTAL_EXPORT"
        assert summary["outputView"] == "NEW_AND_OLD_IMAGES"

    def test_an_incremental_period_under_15_minutes_is_refused(self, clocked: ServerProcess) -> None:
        now = clocked.now()
        with pytest.raises(ClientError) as e:
            clocked.ddb.export_table_to_point_in_time(
                TableArn=ACCOUNT_ARN + "history",
                S3Bucket="bucket",
                ExportType="INCREMENTAL_EXPORT",
                IncrementalExportSpecification={"ExportFromTime": now - 600, "ExportToTime": now},
            )
        assert e.value.response["Error"]["Code"] == "ValidationException"
        assert e.value.response["Error"]["Message"] == "The incremental export period must be at least 15 minutes"

    def test_an_export_time_before_the_window_is_invalid(self, clocked: ServerProcess) -> None:
        with pytest.raises(ClientError) as e:
            clocked.ddb.export_table_to_point_in_time(
                TableArn=ACCOUNT_ARN + "history", S3Bucket="bucket", ExportTime=946684800
            )
        assert e.value.response["Error"]["Code"] == "InvalidExportTimeException"
        assert e.value.response["Error"]["Message"].startswith(
            "Export time 2000-01-01T00:00:00+00:00 is outside the point in time recovery window of table 'history' ("
        )


def test_a_filtered_export_holds_the_items_and_attributes_asked_for(ddb: Any, s3_root: Path) -> None:
    arn = source_table(ddb, "filtered", 14)
    spec = {
        "KeyConditionExpression": "pk = :p AND sk > :low",
        "FilterExpression": "#n <> :skip",
        "ProjectionExpression": "pk, sk, #n",
        "ExpressionAttributeNames": {"#n": "name"},
        "ExpressionAttributeValues": {":p": {"S": "user3"}, ":low": {"N": "0"}, ":skip": {"S": "name 10"}},
    }
    done = export(ddb, arn, "filtered", FilterSpecification=spec)
    assert done["ExportStatus"] == "COMPLETED"
    assert done["FilterSpecification"] == spec
    assert done["ItemCount"] == 1  # user3 holds sk 3 and 10; 10 is filtered out
    [data] = list((export_dir(s3_root, done) / "data").iterdir())
    [line] = gzip.decompress(data.read_bytes()).splitlines()
    assert json.loads(line) == {"Item": {"pk": {"S": "user3"}, "sk": {"N": "3"}, "name": {"S": "name 3"}}}


def test_a_filter_naming_a_key_beside_a_key_condition_is_refused(ddb: Any) -> None:
    arn = source_table(ddb, "filteredkey", 1)
    spec = {
        "KeyConditionExpression": "pk = :p",
        "FilterExpression": "sk > :low",
        "ExpressionAttributeValues": {":p": {"S": "user0"}, ":low": {"N": "0"}},
    }
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", FilterSpecification=spec)
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert e.value.response["Error"]["Message"] == (
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: sk"
    )
    spec = {
        "FilterExpression": "a = :unused",
        "ExpressionAttributeValues": {":unused": {"S": "x"}, ":more": {"S": "y"}},
    }
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", FilterSpecification=spec)
    assert e.value.response["Error"]["Message"] == (
        "1 validation error detected: Value provided in ExpressionAttributeValues unused in expressions: keys: {:more}"
    )


def test_an_imported_table_s_gsi_holds_the_items(ddb: Any, s3_root: Path) -> None:
    folder = s3_root / "bucket" / "withgsi"
    folder.mkdir()
    colors = ["red" if i % 2 else "blue" for i in range(10)]
    lines = [
        json.dumps({"Item": {"pk": {"S": f"p{i}"}, "sk": {"N": str(i)}, "color": {"S": c}}})
        for i, c in enumerate(colors)
    ]
    lines.append(json.dumps({"Item": {"pk": {"S": "bad"}, "sk": {"N": "99"}, "color": {"N": "1"}}}))
    (folder / "items.json").write_text("\n".join(lines))
    started = ddb.import_table(
        S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": "withgsi/"},
        InputFormat="DYNAMODB_JSON",
        TableCreationParameters={
            "TableName": "withgsi",
            "KeySchema": KEYS["KeySchema"],
            "AttributeDefinitions": [*KEYS["AttributeDefinitions"], {"AttributeName": "color", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "bycolor",
                    "KeySchema": [{"AttributeName": "color", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
        },
    )["ImportTableDescription"]
    done = wait_import(ddb, started["ImportArn"])
    assert (done["ImportStatus"], done["ErrorCount"], done["ImportedItemCount"]) == ("FAILED", 1, 10)
    table = ddb.describe_table(TableName="withgsi")["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert table["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    red = ddb.query(
        TableName="withgsi",
        IndexName="bycolor",
        KeyConditionExpression="color = :c",
        ExpressionAttributeValues={":c": {"S": "red"}},
    )["Items"]
    assert sorted(int(item["sk"]["N"]) for item in red) == [1, 3, 5, 7, 9]


@needs_aws_cli
class TestTheAwsCli:
    def test_export_and_import_through_the_cli(self, server: ServerProcess, ddb: Any, s3_root: Path) -> None:
        arn = source_table(ddb, "clisource", 12)
        code, out, err = aws(
            server.url, "export-table-to-point-in-time", "--table-arn", arn, "--s3-bucket", "bucket",
            "--s3-prefix", "cli", "--export-format", "DYNAMODB_JSON",
        )  # fmt: skip
        assert code == 0, err
        export_arn = json.loads(out)["ExportDescription"]["ExportArn"]
        wait_export(ddb, export_arn)
        code, out, err = aws(server.url, "describe-export", "--export-arn", export_arn)
        assert code == 0, err
        done = json.loads(out)["ExportDescription"]
        assert (done["ExportStatus"], done["ItemCount"]) == ("COMPLETED", 12)
        code, out, err = aws(server.url, "list-exports", "--table-arn", arn)
        assert code == 0, err
        assert [summary["ExportArn"] for summary in json.loads(out)["ExportSummaries"]] == [export_arn]
        data = str(Path(done["ExportManifest"]).parent / "data") + "/"
        code, out, err = aws(
            server.url, "import-table", "--s3-bucket-source", f"S3Bucket=bucket,S3KeyPrefix={data}",
            "--input-format", "DYNAMODB_JSON", "--input-compression-type", "GZIP",
            "--table-creation-parameters", json.dumps({"TableName": "clicopy", **KEYS}),
        )  # fmt: skip
        assert code == 0, err
        import_arn = json.loads(out)["ImportTableDescription"]["ImportArn"]
        wait_import(ddb, import_arn)
        code, out, err = aws(server.url, "describe-import", "--import-arn", import_arn)
        assert code == 0, err
        imported = json.loads(out)["ImportTableDescription"]
        assert (imported["ImportStatus"], imported["ImportedItemCount"]) == ("COMPLETED", 12)
        assert scan_all(ddb, "clicopy") == scan_all(ddb, "clisource")
        code, out, err = aws(server.url, "list-imports", "--table-arn", ACCOUNT_ARN + "clicopy")
        assert code == 0, err
        assert [summary["ImportArn"] for summary in json.loads(out)["ImportSummaryList"]] == [import_arn]

    def test_an_export_of_a_missing_table_through_the_cli(self, server: ServerProcess) -> None:
        arn = ACCOUNT_ARN + "noclitable"
        code, _, err = aws(server.url, "export-table-to-point-in-time", "--table-arn", arn, "--s3-bucket", "bucket")
        assert code != 0
        assert (
            "An error occurred (TableNotFoundException) when calling the ExportTableToPointInTime operation: "
            f"Table not found: {arn}" in err
        )
