"""Time to live: items whose TTL attribute holds a time in the past are deleted in the background.

The rules are DynamoDB's (Developer Guide, "Time to Live"): the attribute must be a Number of epoch seconds;
an item without it, with another type, or with a time more than five years in the past is never deleted.
DynamoDB deletes expired items within a few days and, until then, reads still return them; dynastore sweeps
each table with TTL enabled on every maintenance pass, a chunk of items at a time, so expired items go within
seconds (docs/operations.md). A deletion goes through the ordinary write path (its indexes follow, nothing is
deleted whose TTL attribute changed meanwhile, an item held by a transaction waits for the next pass) and
consumes no capacity, as in DynamoDB. Time comes from the server's clock (``--manual-clock`` in tests).
"""

from __future__ import annotations

import orjson

from dynastore.engine import writes
from dynastore.engine.capacity import admission
from dynastore.engine.context import Context
from dynastore.engine.progress import TTL_SWEEP, Job
from dynastore.errors import DynamoError
from dynastore.expressions import ExpressionContext
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item

__all__ = ["sweep"]

SWEEP_CHUNK = 1000  # items examined per table per pass
REPORTED_DELETIONS = 1000  # a sweep round that deletes this many items reports its progress (engine/progress.py)
OLDEST = 5 * 365 * 24 * 3600  # seconds: TTL values further in the past than this are ignored


def sweep(ctx: Context) -> bool:
    """One pass over every table with TTL enabled (of every namespace); True while a table has items left to
    examine. The deletions are the service's (``ctx.as_service()``), each in its table's namespace."""
    now = ctx.clock.now()
    more = False
    service = ctx.as_service()
    swept: list[int] = []
    for table in ctx.catalog.every_table():
        if not table.is_active or table.ttl is None or not table.ttl.enabled:
            continue
        swept.append(table.table_id)
        more |= _sweep_table(service.for_table(table), table, table.ttl.attribute_name, now)
    progress = ctx.engine.progress
    if progress.running(TTL_SWEEP):
        progress.drop_except(TTL_SWEEP, swept)  # a table deleted, or its TTL disabled, during a round
    return more


def _sweep_table(ctx: Context, table: TableDef, attribute: str, now: float) -> bool:
    cursors = ctx.ttl_cursors
    prefix = keyspace.table_prefix(table.table_id)
    start = cursors.get(table.table_id, prefix)
    # A cheap test before decoding: stored JSON is orjson's, compact. (find, not ``in``: CPython's ``bytes in
    # bytes`` raises and drops a TypeError on every test.)
    needle = orjson.dumps(attribute) + b':{"N"'
    expired: list[bytes] = []
    last: bytes | None = None
    count = -1
    with ctx.kv.read() as txn:
        for count, (key, raw) in enumerate(txn.iter_range(start, keyspace.prefix_end(prefix))):
            if count == SWEEP_CHUNK:
                break
            last = key
            if raw.find(needle) >= 0 and _is_expired(decode_item(raw), attribute, now):
                expired.append(key)
        else:
            last = None  # the whole table was examined: start again from the beginning next pass
    if last is None:
        cursors.pop(table.table_id, None)
    else:
        cursors[table.table_id] = last + b"\x00"
    job = _round(ctx, table, start == prefix and last is not None)
    deleted = 0
    if expired:
        condition = ExpressionContext({"#t": attribute}, _window(now)).condition(
            "ConditionExpression", "#t BETWEEN :oldest AND :now"
        )
        for key in expired:
            deleted += _delete(ctx, table, key, condition)
    if job is not None:
        _count_round(ctx, job, examined=count + 1 if last is None else SWEEP_CHUNK, deleted=deleted, ended=last is None)
    return last is not None


def _round(ctx: Context, table: TableDef, starts_long_round: bool) -> Job | None:
    """The progress of this table's sweep round: registered (quiet) when a round begins that takes more than one
    pass, so a table that fits in one pass costs nothing here."""
    progress = ctx.engine.progress
    job = progress.get(TTL_SWEEP, table.table_id)
    if job is None and starts_long_round:
        catalog = ctx.catalog
        job = progress.start(
            TTL_SWEEP,
            table.table_id,
            table.name,
            total=catalog.stats(table.name)[0],
            account=catalog.account_id,
            region=catalog.region,
            quiet=True,
        )
        job.counts["deleted"] = 0
    return job


def _count_round(ctx: Context, job: Job, examined: int, deleted: int, ended: bool) -> None:
    """Count one pass of a round; the round is shown and logged once it has deleted many items."""
    progress = ctx.engine.progress
    job.done += examined
    job.counts["deleted"] += deleted
    if job.quiet and job.counts["deleted"] >= REPORTED_DELETIONS:
        progress.announce(job)
    if ended:
        progress.finish(job)


def _is_expired(item: Item, attribute: str, now: float) -> bool:
    value = item.get(attribute)
    if value is None or "N" not in value:
        return False
    try:
        at = float(value["N"])
    except ValueError:
        return False
    return now - OLDEST <= at <= now


def _window(now: float) -> dict[str, dict[str, str]]:
    return {":oldest": {"N": str(int(now - OLDEST))}, ":now": {"N": str(int(now))}}


def _delete(ctx: Context, table: TableDef, key: bytes, condition: object) -> bool:
    """Delete one expired item unless it changed or a transaction holds it (it is looked at again later); True
    if it was deleted."""
    locks = ctx.locks
    if not locks.idle and locks.is_locked(key):
        return False
    try:
        result = writes.execute(ctx, table, key, writes.DeletePlan(condition))
    except (writes.ConditionFailedError, DynamoError):
        return False
    admission.account_deleted(ctx, table, key, result.old_size)
    return True
