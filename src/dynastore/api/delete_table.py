"""DeleteTable: the table turns DELETING; its items are purged in bounded chunks by the catalog."""

from __future__ import annotations

from typing import Any

from dynastore.api.table_description import table_description
from dynastore.engine import tables
from dynastore.engine.context import Context

__all__ = ["handle"]


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Errors (from ``Catalog.delete``): ResourceNotFoundException; ResourceInUseException while the table is
    CREATING, UPDATING or DELETING; ValidationException when deletion protection is on."""
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
