"""api/item_requests.py: the request semantics the single-item operations share, on typed engine results."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.api.item_requests import (
    add_write_capacity,
    conditional_check_failed,
    expression_context,
    item_collection_metrics,
    write_condition,
)
from dynastore.engine.indexes import IndexEffects
from dynastore.engine.writes import ConditionFailedError, WriteResult
from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionCache, evaluate
from dynastore.model.table_schema import IndexDef, KeyAttr, KeySchema, Projection, TableDef

PK = KeyAttr("pk", "S")
SK = KeyAttr("sk", "S")
TABLE = TableDef("t", 1, "uuid", KeySchema(PK, SK), (PK, SK), 0.0)
LSI = IndexDef("by_x", "LSI", KeySchema(PK, KeyAttr("x", "S")), Projection("ALL"), 2)
GSI = IndexDef("by_y", "GSI", KeySchema(KeyAttr("y", "S")), Projection("KEYS_ONLY"), 3)
ITEM = {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": "5"}}


def _condition(req: dict[str, Any]) -> Any:
    exprs = expression_context(req, ExpressionCache())
    condition = write_condition(req, exprs)
    exprs.check_unused()
    return condition


def test_a_condition_expression_and_the_legacy_expected_give_the_same_condition() -> None:
    expression = _condition({"ConditionExpression": "n = :v", "ExpressionAttributeValues": {":v": {"N": "5"}}})
    legacy = _condition({"Expected": {"n": {"Value": {"N": "5"}}}})
    for condition in (expression, legacy):
        assert evaluate(condition, ITEM)
        assert not evaluate(condition, {**ITEM, "n": {"N": "6"}})
    assert _condition({}) is None


def test_an_unused_expression_value_is_refused() -> None:
    with pytest.raises(ValidationException) as e:
        _condition({"ConditionExpression": "n = :v", "ExpressionAttributeValues": {":v": {"N": "5"}, ":w": {"N": "1"}}})
    assert e.value.detail == "Value provided in ExpressionAttributeValues unused in expressions: keys: {:w}"


def test_a_failed_condition_returns_the_old_item_only_when_asked() -> None:
    failed = ConditionFailedError(ITEM)
    assert conditional_check_failed({"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}, failed).extra == {"Item": ITEM}
    assert conditional_check_failed({}, failed).extra == {}
    assert (
        conditional_check_failed({"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}, ConditionFailedError(None)).extra
        == {}
    )


def _result(old_size: int, new_size: int, effects: IndexEffects | None = None) -> WriteResult:
    return WriteResult(old_size > 0, None, ITEM if new_size else None, old_size, new_size, index=effects)


def test_write_capacity_is_the_larger_item_and_each_index_as_asked() -> None:
    effects = IndexEffects(units=[(LSI, 2), (GSI, 4)], collection_key={"pk": {"S": "a"}}, collection_size=3 * 1024**3)
    result = _result(1500, 900, effects)
    total: dict[str, Any] = {}
    add_write_capacity(total, {"TableName": "t", "ReturnConsumedCapacity": "TOTAL"}, TABLE, result)
    assert total == {"ConsumedCapacity": {"TableName": "t", "CapacityUnits": 5.0}}
    indexes: dict[str, Any] = {}
    request = {"TableName": "t", "ReturnConsumedCapacity": "INDEXES", "ReturnItemCollectionMetrics": "SIZE"}
    add_write_capacity(indexes, request, TABLE, result)
    assert indexes == {
        "ConsumedCapacity": {
            "TableName": "t",
            "CapacityUnits": 5.0,
            "Table": {"CapacityUnits": 2.0},
            "LocalSecondaryIndexes": {"by_x": {"CapacityUnits": 1.0}},
            "GlobalSecondaryIndexes": {"by_y": {"CapacityUnits": 2.0}},
        },
        "ItemCollectionMetrics": {"ItemCollectionKey": {"pk": {"S": "a"}}, "SizeEstimateRangeGB": [3.0, 4.0]},
    }
    nothing: dict[str, Any] = {}
    add_write_capacity(nothing, {"TableName": "t", "ReturnConsumedCapacity": "NONE"}, TABLE, _result(0, 10))
    assert nothing == {}


def test_batch_item_collection_metrics_keep_one_entry_per_collection_with_its_last_size() -> None:
    first = IndexEffects(collection_key={"pk": {"S": "a"}}, collection_size=10)
    second = IndexEffects(collection_key={"pk": {"S": "a"}}, collection_size=2 * 1024**3)
    other = IndexEffects(collection_key={"pk": {"S": "b"}}, collection_size=0)
    written = [(TABLE, _result(0, 10, first)), (TABLE, _result(0, 10, second)), (TABLE, _result(0, 10, other))]
    assert item_collection_metrics(written) == {
        "t": [
            {"ItemCollectionKey": {"pk": {"S": "a"}}, "SizeEstimateRangeGB": [2.0, 3.0]},
            {"ItemCollectionKey": {"pk": {"S": "b"}}, "SizeEstimateRangeGB": [0.0, 1.0]},
        ]
    }
    assert item_collection_metrics([(TABLE, _result(0, 10))]) == {}
