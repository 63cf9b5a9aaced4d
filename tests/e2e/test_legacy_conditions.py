"""Legacy conditions (Expected, QueryFilter / ScanFilter, ConditionalOperator) through boto3: operands are
validated before anything is evaluated, and NOT_CONTAINS is false on a missing attribute."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import error_of

PREFIX = "1 validation error detected: "
INVALID = PREFIX + "One or more parameter values were invalid: "
ALONE = PREFIX + "ConditionalOperator cannot be used without Filter or Expected"
ONE = PREFIX + "ConditionalOperator can only be used when Filter or Expected has two or more elements"
SAME_TYPE = INVALID + "AttributeValues inside AttributeValueList must be of same type"
BOUNDS = PREFIX + "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"


def _not_valid(op: str, type_name: str) -> str:
    return INVALID + f"ComparisonOperator {op} is not valid for {type_name} AttributeValue type"


def _cond(op: str, *values: dict[str, Any]) -> dict[str, Any]:
    return {"ComparisonOperator": op, "AttributeValueList": list(values)}


@pytest.fixture()
def item(ddb: Any, table_s: str) -> dict[str, Any]:
    key = {"pk": {"S": "legacy-item"}}
    ddb.put_item(TableName=table_s, Item={**key, "a": {"N": "1"}, "s": {"S": "hello"}, "z": {"N": "0"}})
    return key


def _update(ddb: Any, table: str, key: dict[str, Any], expected: dict[str, Any], **extra: Any) -> Any:
    return ddb.update_item(
        TableName=table,
        Key=key,
        AttributeUpdates={"z": {"Value": {"N": "9"}, "Action": "PUT"}},
        Expected=expected,
        **extra,
    )


class TestExpectedOperands:
    @pytest.mark.parametrize(
        ("op", "values", "message"),
        [
            ("LE", [{"L": [{"N": "1"}]}], _not_valid("LE", "L")),
            ("BEGINS_WITH", [{"N": "3"}], _not_valid("BEGINS_WITH", "N")),
            ("CONTAINS", [{"L": [{"N": "1"}]}], _not_valid("CONTAINS", "L")),
            ("IN", [{"L": [{"N": "1"}]}], _not_valid("IN", "L")),
            ("BETWEEN", [{"NS": ["1"]}, {"NS": ["2"]}], _not_valid("BETWEEN", "NS")),
            ("IN", [{"N": "3"}, {"S": "dog"}], SAME_TYPE),
            ("BETWEEN", [{"N": "4"}, {"S": "dog"}], SAME_TYPE),
            ("BETWEEN", [{"N": "4"}, {"N": "3"}], BOUNDS),
            ("BETWEEN", [{"S": "dog"}, {"S": "aardvark"}], BOUNDS),
        ],
    )
    def test_bad_operand_is_a_validation_error(
        self, ddb: Any, table_s: str, item: dict[str, Any], op: str, values: list[Any], message: str
    ) -> None:
        code, text = error_of(lambda: _update(ddb, table_s, item, {"a": _cond(op, *values)}))
        assert (code, text) == ("ValidationException", message)
        assert ddb.get_item(TableName=table_s, Key=item)["Item"]["z"] == {"N": "0"}

    def test_a_value_of_another_type_is_a_failed_condition(self, ddb: Any, table_s: str, item: dict[str, Any]) -> None:
        code, _ = error_of(lambda: _update(ddb, table_s, item, {"a": _cond("BEGINS_WITH", {"S": "x"})}))
        assert code == "ConditionalCheckFailedException"

    def test_not_contains_is_false_on_a_missing_attribute(self, ddb: Any, table_s: str, item: dict[str, Any]) -> None:
        code, _ = error_of(lambda: _update(ddb, table_s, item, {"missing": _cond("NOT_CONTAINS", {"N": "1"})}))
        assert code == "ConditionalCheckFailedException"
        _update(ddb, table_s, item, {"s": _cond("NOT_CONTAINS", {"S": "dog"})})
        assert ddb.get_item(TableName=table_s, Key=item)["Item"]["z"] == {"N": "9"}

    def test_ne_is_true_on_a_missing_attribute(self, ddb: Any, table_s: str, item: dict[str, Any]) -> None:
        _update(ddb, table_s, item, {"missing": _cond("NE", {"N": "1"})})
        assert ddb.get_item(TableName=table_s, Key=item)["Item"]["z"] == {"N": "9"}


class TestConditionalOperator:
    def test_without_expected(self, ddb: Any, table_s: str, item: dict[str, Any]) -> None:
        calls = [
            lambda: ddb.put_item(TableName=table_s, Item={"pk": {"S": "x"}}, ConditionalOperator="AND"),
            lambda: ddb.delete_item(TableName=table_s, Key=item, ConditionalOperator="OR"),
            lambda: _update(ddb, table_s, item, {}, ConditionalOperator="OR"),
            lambda: ddb.scan(TableName=table_s, ConditionalOperator="AND"),
            lambda: ddb.scan(TableName=table_s, ConditionalOperator="AND", ScanFilter={}),
            # before the missing key condition
            lambda: ddb.query(TableName=table_s, ConditionalOperator="AND"),
        ]
        for call in calls:
            assert error_of(call) == ("ValidationException", ALONE)

    def test_with_one_condition(self, ddb: Any, table_s: str, item: dict[str, Any]) -> None:
        one = {"a": _cond("EQ", {"N": "1"})}
        calls = [
            lambda: _update(ddb, table_s, item, one, ConditionalOperator="AND"),
            lambda: ddb.scan(TableName=table_s, ConditionalOperator="OR", ScanFilter=one),
            lambda: ddb.query(
                TableName=table_s,
                ConditionalOperator="AND",
                KeyConditions={"pk": _cond("EQ", {"S": "legacy-item"})},
                QueryFilter=one,
            ),
        ]
        for call in calls:
            assert error_of(call) == ("ValidationException", ONE)

    def test_with_two_conditions(self, ddb: Any, table_s: str, item: dict[str, Any]) -> None:
        two = {"a": _cond("EQ", {"N": "2"}), "s": _cond("BEGINS_WITH", {"S": "he"})}
        _update(ddb, table_s, item, two, ConditionalOperator="OR")
        assert ddb.get_item(TableName=table_s, Key=item)["Item"]["z"] == {"N": "9"}

    def test_counts_as_a_legacy_parameter(self, ddb: Any, table_s: str, item: dict[str, Any]) -> None:
        code, text = error_of(
            lambda: ddb.update_item(
                TableName=table_s,
                Key=item,
                ConditionalOperator="AND",
                UpdateExpression="SET a = :v",
                ExpressionAttributeValues={":v": {"S": "x"}},
            )
        )
        assert code == "ValidationException"
        assert text == (
            "1 validation error detected: "
            "Can not use both expression and non-expression parameters in the same request: "
            "Non-expression parameters: {ConditionalOperator} Expression parameters: {UpdateExpression}"
        )


class TestFilters:
    def test_scan_filter_not_contains_skips_missing_attributes(
        self, ddb: Any, table_s: str, item: dict[str, Any]
    ) -> None:
        result = ddb.scan(
            TableName=table_s,
            ScanFilter={"pk": _cond("EQ", {"S": "legacy-item"}), "missing": _cond("NOT_CONTAINS", {"S": "x"})},
        )
        assert result["Count"] == 0

    def test_scan_filter_in_with_a_list(self, ddb: Any, table_s: str) -> None:
        code, text = error_of(lambda: ddb.scan(TableName=table_s, ScanFilter={"a": _cond("IN", {"L": []})}))
        assert (code, text) == ("ValidationException", _not_valid("IN", "L"))
