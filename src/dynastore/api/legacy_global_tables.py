"""The version 2017.11.29 (legacy) global-table operations that read: DescribeGlobalTable, ListGlobalTables and
DescribeGlobalTableSettings.

They see only legacy global tables: DynamoDB's DescribeGlobalTable answers GlobalTableNotFoundException for a
version 2019.11.21 global table (the Developer Guide's way of telling the versions apart), and ListGlobalTables
lists legacy ones only. dynastore makes no legacy global table (CreateGlobalTable, UpdateGlobalTable and
UpdateGlobalTableSettings wait, docs/operations.md), so these answer as DynamoDB does for an account that has
none: not found, and an empty list. Replicas are made with UpdateTable's ReplicaUpdates (api/replica_updates.py).
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.engine.context import Context
from dynastore.errors import GlobalTableNotFoundException

__all__ = ["handle_describe", "handle_describe_settings", "handle_list"]


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    raise GlobalTableNotFoundException(messages.GLOBAL_TABLE_NOT_FOUND.format(name=req["GlobalTableName"]))


def handle_describe_settings(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    raise GlobalTableNotFoundException(messages.GLOBAL_TABLE_NOT_FOUND.format(name=req["GlobalTableName"]))


def handle_list(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"GlobalTables": []}
