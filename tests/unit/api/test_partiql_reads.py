"""api/partiql_reads.py: a SELECT that names one item by its whole key reads it as GetItem does (no range read),
with the same answer and the same capacity as the Query of that key."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from dynastore.api import partiql_reads
from tests.unit.api.operations import make_ctx

TABLE = "orders"


@pytest.fixture
def ops() -> dict[str, Any]:
    _, ops, _ = make_ctx()
    ops["CreateTable"](
        {
            "TableName": TABLE,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "N"},
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
    )
    for sk in ("1", "2"):
        ops["PutItem"]({"TableName": TABLE, "Item": {"pk": {"S": "a"}, "sk": {"N": sk}, "v": {"S": "x" * 5000}}})
    return ops


def select(ops: dict[str, Any], where: str, *params: dict[str, Any]) -> Any:
    request: dict[str, Any] = {"Statement": f"SELECT pk, sk FROM {TABLE} WHERE {where}"}
    if params:
        request["Parameters"] = list(params)
    return orjson.loads(ops["ExecuteStatement"]({**request, "ReturnConsumedCapacity": "TOTAL"}))


@pytest.mark.parametrize(
    ("where", "params"),
    [
        ("pk = ? AND sk = ?", [{"S": "a"}, {"N": "2"}]),
        ("sk = 2 AND 'a' = pk", []),
    ],
)
def test_a_select_of_one_item_by_its_whole_key_reads_no_range(
    ops: dict[str, Any], monkeypatch: pytest.MonkeyPatch, where: str, params: list[dict[str, Any]]
) -> None:
    monkeypatch.setattr(partiql_reads, "read_page", lambda *_: pytest.fail("a range was read"))
    answer = select(ops, where, *params)
    assert answer["Items"] == [{"pk": {"S": "a"}, "sk": {"N": "2"}}]
    assert answer["ConsumedCapacity"] == {"TableName": TABLE, "CapacityUnits": 1.0}  # 5 KB, eventually consistent


def test_a_missing_item_costs_the_minimum_read(ops: dict[str, Any]) -> None:
    answer = select(ops, "pk = 'a' AND sk = 9")
    assert answer["Items"] == []
    assert answer["ConsumedCapacity"] == {"TableName": TABLE, "CapacityUnits": 0.5}


@pytest.mark.parametrize("where", ["pk = 'a'", "pk = 'a' AND sk >= 1", "pk = 'a' AND sk = 1 AND v = 'y'"])
def test_other_reads_of_a_partition_read_its_range(ops: dict[str, Any], where: str) -> None:
    expected = {"pk = 'a'": 2, "pk = 'a' AND sk >= 1": 2, "pk = 'a' AND sk = 1 AND v = 'y'": 0}[where]
    assert len(select(ops, where)["Items"]) == expected
