"""api/consumed_capacity.py: the ConsumedCapacity member in each ReturnConsumedCapacity mode."""

from __future__ import annotations

from dynastore.api.consumed_capacity import consumed_capacity


def test_none_asks_for_nothing() -> None:
    assert consumed_capacity(None, "t", 3) is None
    assert consumed_capacity("NONE", "t", 3, lsi_half_units={"l": 1}, gsi_half_units={"g": 2}) is None


def test_total_sums_the_table_and_its_indexes() -> None:
    assert consumed_capacity("TOTAL", "t", 3) == {"TableName": "t", "CapacityUnits": 1.5}
    assert consumed_capacity("TOTAL", "t", 2, lsi_half_units={"l": 1}, gsi_half_units={"g": 2}) == {
        "TableName": "t",
        "CapacityUnits": 2.5,
    }


def test_indexes_breaks_the_total_down() -> None:
    assert consumed_capacity("INDEXES", "t", 2, gsi_half_units={"g": 2}, lsi_half_units={"l": 1}) == {
        "TableName": "t",
        "CapacityUnits": 2.5,
        "Table": {"CapacityUnits": 1.0},
        "LocalSecondaryIndexes": {"l": {"CapacityUnits": 0.5}},
        "GlobalSecondaryIndexes": {"g": {"CapacityUnits": 1.0}},
    }


def test_indexes_without_index_units_lists_only_the_table() -> None:
    # The table named as the request named it (an ARN stays an ARN); empty index maps add no member.
    assert consumed_capacity("INDEXES", "arn:aws:dynamodb:us-east-1:000000000000:table/t", 0, gsi_half_units={}) == {
        "TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/t",
        "CapacityUnits": 0.0,
        "Table": {"CapacityUnits": 0.0},
    }
