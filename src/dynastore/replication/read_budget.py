"""One read budget per partition across the nodes (docs/cluster.md "Capacity of reads served by followers").

A follower meters the eventually consistent reads it answers against its own copy of the table's partition
buckets (the same admission as everywhere). Twice a second it reports to the leader what each partition's reads
consumed since its last report (the difference of each lane's ``consumed``: nothing is added to the request
path); the leader charges those units to its own buckets, as if it had served the reads, and answers with the
partitions whose budget is nearly spent and what their buckets hold. The follower lowers its buckets to the
leader's, so it throttles a partition once the reads of all nodes together spent its budget.

The bound of the error: between two reports a follower admits reads against its own bucket only, so a partition
can serve up to ``REPORT_INTERVAL`` seconds of its maximum read rate per follower beyond its budget before every
node throttles it; over longer periods the partition's reads across the cluster are held to one budget.
"""

from __future__ import annotations

from typing import Any

from dynastore.engine.capacity import buckets
from dynastore.engine.capacity.state import Capacity, Resource, TableState

__all__ = ["REPORT_INTERVAL", "apply_pressure", "charge_reads", "consumed_since"]

REPORT_INTERVAL = 0.5  # seconds between a follower's reports of the reads it served

Seen = dict[tuple[int, str, int], float]  # (table id, index name or "", partition start) -> lane.consumed


def _resources(st: TableState) -> list[tuple[str, Resource]]:
    return [("", st.base), *st.gsis.items()]


def consumed_since(capacity: Capacity, seen: Seen) -> list[dict[str, Any]]:
    """What each partition's reads consumed since the last call (``seen`` keeps the lanes' counters)."""
    report: list[dict[str, Any]] = []
    for table_id, st in capacity.tables.items():
        for index, res in _resources(st):
            for partition, lane in zip(res.pmap, res.reads, strict=False):
                key = (table_id, index, partition.lo)
                used = lane.consumed - seen.get(key, 0.0)
                seen[key] = lane.consumed
                if used > 0:
                    report.append({"table": table_id, "index": index, "lo": partition.lo, "units": used})
    return report


def charge_reads(capacity: Capacity, report: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """The leader: charge what followers report to its own buckets; the partitions under pressure in return
    (those holding less than a second of their share), with what their buckets hold."""
    tables = {td.table_id: td for td in capacity.catalog.every_table()}
    touched: dict[int, TableState] = {}
    for entry in report:
        td = tables.get(int(entry["table"]))
        if td is None:
            continue  # deleted since
        st = capacity.state(td)
        touched[td.table_id] = st
        res = st.base if not entry["index"] else st.gsis.get(str(entry["index"]))
        if res is None:
            continue
        position = res.pmap.index_of(int(entry["lo"]))
        buckets.charge(res.reads[position], res.read_total, float(entry["units"]), now)
    pressure: list[dict[str, Any]] = []
    for table_id, st in capacity.tables.items():
        for index, res in _resources(st):
            for partition, lane in zip(res.pmap, res.reads, strict=False):
                share = lane.share
                share.refill(now)
                if share.tokens < share.rate:
                    pressure.append({"table": table_id, "index": index, "lo": partition.lo, "tokens": share.tokens})
    return pressure


def apply_pressure(capacity: Capacity, pressure: list[dict[str, Any]], now: float) -> None:
    """A follower: hold its buckets of the partitions under pressure to what the leader's hold."""
    for entry in pressure:
        st = capacity.tables.get(int(entry["table"]))
        if st is None:
            continue
        res = st.base if not entry["index"] else st.gsis.get(str(entry["index"]))
        if res is None:
            continue
        share = res.reads[res.pmap.index_of(int(entry["lo"]))].share
        share.refill(now)
        share.tokens = min(share.tokens, float(entry["tokens"]))
