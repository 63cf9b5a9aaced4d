"""What the capacity model shows: per partition of a table and its GSIs, and Contributor Insights' top keys.

Plain JSON-able dicts for the extension endpoint (``GET /dynastore/partitions/<table>``,
``GET /dynastore/contributors/<table>``) and ``dynastore partitions``; the field list is in docs/capacity.md.
"""

from __future__ import annotations

from typing import Any

from dynastore.engine.capacity.buckets import Lane
from dynastore.engine.capacity.contributors import Counts
from dynastore.engine.capacity.history import Usage, window_of
from dynastore.engine.capacity.state import Resource, TableState
from dynastore.engine.context import Context
from dynastore.engine.pitr_archive import archive_of, recovery_view
from dynastore.limits import CONTRIBUTOR_TOP, CONTRIBUTOR_WINDOW_SECONDS
from dynastore.storage import keycodec, keyspace

__all__ = ["contributors_view", "partitions_view"]


def partitions_view(ctx: Context, st: TableState, window: tuple[float, float] | None = None) -> dict[str, Any]:
    """The partitions now and, given ``window`` = (since, until) in clock seconds, each partition's kept history
    (engine/capacity/history.py) over it, as ``history`` beside each resource's ``partitions``."""
    cap = ctx.capacity
    td = st.td
    items, size = ctx.catalog.stats(td.name)
    now = ctx.clock.now()
    view = {
        "table": td.name,
        "billing_mode": td.billing_mode.value,
        "capacity_mode": "enforce" if cap.enforce else "report",
        "as_if": st.tag_as_if if st.tag_as_if is not None else st.as_if,
        "item_count": items,
        "size_bytes": size,
        "limits": {
            "partition_bytes": cap.limits.max_bytes,
            "partition_rcu": cap.limits.max_rcu,
            "partition_wcu": cap.limits.max_wcu,
            "adaptive_delay": cap.adaptive_delay,
        },
        "now": now,
        **_resource_view(st.base, now, cap.adaptive_delay),
        "indexes": [{"index": name, **_resource_view(res, now, cap.adaptive_delay)} for name, res in st.gsis.items()],
        # point-in-time recovery: its bases' and log records' bytes (engine/pitr_archive.py), None while off
        "point_in_time": recovery_view(archive_of(ctx), ctx.catalog.find(td.name) or td, now),
    }
    if window is not None:
        _add_history(view, st, now, window)
    return view


def _add_history(view: dict[str, Any], st: TableState, now: float, window: tuple[float, float]) -> None:
    st.capture_history(now)  # what was counted since the last request belongs in the history shown
    history = st.history
    since, until = window
    view["window"] = {
        "since": since,
        "until": until,
        "bucket_seconds": history.step,
        "kept_seconds": history.keep * history.step,
        "oldest": history.oldest(),
    }
    view["history"] = _usage(window_of(history, "", st.base.pmap, since, until))
    for block in view["indexes"]:
        res = st.gsis[block["index"]]
        block["history"] = _usage(window_of(history, block["index"], res.pmap, since, until))


def _usage(buckets: list[Usage]) -> list[dict[str, Any]]:
    """A bucket per entry (only those that saw use), a partition per row (only those that saw use in it)."""
    return [
        {
            "start": bucket.start,
            "partitions": [
                {
                    "partition": index,
                    "consumed": {"read": row.read, "write": row.write},
                    "throttled": {"read": row.read_throttled, "write": row.write_throttled},
                    "items": row.items,
                    "bytes": row.bytes,
                }
                for index, row in bucket.rows.items()
            ],
        }
        for bucket in buckets
    ]


def _resource_view(res: Resource, now: float, adaptive_delay: float) -> dict[str, Any]:
    parts = []
    for i, p in enumerate(res.pmap):
        read, write = res.reads[i], res.writes[i]
        for lane in (read, write):
            lane.share.refill(now)
        parts.append(
            {
                "partition": i,
                "hash_range": [f"{p.lo:08x}", f"{p.hi - 1:08x}"],
                "weight": f"{p.weight.numerator}/{p.weight.denominator}",
                "items": p.items,
                "bytes": p.bytes,
                "provisioned": {"read": read.share.rate, "write": write.share.rate},
                "ceiling": {"read": read.ceiling.rate, "write": write.ceiling.rate},
                "consumed": {"read": read.consumed, "write": write.consumed},
                "burst": {"read": read.burst_balance(), "write": write.burst_balance()},
                "throttled": {"read": read.throttled, "write": write.throttled},
                "adaptive": {"read": _lifted(read, now, adaptive_delay), "write": _lifted(write, now, adaptive_delay)},
                "borrowed": {"read": read.borrowed, "write": write.borrowed},
            }
        )
    return {
        "provisioned": res.provisioned,
        "throughput": {"read": res.read_total.rate, "write": res.write_total.rate},
        "peaks": {"read": res.peaks[0], "write": res.peaks[1]},
        "partition_count": len(parts),
        "partitions": parts,
    }


def _lifted(lane: Lane, now: float, adaptive_delay: float) -> bool:
    return lane.throttled_since is not None and now - lane.throttled_since >= adaptive_delay


def contributors_view(
    ctx: Context,
    st: TableState,
    index: str | None,
    window: float = CONTRIBUTOR_WINDOW_SECONDS,
    top: int = CONTRIBUTOR_TOP,
    until: float | None = None,
) -> dict[str, Any]:
    """The top keys of the ``window`` seconds up to ``until`` (default: now), at most the hour the counters keep."""
    res = st.base if index is None else st.gsis[index]
    status = res.insights_status
    out: dict[str, Any] = {
        "table": st.td.name,
        "index": index,
        "status": "DISABLED" if status is None else status[0],
        "mode": None if status is None else status[1],
        "window": window,
    }
    now = ctx.clock.now()
    if until is not None:
        out["until"] = until
    counters = res.insights
    if counters is None:
        out["rules"] = {}
        return out
    tops = counters.top(now, window, top, until=until)
    rules: dict[str, Any] = {
        "PKC": [_entry(res, k, c, False) for k, c in tops["accessed_partition_keys"]],
        "PKT": [_entry(res, k, c, False) for k, c in tops["throttled_partition_keys"]],
    }
    if res.range_attr is not None:
        rules["SKC"] = [_entry(res, k, c, True) for k, c in tops["accessed_item_keys"]]
        rules["SKT"] = [_entry(res, k, c, True) for k, c in tops["throttled_item_keys"]]
    if counters.mode == "THROTTLED_KEYS":
        rules = {name: v for name, v in rules.items() if name.endswith("T")}
    out["rules"] = rules
    return out


def _entry(res: Resource, encoded: bytes, counts: Counts, with_sort_key: bool) -> dict[str, Any]:
    """A top key, its counts, and the partition it falls in now (where its partition key hashes to)."""
    key: dict[str, Any] = {}
    offset = 0
    for attr in res.hash_attrs:  # a multi-attribute key names every attribute
        payload, offset = keycodec.decode_value(attr.type, encoded, offset)
        key[attr.name] = {attr.type: payload}
    hash_end = offset
    if with_sort_key:
        for attr in res.range_attrs:
            if offset >= len(encoded):
                break
            payload, offset = keycodec.decode_value(attr.type, encoded, offset)
            key[attr.name] = {attr.type: payload}
    partition = res.pmap.index_of(int.from_bytes(keyspace.partition_hash(encoded[:hash_end]), "big"))
    return {
        "key": key,
        "ConsumedThroughputUnits": counts.consumed,
        "ThrottleCount": counts.throttled,
        "partition": partition,
    }
