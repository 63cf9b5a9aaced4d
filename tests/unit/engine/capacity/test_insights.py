"""Contributor Insights as an operation (engine/capacity/insights.py): turning the counters of a table or one
of its GSIs on and off, their status, and an unknown index."""

from __future__ import annotations

import pytest

from dynastore.engine import writes
from dynastore.engine.capacity import insights
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import ResourceNotFoundException
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import KeyAttr, TableDef
from dynastore.model.values import Item
from tests.unit.engine.tables import T0, create, gsi, make_ctx, restart

COLOR = KeyAttr("color", "S")


def table_with_gsi(ctx: Context, name: str = "paint") -> TableDef:
    return create(
        ctx,
        name,
        100,
        100,
        range_key=KeyAttr("sk", "N"),
        more_attributes=(COLOR,),
        gsis=(gsi(ctx, "by-color", COLOR, 100, 100),),
    )


def put(ctx: Context, td: TableDef, item: Item) -> None:
    writes.perform(ctx, td, storage_key(td, item), writes.PutPlan(item, size=item_size(item)))


def state(status: insights.InsightsStatus) -> tuple[str | None, str | None, str | None, float | None, bool]:
    return status.index_name, status.state, status.mode, status.updated_at, status.has_sort_key


def test_a_table_never_configured_has_no_status() -> None:
    ctx, _ = make_ctx()
    table_with_gsi(ctx)
    assert state(insights.status(ctx, "paint", None)) == (None, None, None, None, True)
    assert state(insights.status(ctx, "paint", "by-color")) == ("by-color", None, None, None, False)


def test_enabling_a_gsi_counts_its_keys_and_leaves_the_table_alone() -> None:
    ctx, clock = make_ctx()
    td = table_with_gsi(ctx)
    clock.advance(5)
    got = insights.change(ctx, "paint", "by-color", enable=True, mode=None)
    assert (got.table_name, *state(got)) == ("paint", "by-color", "ENABLED", insights.DEFAULT_MODE, T0 + 5, False)
    st = ctx.capacity.find("paint")
    assert st.base.insights is None and st.base.insights_status is None
    counters = st.gsis["by-color"].insights
    assert counters is not None and counters.mode == insights.DEFAULT_MODE
    put(ctx, td, {"pk": {"S": "a"}, "sk": {"N": "1"}, "color": {"S": "red"}})
    tops = counters.top(clock.now(), 60, 10)
    assert [counts.consumed for _, counts in tops["accessed_partition_keys"]] == [3.0]  # a write unit counts 3
    assert state(insights.status(ctx, "paint", None))[1] is None


def test_disabling_keeps_the_mode_and_drops_the_counters() -> None:
    ctx, clock = make_ctx()
    table_with_gsi(ctx)
    insights.change(ctx, "paint", "by-color", enable=True, mode="THROTTLED_KEYS")
    clock.advance(1)
    got = insights.change(ctx, "paint", "by-color", enable=False, mode=None)
    assert state(got) == ("by-color", "DISABLED", "THROTTLED_KEYS", T0 + 1, False)
    assert ctx.capacity.find("paint").gsis["by-color"].insights is None
    # Disabling what was never enabled: the mode asked for, else the default.
    assert insights.change(ctx, "paint", None, enable=False, mode="THROTTLED_KEYS").mode == "THROTTLED_KEYS"
    create(ctx, "other", 1, 1)
    assert insights.change(ctx, "other", None, enable=False, mode=None).mode == insights.DEFAULT_MODE


def test_a_new_mode_counts_afresh_and_the_same_mode_keeps_counting() -> None:
    ctx, _ = make_ctx()
    table_with_gsi(ctx)
    insights.change(ctx, "paint", None, enable=True, mode=None)
    base = ctx.capacity.find("paint").base
    first = base.insights
    insights.change(ctx, "paint", None, enable=True, mode=insights.DEFAULT_MODE)
    assert base.insights is first
    insights.change(ctx, "paint", None, enable=True, mode="THROTTLED_KEYS")
    assert base.insights is not first and base.insights is not None and base.insights.mode == "THROTTLED_KEYS"


def test_the_status_survives_a_restart() -> None:
    ctx, _ = make_ctx()
    table_with_gsi(ctx)
    insights.change(ctx, "paint", "by-color", enable=True, mode="THROTTLED_KEYS")
    again = restart(ctx)
    assert state(insights.status(again, "paint", "by-color")) == ("by-color", "ENABLED", "THROTTLED_KEYS", T0, False)
    counters = again.capacity.find("paint").gsis["by-color"].insights
    assert counters is not None and counters.mode == "THROTTLED_KEYS"


def test_an_unknown_index_is_not_found() -> None:
    ctx, _ = make_ctx()
    table_with_gsi(ctx)
    with pytest.raises(ResourceNotFoundException) as e:
        insights.change(ctx, "paint", "nope", enable=True, mode=None)
    assert e.value.message == "Requested resource not found: Index nope for table paint"
    with pytest.raises(ResourceNotFoundException) as e:
        insights.status(ctx, "paint", "nope")
    assert e.value.message == "Requested resource not found: Index nope for table paint"
    with pytest.raises(ResourceNotFoundException):
        insights.status(ctx, "missing", None)


def test_statuses_list_the_table_and_each_gsi_table_by_table() -> None:
    ctx, _ = make_ctx()
    table_with_gsi(ctx, "one")
    create(ctx, "two", 1, 1)
    insights.change(ctx, "one", "by-color", enable=True, mode=None)
    insights.change(ctx, "two", None, enable=True, mode="THROTTLED_KEYS")
    got = [(s.table_name, s.index_name, s.state, s.mode) for s in insights.statuses(ctx, ["two", "one"])]
    assert got == [
        ("two", None, "ENABLED", "THROTTLED_KEYS"),
        ("one", None, None, None),
        ("one", "by-color", "ENABLED", insights.DEFAULT_MODE),
    ]
