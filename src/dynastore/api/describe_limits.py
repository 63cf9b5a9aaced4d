"""DescribeLimits: DynamoDB's default account and table capacity quotas."""

from __future__ import annotations

from typing import Any

from dynastore import limits
from dynastore.engine.context import Context

__all__ = ["handle"]


def handle(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {
        "AccountMaxReadCapacityUnits": limits.ACCOUNT_MAX_READ_CAPACITY,
        "AccountMaxWriteCapacityUnits": limits.ACCOUNT_MAX_WRITE_CAPACITY,
        "TableMaxReadCapacityUnits": limits.TABLE_MAX_READ_CAPACITY,
        "TableMaxWriteCapacityUnits": limits.TABLE_MAX_WRITE_CAPACITY,
    }
