"""UpdateContributorInsights, DescribeContributorInsights, ListContributorInsights.

Enabling starts per-key counters (engine/capacity/insights.py) for the table or one of its GSIs; the top keys
are reported by the extension endpoint ``/dynastore/contributors/<table>`` and ``dynastore partitions
--contributors`` (CloudWatch is not there). Update answers ENABLING/DISABLING and the change is complete at
once: Describe and List show ENABLED/DISABLED. The status is persisted with the table's partition map.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.engine.capacity import insights
from dynastore.engine.capacity.insights import InsightsStatus
from dynastore.engine.context import Context
from dynastore.errors import AccessDeniedException

__all__ = ["handle_describe", "handle_list", "handle_update"]

_DEFAULT_PAGE = 10


def _table_name(ctx: Context, name: str) -> str:
    """A table name, or the name inside a table ARN (``arn:...:table/<name>[/...]``) of the caller's account and
    region (another's answers AccessDeniedException, as a table ARN given as any TableName does)."""
    if name.startswith("arn:") and ":table/" in name:
        head, resource = name.split(":table/", 1)
        fields = head.split(":")
        if len(fields) == 5 and (fields[3], fields[4]) != (ctx.namespace.region, ctx.namespace.account_id):
            raise AccessDeniedException(messages.ACCESS_DENIED)
        return resource.split("/", 1)[0]
    return name


def _named(status: InsightsStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"TableName": status.table_name}
    if status.index_name is not None:
        out["IndexName"] = status.index_name
    return out


def handle_update(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    enable = req["ContributorInsightsAction"] == "ENABLE"
    name = _table_name(ctx, req["TableName"])
    status = insights.change(ctx, name, req.get("IndexName"), enable=enable, mode=req.get("ContributorInsightsMode"))
    out = _named(status)
    out["ContributorInsightsStatus"] = "ENABLING" if enable else "DISABLING"
    out["ContributorInsightsMode"] = status.mode
    return out


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    status = insights.status(ctx, _table_name(ctx, req["TableName"]), req.get("IndexName"))
    out = _named(status)
    if status.state is None:
        out["ContributorInsightsStatus"] = "DISABLED"
        return out
    assert status.mode is not None and status.updated_at is not None
    if status.state == "ENABLED":
        out["ContributorInsightsRuleList"] = _rules(status, status.mode, status.updated_at)
    out["ContributorInsightsStatus"] = status.state
    out["LastUpdateDateTime"] = status.updated_at
    out["ContributorInsightsMode"] = status.mode
    return out


def _rules(status: InsightsStatus, mode: str, at: float) -> list[str]:
    resource = status.table_name if status.index_name is None else f"{status.table_name}-{status.index_name}"
    kinds = ["PKC", "PKT"] + (["SKC", "SKT"] if status.has_sort_key else [])
    if mode == "THROTTLED_KEYS":
        kinds = [k for k in kinds if k.endswith("T")]
    return [f"DynamoDBContributorInsights-{kind}-{resource}-{int(at * 1000)}" for kind in kinds]


def handle_list(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    names = [_table_name(ctx, req["TableName"])] if req.get("TableName") else ctx.catalog.list_names()
    summaries: list[dict[str, Any]] = []
    for status in insights.statuses(ctx, names):
        entry = _named(status)
        entry["ContributorInsightsStatus"] = "DISABLED" if status.state is None else status.state
        if status.mode is not None:
            entry["ContributorInsightsMode"] = status.mode
        summaries.append(entry)
    start = 0
    token = req.get("NextToken")
    if token:
        start = int(token) if token.isdigit() else 0
    size = req.get("MaxResults") or _DEFAULT_PAGE
    page = summaries[start : start + size]
    out: dict[str, Any] = {"ContributorInsightsSummaries": page}
    if start + size < len(summaries):
        out["NextToken"] = str(start + size)
    return out
