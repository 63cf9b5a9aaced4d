"""Trimming the change log: records no consumer holds any more are trimmed (a stream holds its records for 24
hours, as DynamoDB keeps them; engine/log_consumers.py), and so are the closed shards past that period and the
deleted tables whose streams were still readable."""

from __future__ import annotations

from dynastore.engine.context import Context
from dynastore.limits import CHANGELOG_TRIM_RECORDS

__all__ = ["trim"]


def trim(ctx: Context) -> bool:
    """One chunk of trimming, from the maintenance loop; True while more records are due."""
    now = ctx.clock.now()
    more = ctx.changelog.trim(now, CHANGELOG_TRIM_RECORDS)
    with ctx.kv.write() as txn:
        for table_id in ctx.shards.loaded():
            ctx.shards.forget_expired(txn, table_id, now)
        ctx.shards.forget_deleted(txn, now)
    return more
