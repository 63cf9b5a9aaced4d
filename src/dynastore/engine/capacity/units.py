"""Capacity units as DynamoDB counts them, in integer half-units so sums never drift.

Reads: ceil(bytes / 4 KB) units, half for eventually consistent reads, at least one unit (half a unit for an
eventually consistent read) even when nothing is found. Writes: ceil(bytes / 1 KB) of the larger of the old and
new item, at least one unit. Transactional reads and writes cost double.
"""

from __future__ import annotations

from typing import Any

from dynastore.limits import READ_UNIT_BYTES, WRITE_UNIT_BYTES


def read_half_units(size_bytes: int, *, consistent: bool, transactional: bool = False) -> int:
    units = max(1, -(-size_bytes // READ_UNIT_BYTES))
    if transactional:
        return units * 4
    return units * 2 if consistent else units


def write_half_units(size_bytes: int, *, transactional: bool = False) -> int:
    units = max(1, -(-size_bytes // WRITE_UNIT_BYTES))
    return units * (4 if transactional else 2)


def consumed_capacity(
    mode: str | None,
    table_name: str,
    table_half_units: int,
    *,
    lsi_half_units: dict[str, int] | None = None,
    gsi_half_units: dict[str, int] | None = None,
) -> dict[str, Any] | None:
    """The ConsumedCapacity member for ReturnConsumedCapacity ``mode`` (None or NONE: nothing)."""
    if mode is None or mode == "NONE":
        return None
    total = table_half_units + sum((lsi_half_units or {}).values()) + sum((gsi_half_units or {}).values())
    result: dict[str, Any] = {"TableName": table_name, "CapacityUnits": total / 2}
    if mode == "INDEXES":
        result["Table"] = {"CapacityUnits": table_half_units / 2}
        if lsi_half_units:
            result["LocalSecondaryIndexes"] = {n: {"CapacityUnits": u / 2} for n, u in lsi_half_units.items()}
        if gsi_half_units:
            result["GlobalSecondaryIndexes"] = {n: {"CapacityUnits": u / 2} for n, u in gsi_half_units.items()}
    return result
