"""DescribeTable: the table's TableDescription in any status."""

from __future__ import annotations

from typing import Any

from dynastore.api.table_description import table_description
from dynastore.engine.context import Context

__all__ = ["handle"]


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Raises ResourceNotFoundException ``Requested resource not found: Table: <name> not found``."""
    table = ctx.catalog.get(req["TableName"])
    return {"Table": table_description(ctx, table)}
