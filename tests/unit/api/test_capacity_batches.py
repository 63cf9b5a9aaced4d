"""Admission in the batch and transaction handlers: what is refused, what is given back, what is settled.

Handlers run through ``dispatch.bind`` on an in-memory store with a ManualClock that never moves, so bucket
contents are exact: every table here has its burst credit spent as it is created (a new partition starts with
300 seconds of it), so each partition holds one second of its share.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dynastore import messages
from dynastore.app import build_context
from dynastore.config import Config
from dynastore.engine import transactions
from dynastore.engine.capacity import admission
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import (
    DynamoError,
    ProvisionedThroughputExceededException,
    ThrottlingException,
    TransactionCanceledException,
)
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock
from tests.unit.api.operations import bound

Ops = dict[str, Any]


def make_ctx(**config: Any) -> tuple[Context, Ops]:
    cfg = Config(in_memory=True, clock=ManualClock(), partition_max_rcu=60, partition_max_wcu=20, **config)
    kv = MemoryKV()
    ctx = build_context(cfg, kv, Catalog.load(kv, cfg))
    return ctx, bound(ctx)


def create(ctx: Context, ops: Ops, name: str, read: int | None = None, write: int | None = None) -> None:
    """Create a table and spend its burst credit."""
    billing: dict[str, Any] = {"BillingMode": "PAY_PER_REQUEST"}
    if read is not None and write is not None:
        billing = {"ProvisionedThroughput": {"ReadCapacityUnits": read, "WriteCapacityUnits": write}}
    ops["CreateTable"](
        {
            "TableName": name,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "N"},
            ],
            **billing,
        }
    )
    cap = ctx.capacity
    cap.spend_burst(cap.find(name))


def key(sk: int) -> dict[str, Any]:
    return {"pk": {"S": "hot"}, "sk": {"N": str(sk)}}


def put(sk: int, size: int = 10) -> dict[str, Any]:
    return {"PutRequest": {"Item": {**key(sk), "v": {"S": "x" * size}}}}


def lane(ctx: Context, name: str, *, write: bool) -> Any:
    res = ctx.capacity.find(name).base
    return (res.writes if write else res.reads)[0]


@pytest.fixture
def table() -> Iterator[tuple[Context, Ops]]:
    """A provisioned table of one partition: 2 RCU, 20 WCU."""
    ctx, ops = make_ctx()
    create(ctx, ops, "tbl", 2, 20)
    yield ctx, ops


# ---------------------------------------------------------------- BatchWriteItem


def test_batch_write_leaves_the_refused_part_unprocessed_and_settles_the_rest(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    requests = [put(sk, size=1500) for sk in range(12)]  # two write units each: ten fit
    response = ops["BatchWriteItem"]({"RequestItems": {"tbl": requests}})
    assert response["UnprocessedItems"] == {"tbl": requests[10:]}
    partition = ctx.capacity.find("tbl").base.pmap.partitions[0]
    assert partition.items == 10 and partition.bytes == ctx.catalog.stats("tbl")[1]
    assert lane(ctx, "tbl", write=True).consumed == 20


def test_batch_write_refused_whole_raises_the_first_refusal(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    ops["BatchWriteItem"]({"RequestItems": {"tbl": [put(sk) for sk in range(20)]}})
    with pytest.raises(ProvisionedThroughputExceededException) as info:
        ops["BatchWriteItem"]({"RequestItems": {"tbl": [put(sk) for sk in range(20, 23)]}})
    assert info.value.message == messages.THROUGHPUT_EXCEEDED_TABLE
    assert ctx.catalog.stats("tbl")[0] == 20


def test_batch_write_deletes_are_settled_at_the_size_removed(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    ops["BatchWriteItem"]({"RequestItems": {"tbl": [put(0, size=3000)]}})  # three write units
    ops["BatchWriteItem"]({"RequestItems": {"tbl": [{"DeleteRequest": {"Key": key(0)}}]}})
    assert lane(ctx, "tbl", write=True).consumed == 6
    assert ctx.capacity.find("tbl").base.pmap.partitions[0].items == 0


# ---------------------------------------------------------------- BatchGetItem


def test_batch_get_admits_at_the_exact_cost_and_refuses_the_rest(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    ops["BatchWriteItem"]({"RequestItems": {"tbl": [put(0, size=5000)]}})  # two read units
    keys = [key(0), key(1)]
    response = ops["BatchGetItem"]({"RequestItems": {"tbl": {"Keys": keys, "ConsistentRead": True}}})
    assert b'"UnprocessedKeys":{"tbl":{"Keys":[{"pk":{"S":"hot"},"sk":{"N":"1"}}],"ConsistentRead":true}}' in response
    assert lane(ctx, "tbl", write=False).consumed == 2
    with pytest.raises(ProvisionedThroughputExceededException):
        ops["BatchGetItem"]({"RequestItems": {"tbl": {"Keys": keys[1:]}}})


# ---------------------------------------------------------------- transactions


def test_transact_write_cancels_at_the_refused_position_and_refunds_the_others(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    create(ctx, ops, "other", 2, 20)
    ops["BatchWriteItem"]({"RequestItems": {"tbl": [put(sk) for sk in range(19)]}})  # one unit left
    items = [
        {"Put": {"TableName": "other", "Item": key(0)}},
        {"Put": {"TableName": "tbl", "Item": key(100)}},  # two units: transactional
    ]
    with pytest.raises(TransactionCanceledException) as info:
        ops["TransactWriteItems"]({"TransactItems": items})
    assert info.value.extra["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ProvisionedThroughputExceeded", "Message": messages.THROUGHPUT_EXCEEDED_TABLE},
    ]
    assert lane(ctx, "other", write=True).consumed == 0
    assert ctx.catalog.stats("other")[0] == 0


def test_transact_write_charges_double_and_settles_condition_checks(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    check = {"TableName": "tbl", "Key": key(1), "ConditionExpression": "attribute_not_exists(pk)"}
    items = [{"Put": {"TableName": "tbl", "Item": {**key(0), "v": {"S": "x" * 1500}}}}, {"ConditionCheck": check}]
    ops["TransactWriteItems"]({"TransactItems": items})
    assert lane(ctx, "tbl", write=True).consumed == 2 * 2 + 2 * 1
    partition = ctx.capacity.find("tbl").base.pmap.partitions[0]
    assert partition.items == 1  # the ConditionCheck wrote nothing


def test_transact_write_replay_gives_back_what_it_was_admitted_at(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    request = {"TransactItems": [{"Put": {"TableName": "tbl", "Item": key(0)}}], "ClientRequestToken": "once"}
    ops["TransactWriteItems"](request)
    ops["TransactWriteItems"](request)
    assert lane(ctx, "tbl", write=True).consumed == 2


def test_transact_get_cancels_and_refunds(table: tuple[Context, Ops]) -> None:
    ctx, ops = table
    gets = [{"Get": {"TableName": "tbl", "Key": key(sk)}} for sk in range(2)]
    with pytest.raises(TransactionCanceledException) as info:
        ops["TransactGetItems"]({"TransactItems": gets})
    assert [reason["Code"] for reason in info.value.extra["CancellationReasons"]] == [
        "None",
        "ProvisionedThroughputExceeded",
    ]
    assert lane(ctx, "tbl", write=False).consumed == 0


def test_report_mode_refuses_nothing() -> None:
    ctx, ops = make_ctx(capacity="report")
    create(ctx, ops, "rep", 2, 20)
    response = ops["BatchWriteItem"]({"RequestItems": {"rep": [put(sk, size=1500) for sk in range(20)]}})
    assert response["UnprocessedItems"] == {}
    gets = [{"Get": {"TableName": "rep", "Key": key(sk)}} for sk in range(5)]
    assert len(ops["TransactGetItems"]({"TransactItems": gets})["Responses"]) == 5
    assert lane(ctx, "rep", write=True).throttled == 10


# ---------------------------------------------------------------- the pieces


def test_attempt_returns_the_error_admit_would_raise() -> None:
    ctx, ops = make_ctx()
    create(ctx, ops, "odt")  # on demand: partitions of at most 20 WCU here
    table = ctx.catalog.get("odt")
    item_key = storage_key(table, key(0))
    first = admission.attempt_write(ctx, table, item_key, 40, transactional=True)
    assert isinstance(first, admission.Ticket) and first.transactional
    refused = admission.attempt_write(ctx, table, item_key, 2)
    assert isinstance(refused, ThrottlingException) and refused.message == messages.THROTTLED_ON_DEMAND
    assert admission.try_admit_write(ctx, table, item_key, 2) is None


@pytest.mark.parametrize(
    ("refusal", "code"),
    [
        (ProvisionedThroughputExceededException(messages.THROUGHPUT_EXCEEDED_INDEX), "ProvisionedThroughputExceeded"),
        (ThrottlingException(messages.THROTTLED_ON_DEMAND_INDEX), "ThrottlingError"),
    ],
)
def test_cancellation_reasons_of_throttling(refusal: DynamoError, code: str) -> None:
    error = transactions.canceled_by_throttling([None, refusal])
    assert error.extra["CancellationReasons"] == [{"Code": "None"}, {"Code": code, "Message": refusal.message}]
    assert error.message is not None and error.message.endswith(f"[None, {code}]")
