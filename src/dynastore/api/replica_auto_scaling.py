"""DescribeTableReplicaAutoScaling and UpdateTableReplicaAutoScaling.

dynastore has no auto scaling: no table has a scaling policy. DescribeTableReplicaAutoScaling answers what
DynamoDB answers for a table without one: every region of the table's replica set (its own first, then the
other replicas as DescribeTable lists them) with its status and its global secondary indexes, and no
``...AutoScalingSettings`` member. UpdateTableReplicaAutoScaling cannot apply a policy: it refuses every
request once the table is found (docs/global-tables.md "Auto scaling").
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.engine.context import Context
from dynastore.errors import ValidationException
from dynastore.model.table_schema import ACTIVE, TableDef

__all__ = ["handle_describe", "handle_update"]


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    td = ctx.catalog.get(req["TableName"])  # ResourceNotFoundException
    return {"TableAutoScalingDescription": auto_scaling_description(td, ctx.namespace.region)}


def auto_scaling_description(td: TableDef, region: str) -> dict[str, Any]:
    """The ``TableAutoScalingDescription`` of a table without scaling policies."""
    indexes = [{"IndexName": g.name, "IndexStatus": g.status} for g in td.gsis]
    regions = [(region, ACTIVE if td.status != "DELETING" else td.status)]
    regions += [(r.region, r.status) for r in td.replicas]
    replicas: list[dict[str, Any]] = []
    for name, status in regions:
        replica: dict[str, Any] = {"RegionName": name, "GlobalSecondaryIndexes": indexes, "ReplicaStatus": status}
        replicas.append(replica)
    return {"TableName": td.name, "TableStatus": td.status, "Replicas": replicas}


def handle_update(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    td = ctx.catalog.get(req["TableName"])  # ResourceNotFoundException
    raise ValidationException(messages.AUTO_SCALING_NOT_SUPPORTED.format(name=td.name), bare=True)
