"""The data path of multi-Region strong consistency (docs/global-tables.md "Multi-Region strong consistency (MRSC)")
with every region served by one dynastore: a write in any region is in every replica when it is answered, so a
strongly consistent read in another region sees it at once, whatever the operation that wrote or reads it; a
conditional write is evaluated against the newest write of any region."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import aws, create_table, error_of, needs_aws_cli
from tests.e2e.test_global_tables_strong_api import client_in, create_in, strong, wait_settled

pytestmark = pytest.mark.not_on_cluster("global tables are served by a single dynastore and its peers")

OTHERS = ("us-east-2", "us-west-2")


@pytest.fixture(scope="module")
def regions(request: pytest.FixtureRequest) -> dict[str, Any]:
    return {region: client_in(request, region) for region in ("us-east-1", *OTHERS)}


@pytest.fixture
def table(regions: dict[str, Any]) -> str:
    """An ACTIVE MRSC table with replicas in the three regions."""
    ddb = regions["us-east-1"]
    name = create_table(ddb, "S")
    strong(ddb, name, *(create_in(region) for region in OTHERS))
    wait_settled(ddb, name, 2)
    return name


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


def strongly_read(ddb: Any, table: str, pk: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = ddb.get_item(TableName=table, Key=key(pk), ConsistentRead=True).get("Item")
    return found


def test_a_write_in_one_region_is_read_strongly_at_once_in_the_others(regions: dict[str, Any], table: str) -> None:
    names = list(regions)
    for i in range(12):
        writer, reader = regions[names[i % 3]], regions[names[(i + 1) % 3]]
        writer.put_item(TableName=table, Item={**key(f"k{i}"), "v": {"N": str(i)}})
        assert strongly_read(reader, table, f"k{i}") == {**key(f"k{i}"), "v": {"N": str(i)}}


def test_every_read_sees_the_write(regions: dict[str, Any], table: str) -> None:
    regions["us-east-2"].put_item(TableName=table, Item={**key("a"), "v": {"S": "one"}})
    ddb = regions["us-west-2"]
    expected = [{**key("a"), "v": {"S": "one"}}]
    query = ddb.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "a"}},
        ConsistentRead=True,
    )
    assert query["Items"] == expected
    assert ddb.scan(TableName=table, ConsistentRead=True)["Items"] == expected
    batch = ddb.batch_get_item(RequestItems={table: {"Keys": [key("a")], "ConsistentRead": True}})
    assert batch["Responses"][table] == expected
    select = ddb.execute_statement(Statement=f"SELECT * FROM \"{table}\" WHERE pk = 'a'", ConsistentRead=True)
    assert select["Items"] == expected
    assert ddb.scan(TableName=table)["Items"] == expected  # eventually consistent: there already


def test_a_conditional_write_sees_the_newest_write_of_any_region(regions: dict[str, Any], table: str) -> None:
    east, ohio, oregon = regions["us-east-1"], regions["us-east-2"], regions["us-west-2"]
    east.put_item(TableName=table, Item={**key("c"), "n": {"N": "1"}})
    increment = {
        "TableName": table,
        "Key": key("c"),
        "UpdateExpression": "SET n = n + :one",
        "ConditionExpression": "n = :seen",
        "ExpressionAttributeValues": {":one": {"N": "1"}, ":seen": {"N": "1"}},
        "ReturnValues": "ALL_NEW",
    }
    assert ohio.update_item(**increment)["Attributes"] == {**key("c"), "n": {"N": "2"}}
    code, message = error_of(lambda: oregon.update_item(**increment))  # it saw 1 too: refused
    assert (code, message) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert strongly_read(east, table, "c") == {**key("c"), "n": {"N": "2"}}


def test_deletes_batches_and_statements_reach_every_region(regions: dict[str, Any], table: str) -> None:
    east, ohio, oregon = regions["us-east-1"], regions["us-east-2"], regions["us-west-2"]
    east.put_item(TableName=table, Item=key("d"))
    old = ohio.delete_item(TableName=table, Key=key("d"), ReturnValues="ALL_OLD")["Attributes"]
    assert old == key("d")
    assert strongly_read(oregon, table, "d") is None
    answer = oregon.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": key("b1")}}]})
    assert answer["UnprocessedItems"] == {}
    assert strongly_read(east, table, "b1") == key("b1")
    ohio.execute_statement(Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'p1', 'v': 7}}")
    assert strongly_read(oregon, table, "p1") == {**key("p1"), "v": {"N": "7"}}
    ohio.batch_execute_statement(Statements=[{"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'p1'"}])
    assert strongly_read(east, table, "p1") is None


@needs_aws_cli
def test_the_aws_cli_makes_and_uses_an_mrsc_table(endpoint: str, ddb: Any, signed_as: dict[str, str] | None) -> None:
    name = create_table(ddb, "S")
    replicas = json.dumps([{"Create": {"RegionName": region}} for region in OTHERS])
    code, out, err = aws(
        endpoint,
        "update-table",
        "--table-name", name,
        "--replica-updates", replicas,
        "--multi-region-consistency", "STRONG",
        signed_as=signed_as,
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["TableDescription"]["TableStatus"] == "UPDATING"
    wait_settled(ddb, name, 2)
    code, out, err = aws(endpoint, "describe-table", "--table-name", name, "--region", "us-west-2", signed_as=signed_as)
    assert code == 0, err
    assert json.loads(out)["Table"]["MultiRegionConsistency"] == "STRONG"
    item = json.dumps({"pk": {"S": "cli"}, "v": {"N": "1"}})
    code, _, err = aws(endpoint, "put-item", "--table-name", name, "--item", item, signed_as=signed_as)
    assert code == 0, err
    key_json = json.dumps(key("cli"))
    code, out, err = aws(
        endpoint,
        "get-item",
        "--table-name", name,
        "--key", key_json,
        "--consistent-read",
        "--region", "us-east-2",
        signed_as=signed_as,
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["Item"] == {"pk": {"S": "cli"}, "v": {"N": "1"}}
