"""Key-schema problems as transactions report them, apart from empty and oversized key values."""

from __future__ import annotations

from dynastore.engine.keys import key_schema_problem
from dynastore.model.table_schema import KeyAttr, KeySchema, TableDef

TABLE = TableDef("t", 1, "u", KeySchema(KeyAttr("pk", "S"), KeyAttr("sk", "N")), (), 0.0)
MISMATCH = "The provided key element does not match the schema"


def test_keys_that_fit() -> None:
    assert key_schema_problem(TABLE, {"pk": {"S": "a"}, "sk": {"N": "1"}}, is_full_item=False) is None
    assert key_schema_problem(TABLE, {"pk": {"S": ""}, "sk": {"N": "1"}, "x": {"S": "y"}}, is_full_item=True) is None


def test_a_key_parameter_that_does_not_fit() -> None:
    for key in ({}, {"pk": {"S": "a"}}, {"pk": {"N": "1"}, "sk": {"N": "1"}}, {"pk": {"S": "a"}, "x": {"N": "1"}}):
        assert key_schema_problem(TABLE, key, is_full_item=False) == MISMATCH


def test_an_item_that_does_not_fit() -> None:
    assert key_schema_problem(TABLE, {"pk": {"S": "a"}}, is_full_item=True) == (
        "One or more parameter values were invalid: Missing the key sk in the item"
    )
    assert key_schema_problem(TABLE, {"pk": {"L": []}, "sk": {"N": "1"}}, is_full_item=True) == (
        "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: L"
    )
