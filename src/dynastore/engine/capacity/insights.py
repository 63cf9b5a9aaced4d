"""Contributor Insights as an operation: turning the per-key counters on and off for a table or one of its GSIs,
and their status. The counters themselves are contributors.py; whether they are on is persisted with the table's
capacity state (state.py). A change is complete at once (DynamoDB reports ENABLING / DISABLING, then the final
status)."""

from __future__ import annotations

from dynastore import messages
from dynastore.engine.capacity.contributors import ContributorCounters
from dynastore.engine.capacity.state import Resource, TableState
from dynastore.engine.context import Context
from dynastore.errors import ResourceNotFoundException

__all__ = ["InsightsStatus", "change", "status", "statuses"]

DEFAULT_MODE = "ACCESSED_AND_THROTTLED_KEYS"


class InsightsStatus:
    """Contributor Insights of one table or GSI: ``state`` is ENABLED or DISABLED (None: never configured)."""

    __slots__ = ("table_name", "index_name", "state", "mode", "updated_at", "has_sort_key")

    def __init__(self, st: TableState, res: Resource) -> None:
        self.table_name = st.td.name
        self.index_name = res.index_name
        configured = res.insights_status
        self.state: str | None = None if configured is None else configured[0]
        self.mode: str | None = None if configured is None else configured[1]
        self.updated_at: float | None = None if configured is None else configured[2]
        self.has_sort_key = res.range_attr is not None


def _resource(ctx: Context, table_name: str, index_name: str | None) -> tuple[TableState, Resource]:
    st = ctx.capacity.state(ctx.catalog.get(table_name))
    if index_name is None:
        return st, st.base
    res = st.gsis.get(index_name)
    if res is None:
        raise ResourceNotFoundException(messages.INDEX_NOT_FOUND_FOR_TABLE.format(index=index_name, name=table_name))
    return st, res


def change(ctx: Context, table_name: str, index_name: str | None, *, enable: bool, mode: str | None) -> InsightsStatus:
    """Enable (counting afresh when the mode changes) or disable the counters; persisted at once."""
    st, res = _resource(ctx, table_name, index_name)
    now = ctx.clock.now()
    if enable:
        chosen = mode or DEFAULT_MODE
        res.insights_status = ("ENABLED", chosen, now)
        if res.insights is None or res.insights.mode != chosen:
            res.insights = ContributorCounters(chosen)
    else:
        previous = res.insights_status
        res.insights_status = ("DISABLED", previous[1] if previous else mode or DEFAULT_MODE, now)
        res.insights = None
    ctx.capacity.persist(st)
    return InsightsStatus(st, res)


def status(ctx: Context, table_name: str, index_name: str | None) -> InsightsStatus:
    return InsightsStatus(*_resource(ctx, table_name, index_name))


def statuses(ctx: Context, table_names: list[str]) -> list[InsightsStatus]:
    """The table's and each GSI's status, table by table."""
    out: list[InsightsStatus] = []
    for name in table_names:
        st = ctx.capacity.state(ctx.catalog.get(name))
        out.extend(InsightsStatus(st, res) for res in st.resources())
    return out
