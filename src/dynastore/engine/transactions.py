"""TransactWriteItems / TransactGetItems: all-or-nothing execution, conflicts and client request tokens.

The model (docs/transactions.md has the long form):

* **Atomic and serializable by construction.** The server runs one handler at a time, to completion. Every
  action of a TransactWriteItems runs inside ONE KV write transaction, each item write through
  ``writes.apply_in`` (so index and stream maintenance added there commit with the transaction); any failure
  raises inside the ``with`` and the KV aborts everything. No other operation can interleave.
* **In flight until durable.** A transaction's commit is final when the group commit makes it durable (the
  response is held until then). From its execution until then, its items are *locked* in
  :class:`TransactionLocks`: a single-item write meeting such an item gets ``TransactionConflictException``,
  another transaction gets ``TransactionCanceledException`` with a ``TransactionConflict`` reason, and a
  BatchWriteItem returns the item in ``UnprocessedItems``. ``Config.transaction_lock_hold`` (a test aid,
  0 in production) keeps the locks that many seconds longer, by ``ctx.clock``, so tests can meet them.
* **Client request tokens** are stored in the same KV transaction as the writes (``b"T\\x00" + token``,
  with an expiry index under ``b"T\\x01"``), so a retry after a crash is still answered idempotently.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from dynastore import messages
from dynastore.engine import writes
from dynastore.engine.capacity import admission
from dynastore.engine.capacity.units import read_half_units, write_half_units
from dynastore.engine.context import Context
from dynastore.engine.transaction_locks import TransactionLocks
from dynastore.errors import (
    DynamoError,
    IdempotentParameterMismatchException,
    ItemCollectionSizeLimitExceededException,
    ThrottlingException,
    TransactionCanceledException,
    TransactionInProgressException,
    ValidationException,
)
from dynastore.expressions.evaluate import evaluate
from dynastore.limits import CLIENT_TOKEN_TTL_SECONDS, TOKEN_SWEEP_PER_WRITE
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.storage.itemcodec import decode_item, stored_size
from dynastore.storage.keyspace import TOKEN_EXPIRY_PREFIX, TOKEN_PREFIX, token_scope
from dynastore.storage.kv import WriteTxn

__all__ = [
    "ConditionCheckPlan",
    "GetAction",
    "GetOutcome",
    "TokenRecord",
    "TransactionLocks",
    "WriteAction",
    "canceled_by_throttling",
    "execute_get",
    "execute_write",
    "perform_write",
    "find_token",
]


REASON_NONE: Final[dict[str, Any]] = {"Code": "None"}
REASON_CONFLICT: Final[dict[str, Any]] = {"Code": "TransactionConflict", "Message": messages.TRANSACTION_ONGOING}


# ------------------------------------------------------------------------------------------------ writes


@dataclass(frozen=True, slots=True)
class ConditionCheckPlan:
    """A ConditionCheck action: evaluated against the stored item, never written."""

    condition: Any


@dataclass(frozen=True, slots=True)
class WriteAction:
    table: TableDef
    key: bytes
    plan: writes.Plan | ConditionCheckPlan
    return_old_on_failure: bool = False
    # The cancellation reason when the plan's condition fails, when it is not ConditionalCheckFailed (a PartiQL
    # INSERT of a key that exists: DuplicateItem): (code, message).
    failure_reason: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class TokenRecord:
    request_hash: str
    expires_at: float
    read_half_units: dict[str, int] = field(default_factory=dict)  # what a replay reports, per table


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    results: list[writes.WriteResult]
    replayed: TokenRecord | None = None  # set when the token's earlier result was returned instead


def find_token(ctx: Context, token: str, request_hash: str) -> TokenRecord | None:
    """The live record of ``token`` if this same request already succeeded with it.

    Raises IdempotentParameterMismatchException for another request within the window, and
    TransactionInProgressException while the earlier transaction's commit is not final yet.
    """
    key = TOKEN_PREFIX + _token_bytes(ctx, token)
    with ctx.kv.read() as txn:
        raw = txn.get(key)
    if raw is None:
        return None
    record = _decode_token(raw)
    if record.expires_at <= ctx.clock.now():
        return None
    if record.request_hash != request_hash:
        raise IdempotentParameterMismatchException(messages.IDEMPOTENT_MISMATCH)
    if ctx.locks.is_locked(key):
        raise TransactionInProgressException(messages.TRANSACTION_IN_PROGRESS)
    return record


def perform_write(
    ctx: Context, actions: list[WriteAction], *, token: str | None = None, request_hash: str = ""
) -> WriteOutcome:
    """TransactWriteItems as the engine runs it: every action admitted at transactional cost, or none (a refusal
    cancels the transaction with throttling reasons and gives back what the others took); then executed
    (``execute_write``) and settled at the real cost. A canceled transaction keeps what it was admitted at, as a
    failed condition does; one refused before it ran (its token belongs to another request, or is in use) and
    a replayed token give everything back."""
    tickets = _admit(ctx, actions)
    try:
        outcome = execute_write(ctx, actions, token=token, request_hash=request_hash)
    except TransactionCanceledException:
        raise
    except DynamoError:
        _refund(ctx, tickets)
        raise
    if outcome.replayed is not None:
        _refund(ctx, tickets)  # a repeated token writes nothing
    else:
        _settle(ctx, actions, tickets, outcome.results)
    return outcome


def _admit(ctx: Context, actions: list[WriteAction]) -> list[admission.Ticket]:
    """Every action admitted as one request (``admission.Joint``). A ConditionCheck is charged as the write
    units DynamoDB reports for it (one unit of work)."""
    tickets: list[admission.Ticket] = []
    refusals: list[DynamoError | None] = []
    estimates = [_write_estimate(action) for action in actions]
    joint = admission.Joint(_units_by_table(actions, [cost for cost, _ in estimates]))
    for action, (cost, item) in zip(actions, estimates, strict=True):
        outcome = admission.attempt_write(
            ctx, action.table, action.key, cost, item=item, transactional=True, joint=joint
        )
        if isinstance(outcome, DynamoError):
            refusals.append(outcome)
        else:
            tickets.append(outcome)
            refusals.append(None)
    if len(tickets) < len(actions):
        _refund(ctx, tickets)
        raise canceled_by_throttling(refusals)
    return tickets


def _write_estimate(action: WriteAction) -> tuple[int, Item | None]:
    """The half-units an action is admitted at, and its new item when known before it runs."""
    plan = action.plan
    if isinstance(plan, writes.PutPlan):
        assert plan.size is not None
        return write_half_units(plan.size, transactional=True), plan.item
    return write_half_units(0, transactional=True), None  # the size is known only once it ran: the rest settled


def _units_by_table(actions: Sequence[WriteAction | GetAction], costs: list[int]) -> dict[int, float]:
    """A transaction's capacity units on each table (by table id), as one request asks its buckets for them."""
    units: dict[int, float] = {}
    for action, cost in zip(actions, costs, strict=True):
        table_id = action.table.table_id
        units[table_id] = units.get(table_id, 0.0) + cost / 2
    return units


def _settle(
    ctx: Context, actions: list[WriteAction], tickets: list[admission.Ticket], results: list[writes.WriteResult]
) -> None:
    """Charge each committed action its real cost and account the partitions' item counts and sizes."""
    for action, ticket, result in zip(actions, tickets, results, strict=True):
        if isinstance(action.plan, ConditionCheckPlan):  # nothing written, no index touched
            admission.settle_write(ctx, ticket, result.old_size, result.new_size)
        else:
            writes.settle(ctx, ticket, result)


def _refund(ctx: Context, tickets: list[admission.Ticket]) -> None:
    for ticket in tickets:
        admission.refund(ctx, ticket)


def execute_write(
    ctx: Context,
    actions: list[WriteAction],
    *,
    token: str | None = None,
    request_hash: str = "",
) -> WriteOutcome:
    """Run every action in one KV transaction, or none (TransactionCanceledException, reasons in order)."""
    if token is not None:
        replay = find_token(ctx, token, request_hash)
        if replay is not None:
            return WriteOutcome([], replay)
    locks = ctx.locks
    if not locks.idle:
        conflicts = [locks.is_locked(action.key) for action in actions]
        if any(conflicts):
            raise _canceled([REASON_CONFLICT if hit else REASON_NONE for hit in conflicts])

    results: list[writes.WriteResult] = []
    for action in actions:
        writes.prepare(ctx, action.table)
    # The transaction's changes go to the change log as one record (changelog.group).
    with ctx.kv.write() as txn, ctx.changelog.group(txn):
        reasons: list[dict[str, Any]] = []
        failed = False
        for action in actions:
            try:
                results.append(_run(ctx, txn, action))
                reasons.append(REASON_NONE)
            except writes.ConditionFailedError as e:
                failed = True
                code, text = action.failure_reason or ("ConditionalCheckFailed", messages.CONDITION_FAILED)
                reason: dict[str, Any] = {"Code": code, "Message": text}
                if action.return_old_on_failure and e.old is not None:
                    reason["Item"] = e.old
                reasons.append(reason)
            except ValidationException as invalid:  # found only while applying (e.g. the updated item is too large)
                failed = True
                reasons.append({"Code": "ValidationError", "Message": invalid.detail or ""})
            except ItemCollectionSizeLimitExceededException as full:  # a table with LSIs: the collection is full
                failed = True
                reasons.append({"Code": "ItemCollectionSizeLimitExceeded", "Message": full.message})
        if failed:
            raise _canceled(reasons)  # leaving the block by an exception aborts every write
        keys = [action.key for action in actions]
        if token is not None:
            record = TokenRecord(
                request_hash, ctx.clock.now() + CLIENT_TOKEN_TTL_SECONDS, _read_units(actions, results)
            )
            scoped = _token_bytes(ctx, token)
            _store_token(txn, scoped, record, ctx.clock.now())
            keys.append(TOKEN_PREFIX + scoped)
    locks.lock(keys, ctx.kv.commit_seq)
    for action, result in zip(actions, results, strict=True):
        if not isinstance(action.plan, ConditionCheckPlan):
            writes._record_stats(ctx, action.table, result)
    return WriteOutcome(results)


def _run(ctx: Context, txn: WriteTxn, action: WriteAction) -> writes.WriteResult:
    plan = action.plan
    if isinstance(plan, ConditionCheckPlan):
        raw = txn.get(action.key)
        old = decode_item(raw) if raw is not None else None
        if not evaluate(plan.condition, old):
            raise writes.ConditionFailedError(old)
        size = item_size(old) if old is not None else 0
        return writes.WriteResult(old is not None, old, old, size, size)
    # as writes.execute does: the item's index entries and GSI backlog commit with the transaction
    return writes.apply_in(ctx, txn, action.table, action.key, plan)


def canceled_by_invalid_key(count: int, index: int, message: str) -> TransactionCanceledException:
    """A member's key does not fit its table's schema: ValidationError at its position, None elsewhere."""
    reasons = [REASON_NONE] * count
    reasons[index] = {"Code": "ValidationError", "Message": message}
    return _canceled(reasons)


def _canceled(reasons: list[dict[str, Any]]) -> TransactionCanceledException:
    codes = ", ".join(reason["Code"] for reason in reasons)
    return TransactionCanceledException(messages.TRANSACTION_CANCELED.format(codes=codes), CancellationReasons=reasons)


def canceled_by_throttling(refusals: list[DynamoError | None]) -> TransactionCanceledException:
    """The cancellation of a transaction the capacity model refused, per item in request order: the refusal
    (``admission.attempt_*``) as DynamoDB's reason, ``ProvisionedThroughputExceeded`` for a provisioned table or
    index and ``ThrottlingError`` on demand, with the throttling error's text; None for the other items."""
    return _canceled([REASON_NONE if refusal is None else _throttling_reason(refusal) for refusal in refusals])


def _throttling_reason(refusal: DynamoError) -> dict[str, Any]:
    code = "ThrottlingError" if isinstance(refusal, ThrottlingException) else "ProvisionedThroughputExceeded"
    return {"Code": code, "Message": refusal.message}


def _read_units(actions: list[WriteAction], results: list[writes.WriteResult]) -> dict[str, int]:
    units: dict[str, int] = {}
    for action, result in zip(actions, results, strict=True):
        size = max(result.old_size, result.new_size)
        units[action.table.name] = units.get(action.table.name, 0) + read_half_units(
            size, consistent=True, transactional=True
        )
    return units


def _token_bytes(ctx: Context, token: str) -> bytes:
    """A client request token as keyed: tokens are per namespace (storage/keyspace.py ``token_scope``)."""
    scope = ctx.catalog.scope
    return token_scope(scope) + token.encode() if scope else token.encode()


def _store_token(txn: WriteTxn, token: bytes, record: TokenRecord, now: float) -> None:
    _sweep_tokens(txn, now)
    txn.put(TOKEN_PREFIX + token, _encode_token(record))
    txn.put(TOKEN_EXPIRY_PREFIX + _expiry_bytes(record.expires_at) + token, b"")


def _sweep_tokens(txn: WriteTxn, now: float) -> None:
    """Forget a few expired tokens (oldest first), so the token space stays bounded by the write rate."""
    hi = TOKEN_EXPIRY_PREFIX + _expiry_bytes(now)
    stale = list(itertools.islice(txn.iter_range(TOKEN_EXPIRY_PREFIX, hi), TOKEN_SWEEP_PER_WRITE))
    for index_key, _ in stale:
        txn.delete(index_key)
        token_key = TOKEN_PREFIX + index_key[len(TOKEN_EXPIRY_PREFIX) + 8 :]
        raw = txn.get(token_key)
        if raw is not None and _decode_token(raw).expires_at <= now:
            txn.delete(token_key)


def _expiry_bytes(at: float) -> bytes:
    return max(0, round(at * 1000)).to_bytes(8, "big")


def _encode_token(record: TokenRecord) -> bytes:
    return orjson.dumps({"h": record.request_hash, "e": record.expires_at, "r": record.read_half_units})


def _decode_token(raw: bytes) -> TokenRecord:
    data = orjson.loads(raw)
    return TokenRecord(data["h"], data["e"], data["r"])


# ------------------------------------------------------------------------------------------------ reads


@dataclass(frozen=True, slots=True)
class GetAction:
    table: TableDef
    key: bytes


@dataclass(frozen=True, slots=True)
class GetOutcome:
    item: Item | None
    half_units: int  # the read's transactional cost (two strongly consistent reads)


def execute_get(ctx: Context, actions: list[GetAction]) -> list[GetOutcome]:
    """Read every item from one snapshot and admit every read at its exact transactional cost (a read has no
    effect, so it is admitted after it ran, as GetItem is). TransactionCanceledException if a transaction holds
    any of the items, or if the capacity model refuses any read (what the others took is given back)."""
    locks = ctx.locks
    if not locks.idle:
        conflicts = [locks.is_locked(action.key) for action in actions]
        if any(conflicts):
            raise _canceled([REASON_CONFLICT if hit else REASON_NONE for hit in conflicts])
    with ctx.kv.read() as txn:
        raws = [txn.get(action.key) for action in actions]
    costs = [
        read_half_units(0 if raw is None else stored_size(raw), consistent=True, transactional=True) for raw in raws
    ]
    _admit_gets(ctx, actions, costs)
    return [
        GetOutcome(decode_item(raw) if raw is not None else None, cost) for raw, cost in zip(raws, costs, strict=True)
    ]


def _admit_gets(ctx: Context, actions: list[GetAction], costs: list[int]) -> None:
    """Admit every read, or none: a refusal cancels the transaction and gives back what the others took."""
    tickets: list[admission.Ticket] = []
    refusals: list[DynamoError | None] = []
    joint = admission.Joint(_units_by_table(actions, costs))
    for action, cost in zip(actions, costs, strict=True):
        outcome = admission.attempt_read(ctx, action.table, action.key, cost, joint=joint)
        if isinstance(outcome, DynamoError):
            refusals.append(outcome)
        else:
            tickets.append(outcome)
            refusals.append(None)
    if len(tickets) < len(actions):
        for ticket in tickets:
            admission.refund(ctx, ticket)
        raise canceled_by_throttling(refusals)
