"""Token buckets, burst and adaptive capacity on a ManualClock; admission through the handlers."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.app import build_context
from dynastore.config import Config
from dynastore.engine.capacity import admission, decreases
from dynastore.engine.capacity import buckets as throttle
from dynastore.engine.capacity.buckets import Lane, TableBucket
from dynastore.engine.context import Context
from dynastore.errors import LimitExceededException, ProvisionedThroughputExceededException, ThrottlingException
from dynastore.model.table_schema import ProvisionedThroughput
from dynastore.protocol import dispatch
from dynastore.storage import keycodec, keyspace
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

T0 = 1_700_000_000.0


def served(lane: Lane, table: TableBucket, now: float, count: int, units: float = 1.0, delay: float = 300.0) -> int:
    return sum(throttle.decide(lane, table, units, now, delay, True) in throttle.ADMITTED for _ in range(count))


def spent(share: float, ceiling: float, *, burst: bool = True) -> Lane:
    """A lane whose burst credit is spent: one second of its share left (the state after a long busy spell)."""
    lane = Lane(share, ceiling, T0, burst=burst)
    lane.share.tokens = share
    return lane


# ---------------------------------------------------------------- buckets


def test_a_new_lane_starts_with_its_full_burst_credit() -> None:
    lane, table = Lane(10, 100_000, T0, burst=True), TableBucket(10, T0)
    assert lane.burst_balance() == 3000
    assert served(lane, table, T0, 4000) == 3010  # one second and 300 seconds of credit, at once
    assert served(lane, table, T0 + 1, 20) == 10  # then the share, second by second
    no_burst = Lane(10, 1000, T0, burst=False)  # on-demand lanes: no share of their own to save up
    assert no_burst.burst_balance() == 0


def test_split_children_start_full() -> None:
    lane, table = Lane(10, 100_000, T0, burst=True), TableBucket(10, T0)
    served(lane, table, T0, 3010)
    assert lane.burst_balance() == 0
    child = lane.split(T0)
    assert (lane.share.rate, child.share.rate) == (5, 5)
    assert (lane.burst_balance(), child.burst_balance()) == (1500, 1500)
    assert lane.ceiling.tokens == child.ceiling.tokens == 100_000


def test_share_serves_its_rate_each_second() -> None:
    lane, table = spent(10, 1000), TableBucket(100, T0)
    assert served(lane, table, T0, 15) == 10
    assert served(lane, table, T0 + 1, 15) == 10
    assert lane.throttled == 10


def test_burst_lets_a_short_spike_through_but_not_a_sustained_one() -> None:
    lane, table = spent(10, 1000), TableBucket(1000, T0)
    now = T0 + 60  # a minute idle: 600 units of burst credit
    assert lane.burst_balance() == 0
    lane.share.refill(now)
    assert lane.burst_balance() == 600
    assert served(lane, table, now, 200) == 200  # a spike 20x the share
    sustained = 0
    for second in range(1, 120):
        sustained += served(lane, table, now + second, 30)
    # 30/s against 10/s: the remaining 410 units of credit run out after ~20 s, then 10/s
    assert 119 * 10 + 410 - 30 <= sustained <= 119 * 10 + 410 + 30
    assert lane.throttled > 0


def test_burst_credit_is_capped_at_300_seconds() -> None:
    lane = Lane(10, 1000, T0, burst=True)
    lane.share.refill(T0 + 10_000)
    assert lane.burst_balance() == 3000


def test_burst_never_passes_the_partition_maximum() -> None:
    lane, table = Lane(10, 50, T0, burst=True), TableBucket(1000, T0)
    lane.share.refill(T0 + 300)
    assert served(lane, table, T0 + 300, 200) == 50
    assert served(lane, table, T0 + 301, 200) == 50


def test_a_request_starts_while_the_partition_is_under_its_maximum() -> None:
    # Three 390-unit writes on a 1,000-unit partition: the third starts (the partition is under its maximum)
    # and leaves a debt; the next waits until the debt is paid back at the maximum rate.
    lane, table = Lane(1000, 1000, T0, burst=True), TableBucket(4000, T0)
    assert served(lane, table, T0, 3, units=390) == 3
    assert lane.ceiling.tokens == 1000 - 3 * 390
    assert served(lane, table, T0 + 0.1, 1) == 0
    assert served(lane, table, T0 + 0.2, 1) == 1
    # Over a longer spell the maximum still holds: ten seconds of 390-unit writes, 100 a second, are served
    # the second the partition held when they began and ten seconds of its rate, plus at most one debt.
    got = sum(served(lane, table, T0 + 1 + t / 100, 1, units=390) for t in range(1000))
    assert 11_000 - 390 <= got * 390 <= 11_000 + 390


def test_adaptive_capacity_lifts_a_hot_partition_after_the_delay() -> None:
    hot, cold, table = spent(15, 20), spent(15, 20), TableBucket(30, T0)
    delay = 5.0
    got = [served(hot, table, T0 + s, 20, delay=delay) for s in range(5)]
    assert got == [15] * 5  # share-bound while adaptive capacity waits
    got = [served(hot, table, T0 + s, 20, delay=delay) for s in range(5, 10)]
    assert got == [20] * 5  # lifted: borrows unused table throughput up to the partition maximum
    assert hot.borrowed > 0
    # the cold partition still has its own share
    assert served(cold, table, T0 + 10, 15, delay=delay) == 15


def test_refund_gives_back_to_where_the_capacity_came_from() -> None:
    hot, table = spent(15, 20, burst=False), TableBucket(30, T0)
    for s in range(6):
        served(hot, table, T0 + s, 20, delay=5.0)
    now = T0 + 6
    assert served(hot, table, now, 15, delay=5.0) == 15  # the share, spent
    share_left, table_left = hot.share.tokens, table.tokens
    took = throttle.decide(hot, table, 1, now, 5.0, True)
    assert took == throttle.BORROWED
    assert (hot.share.tokens, hot.borrowed > 0) == (share_left, True)
    borrowed = hot.borrowed
    throttle.refund(hot, table, 1, took)
    assert (hot.share.tokens, hot.borrowed, table.tokens) == (share_left, borrowed - 1, table_left)
    throttle.refund(hot, table, 1, throttle.NOT_TAKEN)  # report mode took nothing: nothing comes back
    assert (hot.share.tokens, table.tokens) == (share_left, table_left)


def test_adaptive_capacity_only_borrows_what_the_table_leaves_unused() -> None:
    hot, cold, table = spent(15, 30), spent(15, 30), TableBucket(30, T0)
    for s in range(6):
        served(hot, table, T0 + s, 30, delay=5.0)
    now = T0 + 6
    assert served(cold, table, now, 15, delay=5.0) == 15  # cold uses its whole share first
    assert served(hot, table, now, 30, delay=5.0) == 15  # hot: its share, nothing left to borrow


def test_a_large_item_on_a_small_table_is_served_then_paid_back() -> None:
    lane, table = spent(1, 1000), TableBucket(1, T0)
    assert throttle.decide(lane, table, 5, T0, 300, True) == throttle.OK
    assert lane.share.tokens == -4
    assert throttle.decide(lane, table, 1, T0 + 4, 300, True) != throttle.OK
    assert throttle.decide(lane, table, 1, T0 + 5, 300, True) == throttle.OK


def test_reasons() -> None:
    lane, table = spent(10, 1000), TableBucket(10, T0)
    served(lane, table, T0, 10)
    assert throttle.decide(lane, table, 1, T0, 300, True) == throttle.PROVISIONED  # table total spent too
    lane2, table2 = spent(10, 1000), TableBucket(100, T0)
    served(lane2, table2, T0, 10)
    assert throttle.decide(lane2, table2, 1, T0, 300, True) == throttle.KEY_RANGE  # one hot partition


# ---------------------------------------------------------------- admission through the API


def make_ctx(**config: Any) -> tuple[Context, dict[str, Any], ManualClock]:
    clock = ManualClock(T0)
    cfg = Config(in_memory=True, clock=clock, **config)
    kv = MemoryKV()
    ctx = build_context(cfg, kv, Catalog.load(kv, cfg))
    return ctx, dispatch.bind(ctx), clock


def call(ops: dict[str, Any], op: str, **body: Any) -> Any:
    return ops[op].run(body)


def create(ops: dict[str, Any], name: str, read: int, write: int, **extra: Any) -> None:
    call(
        ops,
        "CreateTable",
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        **extra,
    )


def outcomes(fn: Any, count: int) -> list[str]:
    out = []
    for _ in range(count):
        try:
            fn()
            out.append("ok")
        except (ProvisionedThroughputExceededException, ThrottlingException) as e:
            out.append(type(e).__name__)
    return out


def test_a_fresh_table_serves_its_burst_at_once_then_its_rate() -> None:
    ctx, ops, clock = make_ctx()
    create(ops, "small", 2, 3)
    # A new partition starts with 300 seconds of burst credit on top of its second: 3 x 301 writes at once.
    put = outcomes(lambda: call(ops, "PutItem", TableName="small", Item={"pk": {"S": "a"}}), 905)
    assert put == ["ok"] * 903 + ["ProvisionedThroughputExceededException"] * 2
    # Eventually consistent reads cost half a unit: 2 x 301 units are 1,204 reads.
    get = outcomes(lambda: call(ops, "GetItem", TableName="small", Key={"pk": {"S": "a"}}), 1205)
    assert get == ["ok"] * 1204 + ["ProvisionedThroughputExceededException"]
    clock.advance(1)  # the credit is spent: one second brings the share, 2 strongly consistent reads
    assert outcomes(
        lambda: call(ops, "GetItem", TableName="small", Key={"pk": {"S": "a"}}, ConsistentRead=True), 3
    ) == [
        "ok",
        "ok",
        "ProvisionedThroughputExceededException",
    ]


def test_a_fresh_small_table_takes_a_large_item_parallel_puts_a_batch_and_a_transaction() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "fresh", 5, 5)
    call(ops, "PutItem", TableName="fresh", Item={"pk": {"S": "big"}, "v": {"S": "x" * 350_000}})  # 342 units
    for i in range(20):
        call(ops, "PutItem", TableName="fresh", Item={"pk": {"S": f"p{i}"}})
    batch = [{"PutRequest": {"Item": {"pk": {"S": f"b{i}"}}}} for i in range(25)]
    assert call(ops, "BatchWriteItem", RequestItems={"fresh": batch})["UnprocessedItems"] == {}
    actions = [{"Put": {"TableName": "fresh", "Item": {"pk": {"S": f"t{i}"}}}} for i in range(25)]
    call(ops, "TransactWriteItems", TransactItems=actions)
    lane = ctx.capacity.find("fresh").base.writes[0]
    assert lane.consumed == 342 + 20 + 25 + 50
    assert lane.throttled == 0


def test_a_sustained_overload_throttles_once_the_burst_is_spent() -> None:
    ctx, ops, clock = make_ctx()
    create(ops, "hot1", 1, 1)
    put = outcomes(lambda: call(ops, "PutItem", TableName="hot1", Item={"pk": {"S": "k"}}), 600)
    assert put.count("ok") == 301 and put[:301] == ["ok"] * 301
    clock.advance(10)
    put = outcomes(lambda: call(ops, "PutItem", TableName="hot1", Item={"pk": {"S": "k"}}), 100)
    assert put.count("ok") == 10  # the share: one unit a second


def test_the_error_names_the_reason_and_the_resource() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "why", 1, 1)
    for _ in range(301):  # the burst credit of a new partition
        call(ops, "PutItem", TableName="why", Item={"pk": {"S": "a"}})
    with pytest.raises(ProvisionedThroughputExceededException) as e:
        call(ops, "PutItem", TableName="why", Item={"pk": {"S": "a"}})
    assert e.value.to_body() == {
        "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "message": "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API.",
        "ThrottlingReasons": [
            {
                "reason": "TableWriteProvisionedThroughputExceeded",
                "resource": "arn:aws:dynamodb:us-east-1:000000000000:table/why",
            }
        ],
    }


def test_write_cost_is_settled_on_the_larger_item() -> None:
    ctx, ops, clock = make_ctx()
    create(ops, "big", 10, 10)
    call(ops, "PutItem", TableName="big", Item={"pk": {"S": "a"}, "v": {"S": "x" * 5000}})  # 5 units
    lane = ctx.capacity.find("big").base.writes[0]
    assert lane.consumed == 5
    call(ops, "DeleteItem", TableName="big", Key={"pk": {"S": "a"}})  # admitted at 1, settled at 5
    assert lane.consumed == 10


def test_a_failed_condition_still_consumes_capacity() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "cond", 10, 10)
    with pytest.raises(Exception, match="conditional"):
        call(ops, "PutItem", TableName="cond", Item={"pk": {"S": "a"}}, ConditionExpression="attribute_exists(pk)")
    assert ctx.capacity.find("cond").base.writes[0].consumed == 1


def test_on_demand_throttling_is_a_throttling_exception() -> None:
    ctx, ops, _ = make_ctx(partition_max_wcu=2)
    call(
        ops,
        "CreateTable",
        TableName="ondemand",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    with pytest.raises(ThrottlingException) as e:
        for _ in range(3):
            call(ops, "PutItem", TableName="ondemand", Item={"pk": {"S": "hot"}})
    body = e.value.to_body()
    assert body["__type"] == "com.amazon.coral.availability#ThrottlingException"
    assert body["message"].startswith("Throughput exceeds the current capacity of your table or index.")
    assert body["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"


def test_on_demand_maximum() -> None:
    ctx, ops, _ = make_ctx()
    call(
        ops,
        "CreateTable",
        TableName="capped",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        OnDemandThroughput={"MaxWriteRequestUnits": 2},
    )
    got = outcomes(lambda: call(ops, "PutItem", TableName="capped", Item={"pk": {"S": "k"}}), 3)
    assert got == ["ok", "ok", "ThrottlingException"]
    st = ctx.capacity.find("capped")
    assert st.base.write_total.binding == throttle.MAX_ON_DEMAND


def test_on_demand_peak_doubles_what_it_may_take() -> None:
    ctx, ops, clock = make_ctx(partition_max_wcu=100_000)
    call(
        ops,
        "CreateTable",
        TableName="peaky",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    st = ctx.capacity.find("peaky")
    assert st.base.write_total.rate == 4000
    table = st.base.write_total
    table.account(3000, clock.now())  # a second at 3,000 write units
    clock.advance(1)
    call(ops, "PutItem", TableName="peaky", Item={"pk": {"S": "k"}})
    assert st.base.peaks[1] == 3000
    assert st.base.write_total.rate == 6000  # double the previous peak


def test_report_mode_counts_but_never_throttles() -> None:
    ctx, ops, _ = make_ctx(capacity="report")
    create(ops, "report", 1, 1)
    assert outcomes(lambda: call(ops, "PutItem", TableName="report", Item={"pk": {"S": "a"}}), 305) == ["ok"] * 305
    assert ctx.capacity.find("report").base.writes[0].throttled == 4


def test_gsi_short_of_write_capacity_throttles_the_table_write() -> None:
    ctx, ops, _ = make_ctx()
    call(
        ops,
        "CreateTable",
        TableName="weather",
        KeySchema=[{"AttributeName": "station", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "station", "AttributeType": "S"},
            {"AttributeName": "intrusion", "AttributeType": "S"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 12000},
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-intrusion",
                "KeySchema": [{"AttributeName": "intrusion", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
            }
        ],
    )

    def put(i: int) -> None:
        call(ops, "PutItem", TableName="weather", Item={"station": {"S": f"s{i}"}, "intrusion": {"S": "False"}})

    results = []
    for i in range(604):
        try:
            put(i)
            results.append("ok")
        except ProvisionedThroughputExceededException as e:
            results.append(e.message or "")
            body = e.to_body()
    assert results[:602] == ["ok"] * 602  # the index's 2 WCU and its burst credit
    assert results[602] == (
        "The level of configured provisioned throughput for one or more global secondary indexes of the table was "
        "exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes "
        "with the UpdateTable API."
    )
    assert body["ThrottlingReasons"][0]["reason"] == "IndexWriteProvisionedThroughputExceeded"
    assert body["ThrottlingReasons"][0]["resource"].endswith(":table/weather/index/by-intrusion")
    st = ctx.capacity.find("weather")
    assert len(st.base.pmap) == 12
    assert sum(lane.consumed for lane in st.base.writes) == 602  # the refused writes took nothing from the table


def test_parallel_scan_segments_start_in_different_partitions() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "scan4", 12000, 1)
    st = ctx.capacity.find("scan4")
    assert len(st.base.pmap) == 4
    starts = [keyspace.segment_bounds(st.td.table_id, seg, 4)[0] for seg in range(4)]
    tickets = [admission.admit_read(ctx, st.td, key, 2) for key in starts]
    assert [t.index for t in tickets] == [0, 1, 2, 3]
    assert [lane.consumed for lane in st.base.reads] == [1.0] * 4


def test_try_admit_returns_none_instead_of_raising() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "batch", 1, 1)
    st = ctx.capacity.find("batch")
    key = keyspace.item_key(st.td.table_id, keycodec.encode_string("a"), None)
    for _ in range(301):
        assert admission.try_admit_write(ctx, st.td, key, 2) is not None
    assert admission.try_admit_write(ctx, st.td, key, 2) is None


# ---------------------------------------------------------------- the daily limit on decreases


def test_decreases_four_at_once_then_one_an_hour() -> None:
    day = 1_760_000_000 - 1_760_000_000 % 86400  # midnight UTC
    pt = ProvisionedThroughput(10, 10, None, day + 60, 4)
    with pytest.raises(LimitExceededException) as e:
        decreases.check_throughput_decrease(pt, day + 120)
    assert e.value.message == (
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the "
        "first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 "
        "seconds. Number of decreases today: 4. Last decrease at Thursday, October 9, 2025 at 12:01:00 AM "
        "Coordinated Universal Time. Next decrease can be made at Thursday, October 9, 2025 at 1:01:00 AM "
        "Coordinated Universal Time"
    )
    decreases.check_throughput_decrease(pt, day + 60 + 3600)  # an hour later: allowed
    decreases.check_throughput_decrease(ProvisionedThroughput(10, 10, None, day + 60, 3), day + 61)
    decreases.check_throughput_decrease(pt, day + 86400 + 1)  # a new UTC day


def test_decrease_limit_through_update_table() -> None:
    ctx, ops, clock = make_ctx()
    create(ops, "dec", 100, 100)
    for units in (90, 80, 70, 60):
        call(
            ops,
            "UpdateTable",
            TableName="dec",
            ProvisionedThroughput={"ReadCapacityUnits": units, "WriteCapacityUnits": 100},
        )
        clock.advance(1)
    with pytest.raises(LimitExceededException):
        call(
            ops,
            "UpdateTable",
            TableName="dec",
            ProvisionedThroughput={"ReadCapacityUnits": 50, "WriteCapacityUnits": 100},
        )
    call(
        ops, "UpdateTable", TableName="dec", ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 100}
    )


def test_the_meter_counts_what_is_taken_charged_and_given_back() -> None:
    meter = throttle.Meter()
    lane, table = spent(10, 1000), TableBucket(100, T0, meter=meter)
    other = TableBucket(100, T0, meter=meter)  # a second table of the same server shares the meter
    assert throttle.decide(lane, table, 3.0, T0, 300.0, True) == throttle.OK
    throttle.charge(lane, other, 1.5, T0)
    assert meter.units == 4.5
    assert served(lane, table, T0, 20) == 5  # what the share still holds; the refused take nothing
    assert meter.units == 9.5
    throttle.refund(lane, table, 3.0, throttle.OK)
    throttle.refund(lane, table, 1.0, throttle.NOT_TAKEN)  # report mode metered it at admission
    assert meter.units == 5.5
