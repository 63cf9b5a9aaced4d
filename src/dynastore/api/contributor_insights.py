"""UpdateContributorInsights, DescribeContributorInsights, ListContributorInsights.

Enabling starts per-key counters (engine/capacity/contributors.py) for the table or one of its GSIs; the top keys
are reported by the extension endpoint ``/dynastore/contributors/<table>`` and ``dynastore partitions
--contributors`` (CloudWatch is not there). Update answers ENABLING/DISABLING and the change is complete at
once: Describe and List show ENABLED/DISABLED. The status is persisted with the table's partition map.
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.engine.capacity.contributors import ContributorCounters
from dynastore.engine.capacity.state import Resource, TableState
from dynastore.engine.context import Context
from dynastore.errors import ResourceNotFoundException

__all__ = ["handle_describe", "handle_list", "handle_update"]

_DEFAULT_MODE = "ACCESSED_AND_THROTTLED_KEYS"
_DEFAULT_PAGE = 10


def _table_name(name: str) -> str:
    """A table name, or the name inside a table ARN (``arn:...:table/<name>[/...]``)."""
    if name.startswith("arn:") and ":table/" in name:
        return name.split(":table/", 1)[1].split("/", 1)[0]
    return name


def _resource(ctx: Context, req: dict[str, Any]) -> tuple[TableState, Resource]:
    name = _table_name(req["TableName"])
    td = ctx.catalog.get(name)
    st = ctx.capacity.state(td)
    index = req.get("IndexName")
    if index is None:
        return st, st.base
    res = st.gsis.get(index)
    if res is None:
        raise ResourceNotFoundException(messages.INDEX_NOT_FOUND_FOR_TABLE.format(index=index, name=name))
    return st, res


def handle_update(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    st, res = _resource(ctx, req)
    now = ctx.clock.now()
    mode = req.get("ContributorInsightsMode") or _DEFAULT_MODE
    if req["ContributorInsightsAction"] == "ENABLE":
        res.insights_status = ("ENABLED", mode, now)
        if res.insights is None or res.insights.mode != mode:
            res.insights = ContributorCounters(mode)
        status = "ENABLING"
    else:
        previous = res.insights_status
        res.insights_status = ("DISABLED", previous[1] if previous else mode, now)
        res.insights = None
        status = "DISABLING"
    ctx.capacity.persist(st)
    out: dict[str, Any] = {"TableName": st.td.name}
    if res.index_name is not None:
        out["IndexName"] = res.index_name
    out["ContributorInsightsStatus"] = status
    out["ContributorInsightsMode"] = res.insights_status[1]
    return out


def handle_describe(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    st, res = _resource(ctx, req)
    out: dict[str, Any] = {"TableName": st.td.name}
    if res.index_name is not None:
        out["IndexName"] = res.index_name
    status = res.insights_status
    if status is None:
        out["ContributorInsightsStatus"] = "DISABLED"
        return out
    state, mode, at = status
    if state == "ENABLED":
        out["ContributorInsightsRuleList"] = _rules(st, res, mode, at)
    out["ContributorInsightsStatus"] = state
    out["LastUpdateDateTime"] = at
    out["ContributorInsightsMode"] = mode
    return out


def _rules(st: TableState, res: Resource, mode: str, at: float) -> list[str]:
    resource = st.td.name if res.index_name is None else f"{st.td.name}-{res.index_name}"
    kinds = ["PKC", "PKT"] + (["SKC", "SKT"] if res.range_attr is not None else [])
    if mode == "THROTTLED_KEYS":
        kinds = [k for k in kinds if k.endswith("T")]
    return [f"DynamoDBContributorInsights-{kind}-{resource}-{int(at * 1000)}" for kind in kinds]


def handle_list(req: dict[str, Any], ctx: Context) -> dict[str, Any]:
    cap = ctx.capacity
    names = [_table_name(req["TableName"])] if req.get("TableName") else ctx.catalog.list_names()
    summaries: list[dict[str, Any]] = []
    for name in names:
        td = ctx.catalog.get(name)
        st = cap.state(td)
        for res in st.resources():
            entry: dict[str, Any] = {"TableName": name}
            if res.index_name is not None:
                entry["IndexName"] = res.index_name
            status = res.insights_status
            entry["ContributorInsightsStatus"] = "DISABLED" if status is None else status[0]
            if status is not None:
                entry["ContributorInsightsMode"] = status[1]
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
