"""DeleteTable: the table turns DELETING; its items are purged in bounded chunks by the catalog."""

from __future__ import annotations

from typing import Any

from dynastore.api.context import Context

__all__ = ["handle"]


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Errors (from ``Catalog.delete``): ResourceNotFoundException; ResourceInUseException while the table is
    CREATING, UPDATING or DELETING; ValidationException when deletion protection is on."""
    table = ctx.catalog.delete(req["TableName"])
    return {"TableDescription": ctx.catalog.describe(table)}
