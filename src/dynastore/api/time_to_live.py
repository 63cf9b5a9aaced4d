"""UpdateTimeToLive / DescribeTimeToLive: the TTL setting stored on the TableDef (the sweeper is elsewhere).

Time to live cannot be enabled on a global table with multi-Region strong consistency (api/multi_region_strong.py).
Not modelled: DynamoDB's ENABLING/DISABLING states and its cooldown between TTL changes ("Time to live has
been modified multiple times within a fixed interval").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dynastore import messages
from dynastore.api.multi_region_strong import check_ttl_enable
from dynastore.engine import tables
from dynastore.engine.context import Context
from dynastore.errors import ValidationException
from dynastore.model.table_schema import CREATING, DELETING, TableDef, TtlSpec

__all__ = ["handle_describe", "handle_update"]


def handle_update(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    spec = req["TimeToLiveSpecification"]
    enabled = bool(spec["Enabled"])
    attribute: str = spec["AttributeName"]

    def mutate(td: TableDef) -> TableDef:
        current = td.ttl
        if enabled:
            check_ttl_enable(td)
            if current is not None and current.enabled:
                if current.attribute_name != attribute:
                    raise ValidationException(
                        messages.TTL_DIFFERENT_ATTRIBUTE.format(name=current.attribute_name), bare=True
                    )
                raise ValidationException(messages.TTL_ALREADY_ENABLED, bare=True)
            return replace(td, ttl=TtlSpec(attribute, True))
        if current is None or not current.enabled:
            raise ValidationException(messages.TTL_ALREADY_DISABLED, bare=True)
        if current.attribute_name != attribute:
            raise ValidationException(messages.TTL_DIFFERENT_ATTRIBUTE.format(name=current.attribute_name), bare=True)
        return replace(td, ttl=TtlSpec(attribute, False))

    tables.change(ctx, req["TableName"], mutate)
    return {"TimeToLiveSpecification": {"Enabled": enabled, "AttributeName": attribute}}


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    td = ctx.catalog.get(req["TableName"])
    if td.status in (CREATING, DELETING):
        raise ValidationException(messages.TTL_DESCRIBE_WRONG_STATE.format(status=td.status), bare=True)
    if td.ttl is None or not td.ttl.enabled:
        return {"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}
    return {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED", "AttributeName": td.ttl.attribute_name}}
