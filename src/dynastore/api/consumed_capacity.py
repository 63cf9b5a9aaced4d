"""The wire ``ConsumedCapacity`` member, from the half-units engine/capacity/units.py counts.

Every data-plane operation answers with it when ReturnConsumedCapacity asks: TOTAL gives the table name and the
units of the whole request; INDEXES adds the table's own units and each index's; NONE (or no member) nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["consumed_capacity"]


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
