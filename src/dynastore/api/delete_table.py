"""DeleteTable: the table turns DELETING; its items are purged in bounded chunks by the catalog.

A replica of a global table with multi-Region strong consistency is not deleted alone while the other Regions
are there (api/multi_region_strong.py): UpdateTable takes them away first."""

from __future__ import annotations

from typing import Any

from dynastore.api.multi_region_strong import check_table_deletable
from dynastore.api.table_description import table_description
from dynastore.engine import tables
from dynastore.engine.context import Context

__all__ = ["handle"]


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Errors (from ``Catalog.delete``): ResourceNotFoundException; ResourceInUseException while the table is
    CREATING, UPDATING or DELETING; ValidationException when deletion protection is on, or for a replica of a
    strongly consistent global table."""
    check_table_deletable(ctx, req["TableName"])
    table = tables.delete(ctx, req["TableName"])
    desc = table_description(ctx, table, warm=False)
    for member in _NOT_IN_DELETE_RESPONSE:
        desc.pop(member, None)
    return {"TableDescription": desc}


# DynamoDB's DeleteTable response leaves out the schema, the creation time and the indexes that DescribeTable
# shows (test suites run against DynamoDB); the rest of the description is kept.
_NOT_IN_DELETE_RESPONSE = (
    "AttributeDefinitions",
    "KeySchema",
    "CreationDateTime",
    "LocalSecondaryIndexes",
    "GlobalSecondaryIndexes",
    "WarmThroughput",
)
