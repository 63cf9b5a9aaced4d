"""ListTables: table names in ascending order, paged by Limit / ExclusiveStartTableName."""

from __future__ import annotations

import bisect
from typing import Any

from dynastore.engine.context import Context

__all__ = ["handle", "DEFAULT_LIMIT"]

DEFAULT_LIMIT = 100


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``LastEvaluatedTableName`` is returned only when more names follow the page."""
    names = ctx.catalog.list_names()
    start = req.get("ExclusiveStartTableName")
    first = 0 if start is None else bisect.bisect_right(names, start)
    limit = req.get("Limit") or DEFAULT_LIMIT
    page = names[first : first + limit]
    out: dict[str, Any] = {"TableNames": page}
    if page and first + limit < len(names):
        out["LastEvaluatedTableName"] = page[-1]
    return out
