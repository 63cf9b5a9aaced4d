"""engine.transactions: all-or-nothing writes, the lock registry, client request tokens (memory and lmdb)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynastore.engine import transactions, writes
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import (
    IdempotentParameterMismatchException,
    TransactionCanceledException,
    TransactionConflictException,
    TransactionInProgressException,
)
from dynastore.expressions import ExpressionContext
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item
from dynastore.storage.kv import KV
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock
from tests.unit.engine import tables


def _context(kv: KV, hold: float = 0.0) -> Context:
    ctx, _ = tables.make_ctx(kv, transaction_lock_hold=hold)
    tables.create(ctx, "t")  # partition key pk (S), on demand
    return ctx


@pytest.fixture(params=["memory", "lmdb"])
def kv(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KV]:
    store: KV = MemoryKV() if request.param == "memory" else LmdbKV(tmp_path / "db")
    yield store
    store.close()


@pytest.fixture
def ctx(kv: KV) -> Context:
    return _context(kv)


def _table(ctx: Context) -> TableDef:
    return ctx.catalog.get_active("t")


def _key(ctx: Context, pk: str) -> bytes:
    return storage_key(_table(ctx), {"pk": {"S": pk}})


def _stored(ctx: Context, pk: str) -> Any:
    with ctx.kv.read() as txn:
        raw = txn.get(_key(ctx, pk))
    return None if raw is None else decode_item(raw)


def _put(ctx: Context, pk: str, condition: str | None = None, **attrs: str) -> transactions.WriteAction:
    item = {"pk": {"S": pk}, **{name: {"N": value} for name, value in attrs.items()}}
    cond = ExpressionContext(None, None).condition("ConditionExpression", condition) if condition else None
    return transactions.WriteAction(_table(ctx), _key(ctx, pk), writes.PutPlan(item, cond), return_old_on_failure=True)


def _check(ctx: Context, pk: str, condition: str) -> transactions.WriteAction:
    cond = ExpressionContext(None, None).condition("ConditionExpression", condition)
    return transactions.WriteAction(_table(ctx), _key(ctx, pk), transactions.ConditionCheckPlan(cond))


def _flush(ctx: Context) -> None:
    ctx.kv.flush()


def test_all_actions_commit_together(ctx: Context) -> None:
    outcome = transactions.execute_write(ctx, [_put(ctx, "a", v="1"), _put(ctx, "b", v="2")])
    assert [r.new for r in outcome.results] == [
        {"pk": {"S": "a"}, "v": {"N": "1"}},
        {"pk": {"S": "b"}, "v": {"N": "2"}},
    ]
    assert _stored(ctx, "a") == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert _stored(ctx, "b") == {"pk": {"S": "b"}, "v": {"N": "2"}}
    assert ctx.catalog.stats("t")[0] == 2


def test_a_failed_condition_writes_nothing_and_reports_every_reason_in_order(ctx: Context) -> None:
    transactions.execute_write(ctx, [_put(ctx, "b", v="1")])
    _flush(ctx)
    seq = ctx.kv.commit_seq
    with pytest.raises(TransactionCanceledException) as e:
        transactions.execute_write(
            ctx,
            [
                _put(ctx, "a", "attribute_not_exists(pk)", v="9"),
                _put(ctx, "b", "attribute_not_exists(pk)", v="9"),
                _check(ctx, "c", "attribute_exists(pk)"),
            ],
        )
    assert e.value.message == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[None, ConditionalCheckFailed, ConditionalCheckFailed]"
    )
    assert e.value.extra["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed", "Item": _stored(ctx, "b")},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
    ]
    assert ctx.kv.commit_seq == seq
    assert _stored(ctx, "a") is None
    assert _stored(ctx, "b") == {"pk": {"S": "b"}, "v": {"N": "1"}}


def test_condition_check_reads_but_never_writes(ctx: Context) -> None:
    transactions.execute_write(ctx, [_put(ctx, "a", v="1")])
    _flush(ctx)
    outcome = transactions.execute_write(ctx, [_check(ctx, "a", "attribute_exists(v)"), _put(ctx, "b")])
    assert outcome.results[0].new == outcome.results[0].old == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert ctx.catalog.stats("t")[0] == 2


def test_an_update_growing_past_the_item_limit_is_a_validation_error_reason(ctx: Context) -> None:
    big = {"pk": {"S": "a"}, "blob": {"S": "x" * 400_000}}
    transactions.execute_write(ctx, [transactions.WriteAction(_table(ctx), _key(ctx, "a"), writes.PutPlan(big))])
    _flush(ctx)
    exprs = ExpressionContext(None, {":more": {"S": "y" * 10_000}})
    grow = writes.UpdatePlan({"pk": {"S": "a"}}, exprs.update("SET more = :more"))
    with pytest.raises(TransactionCanceledException) as e:
        transactions.execute_write(ctx, [_put(ctx, "b"), transactions.WriteAction(_table(ctx), _key(ctx, "a"), grow)])
    assert e.value.extra["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ValidationError", "Message": "Item size to update has exceeded the maximum allowed size"},
    ]
    assert _stored(ctx, "b") is None


def _plain_put(pk: str) -> writes.PutPlan:
    item = {"pk": {"S": pk}}
    return writes.PutPlan(item, size=item_size(item))


def test_locks_are_free_when_idle_and_released_once_durable(ctx: Context) -> None:
    locks = ctx.locks
    assert locks.idle
    transactions.execute_write(ctx, [_put(ctx, "a"), _check(ctx, "a2", "attribute_not_exists(pk)")])
    if isinstance(ctx.kv, MemoryKV):  # durable at once: nothing stays locked
        assert not locks.is_locked(_key(ctx, "a"))
        return
    assert locks.is_locked(_key(ctx, "a")) and locks.is_locked(_key(ctx, "a2"))
    assert not locks.is_locked(_key(ctx, "b"))
    with pytest.raises(TransactionConflictException) as e:
        writes.perform(ctx, _table(ctx), _key(ctx, "a"), _plain_put("a"))
    assert e.value.message == "Transaction is ongoing for the item"
    with pytest.raises(TransactionCanceledException) as c:
        transactions.execute_write(ctx, [_put(ctx, "b"), _put(ctx, "a")])
    assert c.value.extra["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
    ]
    with pytest.raises(TransactionCanceledException):
        transactions.execute_get(ctx, [transactions.GetAction(_table(ctx), _key(ctx, "a"))])
    _flush(ctx)
    assert not locks.is_locked(_key(ctx, "a"))
    assert locks.idle
    assert writes.perform(ctx, _table(ctx), _key(ctx, "a"), _plain_put("a")).existed


def test_the_hold_keeps_locks_until_the_clock_passes_it(kv: KV) -> None:
    ctx = _context(kv, hold=5.0)
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    locks = ctx.locks
    transactions.execute_write(ctx, [_put(ctx, "a")])
    _flush(ctx)
    clock.advance(4.9)
    assert locks.is_locked(_key(ctx, "a"))
    clock.advance(0.2)
    assert not locks.is_locked(_key(ctx, "a"))
    assert locks.locked_count() == 0


def test_a_newer_lock_survives_the_release_of_an_older_one() -> None:
    class FakeKV:
        durable_seq = 0

    clock = ManualClock()
    fake: Any = FakeKV()
    locks = transactions.TransactionLocks(fake, clock)
    locks.lock([b"k"], 1)
    locks.lock([b"k", b"j"], 2)
    fake.durable_seq = 1
    assert locks.is_locked(b"k") and locks.is_locked(b"j")
    fake.durable_seq = 2
    assert not locks.is_locked(b"k") and locks.idle


def test_client_token_replays_mismatches_and_expires(ctx: Context) -> None:
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    first = transactions.execute_write(ctx, [_put(ctx, "a", v="1")], token="tok", request_hash="h1")
    assert first.replayed is None
    _flush(ctx)
    seq = ctx.kv.commit_seq
    again = transactions.execute_write(ctx, [_put(ctx, "a", v="1")], token="tok", request_hash="h1")
    assert again.replayed is not None and again.replayed.read_half_units == {"t": 4}
    assert ctx.kv.commit_seq == seq  # nothing written
    with pytest.raises(IdempotentParameterMismatchException) as e:
        transactions.execute_write(ctx, [_put(ctx, "a", v="2")], token="tok", request_hash="h2")
    assert e.value.message == (
        "Specified idempotent token was used with different request parameters within the idempotency window"
    )
    clock.advance(599)
    assert transactions.find_token(ctx, "tok", "h1") is not None
    clock.advance(2)  # ten minutes after the request finished, the token is new again
    assert transactions.find_token(ctx, "tok", "h2") is None
    fresh = transactions.execute_write(ctx, [_put(ctx, "a", v="2")], token="tok", request_hash="h2")
    assert fresh.replayed is None
    assert _stored(ctx, "a") == {"pk": {"S": "a"}, "v": {"N": "2"}}


def test_a_failed_transaction_does_not_consume_its_token(ctx: Context) -> None:
    transactions.execute_write(ctx, [_put(ctx, "a")])
    _flush(ctx)
    with pytest.raises(TransactionCanceledException):
        transactions.execute_write(ctx, [_put(ctx, "a", "attribute_not_exists(pk)")], token="t1", request_hash="h")
    assert transactions.find_token(ctx, "t1", "other") is None


def test_expired_tokens_are_swept(ctx: Context) -> None:
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    for i in range(3):
        transactions.execute_write(ctx, [_put(ctx, f"x{i}")], token=f"old{i}", request_hash="h")
        _flush(ctx)
    clock.advance(700)
    transactions.execute_write(ctx, [_put(ctx, "y")], token="new", request_hash="h")
    with ctx.kv.read() as txn:
        tokens = [k for k, _ in txn.iter_range(keyspace.TOKEN_PREFIX, b"T\x02")]
    assert tokens == [keyspace.TOKEN_PREFIX + b"new", tokens[1]] and len(tokens) == 2
    assert tokens[1].startswith(keyspace.TOKEN_EXPIRY_PREFIX) and tokens[1].endswith(b"new")


def test_a_retry_while_the_commit_is_not_final_is_in_progress(kv: KV) -> None:
    ctx = _context(kv, hold=10.0)
    clock = ctx.clock
    assert isinstance(clock, ManualClock)
    transactions.execute_write(ctx, [_put(ctx, "a")], token="tok", request_hash="h")
    with pytest.raises(TransactionInProgressException) as e:
        transactions.execute_write(ctx, [_put(ctx, "a")], token="tok", request_hash="h")
    assert e.value.message == "The transaction with the given request token is already in progress."
    _flush(ctx)
    clock.advance(11)
    assert transactions.execute_write(ctx, [_put(ctx, "a")], token="tok", request_hash="h").replayed is not None


def test_the_token_survives_a_reopen(tmp_path: Path) -> None:
    kv = LmdbKV(tmp_path / "db")
    ctx = _context(kv)
    transactions.execute_write(ctx, [_put(ctx, "a")], token="tok", request_hash="h")
    kv.flush()
    kv.close()
    reopened = LmdbKV(tmp_path / "db")
    try:
        ctx2, _ = tables.make_ctx(reopened)  # the clock where the first server's stood
        assert transactions.find_token(ctx2, "tok", "h") is not None
    finally:
        reopened.close()
