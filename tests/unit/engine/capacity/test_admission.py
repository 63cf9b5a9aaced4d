"""Admission (engine/capacity/admission.py) through the engine's write path (engine/writes.py) and direct
admission calls, on tables built as typed definitions (tables.py) and a ManualClock."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from dynastore.engine import tables, writes
from dynastore.engine.capacity import admission
from dynastore.engine.capacity import buckets as throttle
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.errors import ProvisionedThroughputExceededException, ThrottlingException
from dynastore.expressions import ExpressionContext
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import KeyAttr, OnDemandThroughput, TableDef
from dynastore.model.values import Item
from dynastore.storage import keyspace
from tests.unit.engine.tables import create, gsi, key_of, make_ctx


def put(ctx: Context, td: TableDef, item: Item, condition: object = None) -> writes.WriteResult:
    return writes.perform(ctx, td, key_of(td, item["pk"]["S"]), writes.PutPlan(item, condition, item_size(item)))


def outcomes(fn: Callable[[], object], count: int) -> list[str]:
    out = []
    for _ in range(count):
        try:
            fn()
            out.append("ok")
        except (ProvisionedThroughputExceededException, ThrottlingException) as e:
            out.append(type(e).__name__)
    return out


def test_a_fresh_table_serves_its_burst_at_once_then_its_rate() -> None:
    ctx, clock = make_ctx()
    td = create(ctx, "small", 2, 3)
    # A new partition starts with 300 seconds of burst credit on top of its second: 3 x 301 writes at once.
    got = outcomes(lambda: put(ctx, td, {"pk": {"S": "a"}}), 905)
    assert got == ["ok"] * 903 + ["ProvisionedThroughputExceededException"] * 2
    # Eventually consistent reads cost half a unit: 2 x 301 units are 1,204 reads.
    key = key_of(td, "a")
    eventual, strong = read_half_units(0, consistent=False), read_half_units(0, consistent=True)
    got = outcomes(lambda: admission.admit_read(ctx, td, key, eventual), 1205)
    assert got == ["ok"] * 1204 + ["ProvisionedThroughputExceededException"]
    clock.advance(1)  # the credit is spent: one second brings the share, 2 strongly consistent reads
    got = outcomes(lambda: admission.admit_read(ctx, td, key, strong), 3)
    assert got == ["ok", "ok", "ProvisionedThroughputExceededException"]


def test_a_fresh_small_table_takes_a_large_item_and_parallel_puts() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "fresh", 5, 5)
    put(ctx, td, {"pk": {"S": "big"}, "v": {"S": "x" * 350_000}})  # 342 units
    for i in range(20):
        put(ctx, td, {"pk": {"S": f"p{i}"}})
    lane = ctx.capacity.find("fresh").base.writes[0]
    assert (lane.consumed, lane.throttled) == (342 + 20, 0)


def test_a_sustained_overload_throttles_once_the_burst_is_spent() -> None:
    ctx, clock = make_ctx()
    td = create(ctx, "hot1", 1, 1)
    got = outcomes(lambda: put(ctx, td, {"pk": {"S": "k"}}), 600)
    assert got.count("ok") == 301 and got[:301] == ["ok"] * 301
    clock.advance(10)
    got = outcomes(lambda: put(ctx, td, {"pk": {"S": "k"}}), 100)
    assert got.count("ok") == 10  # the share: one unit a second


def test_the_refusal_is_the_provisioned_error_naming_the_table() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "why", 1, 1)
    key = key_of(td, "a")
    for _ in range(301):  # the burst credit of a new partition
        admission.admit_write(ctx, td, key, 2)
    error = admission.attempt_write(ctx, td, key, 2)
    assert isinstance(error, ProvisionedThroughputExceededException)
    assert error.to_body()["ThrottlingReasons"] == [
        {
            "reason": "TableWriteProvisionedThroughputExceeded",
            "resource": "arn:aws:dynamodb:us-east-1:000000000000:table/why",
        }
    ]


def test_write_cost_is_settled_on_the_larger_item() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "big", 10, 10)
    put(ctx, td, {"pk": {"S": "a"}, "v": {"S": "x" * 5000}})  # 5 units
    lane = ctx.capacity.find("big").base.writes[0]
    assert lane.consumed == 5
    writes.perform(ctx, td, key_of(td, "a"), writes.DeletePlan())  # admitted at 1, settled at 5
    assert lane.consumed == 10


def test_a_failed_condition_is_charged_the_stored_items_size() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "cond", 10, 10)
    lane = ctx.capacity.find("cond").base.writes[0]
    exists = ExpressionContext(None, None).condition("ConditionExpression", "attribute_exists(pk)")
    with pytest.raises(writes.ConditionFailedError):
        put(ctx, td, {"pk": {"S": "a"}}, exists)
    assert lane.consumed == 1  # nothing stored: the minimum
    put(ctx, td, {"pk": {"S": "b"}, "v": {"S": "x" * 3000}})  # 3 units
    absent = ExpressionContext(None, None).condition("ConditionExpression", "attribute_not_exists(pk)")
    with pytest.raises(writes.ConditionFailedError):
        put(ctx, td, {"pk": {"S": "b"}}, absent)
    assert lane.consumed == 1 + 3 + 3  # refused by its condition: charged as the 3-unit item it found


def test_on_demand_throttling_is_a_throttling_exception() -> None:
    ctx, _ = make_ctx(partition_max_wcu=2)
    td = create(ctx, "ondemand")
    got = outcomes(lambda: put(ctx, td, {"pk": {"S": "hot"}}), 3)
    assert got == ["ok", "ok", "ThrottlingException"]
    error = admission.attempt_write(ctx, td, key_of(td, "hot"), 2)
    assert isinstance(error, ThrottlingException)
    assert error.to_body()["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"


def test_a_joint_request_decides_once_per_bucket_and_partition() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "joint")  # on demand: 4,000 write units at once, 1,000 per partition
    key = key_of(td, "hot")
    alone = [admission.attempt_write(ctx, td, key, 1_600) for _ in range(3)]  # 800 units each, one partition
    assert [type(t).__name__ for t in alone] == ["Ticket", "Ticket", "ThrottlingException"]
    for ticket in alone[:2]:
        assert isinstance(ticket, admission.Ticket)
        admission.refund(ctx, ticket)
    joint = admission.Joint({td.table_id: 9 * 800.0})
    together = [admission.attempt_write(ctx, td, key, 1_600, joint=joint) for _ in range(9)]
    assert all(isinstance(t, admission.Ticket) for t in together)  # 7,200 units: one request, taken at once
    assert isinstance(admission.attempt_write(ctx, td, key_of(td, "other"), 2), ThrottlingException)


def test_on_demand_maximum() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "capped", on_demand=OnDemandThroughput(None, 2))
    got = outcomes(lambda: put(ctx, td, {"pk": {"S": "k"}}), 3)
    assert got == ["ok", "ok", "ThrottlingException"]
    st = ctx.capacity.find("capped")
    assert st.base.write_total.binding == throttle.MAX_ON_DEMAND


def test_a_new_on_demand_maximum_binds_at_once() -> None:
    # UpdateTable's OnDemandThroughput on a table that exists: no other setting changes with it.
    ctx, _ = make_ctx()
    td = create(ctx, "lowered", on_demand=OnDemandThroughput(None, 1000))
    td = tables.update(ctx, "lowered", lambda t: dataclasses.replace(t, on_demand=OnDemandThroughput(None, 2)))
    assert outcomes(lambda: put(ctx, td, {"pk": {"S": "k"}}), 3) == ["ok", "ok", "ThrottlingException"]
    assert ctx.capacity.find("lowered").base.write_total.binding == throttle.MAX_ON_DEMAND


def test_a_replicas_own_maximum_read_units_bound_its_reads() -> None:
    # The set's maximum is 1,000 read units; this replica overrides it with 2 (OnDemandThroughputOverride).
    ctx, _ = make_ctx()
    td = create(ctx, "replica", on_demand=OnDemandThroughput(1000, None))
    td = tables.update(ctx, "replica", lambda t: dataclasses.replace(t, own_max_read=2))
    key = key_of(td, "k")
    got = [type(admission.attempt_read(ctx, td, key, 2)).__name__ for _ in range(3)]  # one unit each
    assert got == ["Ticket", "Ticket", "ThrottlingException"]
    assert ctx.capacity.find("replica").base.read_total.binding == throttle.MAX_ON_DEMAND


def test_on_demand_peak_doubles_what_it_may_take() -> None:
    ctx, clock = make_ctx(partition_max_wcu=100_000)
    td = create(ctx, "peaky")
    st = ctx.capacity.find("peaky")
    assert st.base.write_total.rate == 4000
    table = st.base.write_total
    table.account(3000, clock.now())  # a second at 3,000 write units
    clock.advance(1)
    put(ctx, td, {"pk": {"S": "k"}})
    assert st.base.peaks[1] == 3000
    assert st.base.write_total.rate == 6000  # double the previous peak


def test_report_mode_counts_but_never_throttles() -> None:
    ctx, _ = make_ctx(capacity="report")
    td = create(ctx, "report", 1, 1)
    assert outcomes(lambda: put(ctx, td, {"pk": {"S": "a"}}), 305) == ["ok"] * 305
    assert ctx.capacity.find("report").base.writes[0].throttled == 4


def test_gsi_short_of_write_capacity_throttles_the_table_write() -> None:
    ctx, _ = make_ctx()
    intrusion = KeyAttr("intrusion", "S")
    by_intrusion = gsi(ctx, "by-intrusion", intrusion, 1, 2)
    td = create(ctx, "weather", 1, 12000, more_attributes=(intrusion,), gsis=(by_intrusion,))
    errors: list[ProvisionedThroughputExceededException] = []
    for i in range(604):
        try:
            put(ctx, td, {"pk": {"S": f"s{i}"}, "intrusion": {"S": "False"}})
        except ProvisionedThroughputExceededException as e:
            errors.append(e)
    assert len(errors) == 2  # the index's 2 WCU and its burst credit: 602 writes
    reason = errors[0].to_body()["ThrottlingReasons"][0]
    assert reason["reason"] == "IndexWriteProvisionedThroughputExceeded"
    assert reason["resource"].endswith(":table/weather/index/by-intrusion")
    st = ctx.capacity.find("weather")
    assert len(st.base.pmap) == 12
    assert sum(lane.consumed for lane in st.base.writes) == 602  # the refused writes took nothing from the table
    assert sum(lane.consumed for lane in st.gsis["by-intrusion"].writes) == 602


def test_an_item_without_the_index_key_is_not_admitted_on_the_index() -> None:
    ctx, _ = make_ctx()
    intrusion = KeyAttr("intrusion", "S")
    td = create(ctx, "sparse", 1, 10, more_attributes=(intrusion,), gsis=(gsi(ctx, "by-intrusion", intrusion, 1, 1),))
    for i in range(400):  # beyond the index's 1 WCU and its burst credit: the items never reach it
        put(ctx, td, {"pk": {"S": f"s{i}"}})
    assert sum(lane.consumed for lane in ctx.capacity.find("sparse").gsis["by-intrusion"].writes) == 0


def test_parallel_scan_segments_start_in_different_partitions() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "scan4", 12000, 1)
    st = ctx.capacity.find("scan4")
    assert len(st.base.pmap) == 4
    starts = [keyspace.segment_bounds(td.table_id, seg, 4)[0] for seg in range(4)]
    tickets = [admission.admit_read(ctx, td, key, 2) for key in starts]
    assert [t.index for t in tickets] == [0, 1, 2, 3]
    assert [lane.consumed for lane in st.base.reads] == [1.0] * 4


def test_try_admit_returns_none_instead_of_raising() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "batch", 1, 1)
    key = key_of(td, "a")
    for _ in range(301):
        assert admission.try_admit_write(ctx, td, key, 2) is not None
    assert admission.try_admit_write(ctx, td, key, 2) is None
    assert admission.try_admit_read(ctx, td, key, 2) is not None  # reads have buckets of their own


def test_a_batch_writes_what_is_admitted_and_reports_the_rest() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "batched", 1, 1)
    key = key_of(td, "a")
    for _ in range(299):  # two units of burst credit and the second's share left
        admission.admit_write(ctx, td, key, 2)
    planned: list[tuple[TableDef, bytes, writes.Plan]] = []
    for name in ("b1", "b2", "b3"):
        item: Item = {"pk": {"S": name}}
        planned.append((td, key_of(td, name), writes.PutPlan(item, size=item_size(item))))
    outcome = writes.perform_batch(ctx, planned)
    assert outcome.refused == [2] and outcome.deferred == []
    assert [r is not None for r in outcome.results] == [True, True, False]
    with pytest.raises(ProvisionedThroughputExceededException):  # none admitted: the refusal is raised
        writes.perform_batch(ctx, planned[2:])
    assert ctx.catalog.stats("batched")[0] == 2


def test_a_refund_gives_back_the_table_and_index_lanes() -> None:
    ctx, _ = make_ctx()
    intrusion = KeyAttr("intrusion", "S")
    td = create(ctx, "undo", 1, 5, more_attributes=(intrusion,), gsis=(gsi(ctx, "by-intrusion", intrusion, 1, 3),))
    st = ctx.capacity.find("undo")
    table_lane, index_lane = st.base.writes[0], st.gsis["by-intrusion"].writes[0]
    before = (table_lane.share.tokens, index_lane.share.tokens)
    item: Item = {"pk": {"S": "a"}, "intrusion": {"S": "yes"}}
    ticket = admission.admit_write(ctx, td, key_of(td, "a"), 4, item=item)
    assert (table_lane.share.tokens, index_lane.share.tokens) == (before[0] - 2, before[1] - 2)
    admission.refund(ctx, ticket)  # e.g. a transaction cancelled after this part was admitted
    assert (table_lane.share.tokens, index_lane.share.tokens) == before
    assert ticket.extra == []


def test_the_index_is_charged_what_the_write_did_to_it() -> None:
    ctx, _ = make_ctx()
    intrusion = KeyAttr("intrusion", "S")
    td = create(
        ctx, "indexed", 10, 10, more_attributes=(intrusion,), gsis=(gsi(ctx, "by-intrusion", intrusion, 10, 10),)
    )
    index_writes = ctx.capacity.find("indexed").gsis["by-intrusion"].writes
    put(ctx, td, {"pk": {"S": "a"}, "intrusion": {"S": "yes"}})
    assert sum(lane.consumed for lane in index_writes) == 1  # a new index entry
    put(ctx, td, {"pk": {"S": "a"}, "intrusion": {"S": "yes"}})
    assert sum(lane.consumed for lane in index_writes) == 1  # unchanged in the index: admitted, then given back
    put(ctx, td, {"pk": {"S": "a"}, "intrusion": {"S": "no"}})
    assert sum(lane.consumed for lane in index_writes) == 3  # a changed index key: a delete and a put
    writes.perform(ctx, td, key_of(td, "a"), writes.DeletePlan())
    assert sum(lane.consumed for lane in index_writes) == 4  # admitted on the table only, charged afterwards


def test_a_read_is_settled_at_its_real_cost() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "scan", 1, 1)
    key = key_of(td, "a")
    lane = ctx.capacity.find("scan").base.reads[0]
    for _ in range(300):  # a new partition's 301 units less 300: one unit left
        admission.admit_read(ctx, td, key, 2)
    ticket = admission.admit_read(ctx, td, key, 1)
    admission.settle_read(ctx, ticket, 9)  # the page cost more than its estimate: charged, never refused
    assert (ticket.half_units, lane.consumed) == (9, 300 + 4.5)
    assert lane.share.tokens == 1 - 4.5  # a debt the partition pays back
    refused = admission.attempt_read(ctx, td, key, 1)
    assert isinstance(refused, ProvisionedThroughputExceededException)
    assert refused.to_body()["ThrottlingReasons"][0]["reason"] == "TableReadProvisionedThroughputExceeded"


def test_read_cost_is_the_stored_items_size() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "sized", 1, 10)
    put(ctx, td, {"pk": {"S": "a"}, "v": {"S": "x" * 5000}})
    with ctx.kv.read() as txn:
        raw = txn.get(key_of(td, "a"))
    assert admission.read_cost(raw, consistent=False) == 2
    assert admission.read_cost(raw, consistent=True) == 4
    assert admission.read_cost(None, consistent=True) == 2  # nothing found: the minimum


def test_a_deletion_without_capacity_keeps_the_partition_counts() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "expiring", 1, 10)
    put(ctx, td, {"pk": {"S": "a"}, "v": {"S": "x" * 100}})
    part = ctx.capacity.find("expiring").base.pmap.partitions[0]
    size = part.bytes
    assert (part.items, size > 100) == (1, True)
    admission.account_deleted(ctx, td, key_of(td, "a"), 0)  # nothing was there: nothing moves
    assert (part.items, part.bytes) == (1, size)
    admission.account_deleted(ctx, td, key_of(td, "a"), size)  # a TTL deletion
    assert (part.items, part.bytes) == (0, 0)
    assert ctx.capacity.find("expiring").base.writes[0].consumed == 1
