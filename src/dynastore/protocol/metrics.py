"""Metrics for operators: what ``GET /metrics`` answers, in the Prometheus text format (docs/metrics.md).

Two kinds of source. The request side is counted as requests are answered (``RequestMetrics.observe``, called
by ``Protocol.handle``: a dictionary look-up, a bisection and a few additions per request) and the storage
syncs as group commit finishes them (``SyncMetrics``). Everything else is read only when the page is asked for:
consumed capacity and throttling per table and index from the capacity model's table buckets, item counts from
the catalog's statistics, the GSI propagation lag from the change log's samples, the open connections from the
listeners' registries and the store's size from its files. ``Metrics`` gathers them; app.py builds it. A cluster
node also sets ``Metrics.cluster_status`` (its GET /dynastore/cluster answer), read at each scrape too.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final, Protocol

from dynastore.engine.capacity.state import Capacity
from dynastore.engine.gsi_propagation import GsiPropagation
from dynastore.engine.pitr_archive import PointInTimeArchive
from dynastore.protocol.connections import Registry
from dynastore.protocol.prometheus import Histogram, Page
from dynastore.protocol.targets import DYNAMODB_TARGET_PREFIXES, STREAMS_TARGET_PREFIX
from dynastore.storage.catalog import Catalog

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
perf_counter: Final = time.perf_counter

__all__ = [
    "LATENCY_BOUNDS",
    "METRICS_PATH",
    "OTHER",
    "Metrics",
    "RequestMetrics",
    "SyncMetrics",
    "directory_bytes",
    "outcome_of",
    "write_replication",
    "cluster_page",
    "write_cluster",
]

METRICS_PATH: Final = "/metrics"
OTHER = "other"  # the operation label of requests that name no operation this server serves
THROTTLED = frozenset({"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"})

# Seconds: from a quarter of a millisecond (a cached GetItem) to ten seconds (a large Scan on a busy server).
LATENCY_BOUNDS = (0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Write transactions one storage sync made durable: powers of two up to what a loaded server shares.
GROUP_BOUNDS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
LAG_QUANTILES = (0.5, 0.9, 0.99)


REPLICATION_QUANTILES = (("0.5", "latency_p50_ms"), ("0.99", "latency_p99_ms"))


def write_replication(page: Page, rows: list[dict[str, Any]]) -> None:
    """Global tables' replication, per table and (source region, target region) pair: DynamoDB's
    ReplicationLatency (its p50 and p99 over the last changes acknowledged; NaN before any) and
    PendingReplicationCount (changes of the source not yet acknowledged by the target), the changes shipped, and
    the changes the target refused and replication skipped."""
    labels = ("table", "source_region", "target_region")
    keyed = [((str(r["table"]).rsplit("/", 1)[-1], str(r["source"]), str(r["target"])), r) for r in rows]
    page.family(
        "dynastore_replication_latency_seconds",
        "gauge",
        "Seconds from a change of a global table to its replica's acknowledgement, by region pair (p50, p99).",
    )
    for key, row in keyed:
        for quantile, member in REPLICATION_QUANTILES:
            millis = row.get(member)
            value = float("nan") if millis is None else float(millis) / 1000
            page.sample("dynastore_replication_latency_seconds", value, (*labels, "quantile"), (*key, quantile))
    page.family(
        "dynastore_pending_replication_count", "gauge", "Changes of a global table not yet acknowledged by a replica."
    )
    for key, row in keyed:
        page.sample("dynastore_pending_replication_count", int(row.get("pending") or 0), labels, key)
    page.family("dynastore_replicated_changes_total", "counter", "Changes of a global table shipped to a replica.")
    for key, row in keyed:
        page.sample("dynastore_replicated_changes_total", int(row.get("shipped") or 0), labels, key)
    page.family(
        "dynastore_replication_skipped_changes_total",
        "counter",
        "Changes of a global table a replica refused and replication gave up on (each logged with its key).",
    )
    for key, row in keyed:
        page.sample("dynastore_replication_skipped_changes_total", int(row.get("skipped") or 0), labels, key)


def outcome_of(error_type: str | None, status: int) -> str:
    """A request's outcome label: ok, throttled, server_error, the client error's type, or client_error for a
    refusal that is no DynamoDB error (one of the server's own endpoints answering 4xx)."""
    if error_type is None and status < 400:
        return "ok"
    if status >= 500:
        return "server_error"
    if error_type in THROTTLED:
        return "throttled"
    return error_type if error_type is not None else "client_error"


class _Durability(Protocol):
    """What the request side asks to time a write until it is durable (storage/group_commit.GroupCommitter)."""

    @property
    def durable_seq(self) -> int: ...

    def when_durable(self, seq: int, callback: Callable[[BaseException | None], None]) -> None: ...


class _OperationStats:
    __slots__ = ("outcomes", "latency")

    def __init__(self) -> None:
        self.outcomes: dict[str, int] = {}
        self.latency = Histogram(LATENCY_BOUNDS)


class RequestMetrics:
    """Requests by operation and outcome, and their latency by operation (until durable, for a write)."""

    def __init__(self, operations: Iterable[str], streams_operations: Iterable[str] = ()) -> None:
        self._names = {prefix + name: name for name in operations for prefix in DYNAMODB_TARGET_PREFIXES}
        self._names.update((STREAMS_TARGET_PREFIX + name, name) for name in streams_operations)
        self._stats: dict[str, _OperationStats] = {}
        self._by_target: dict[str, _OperationStats] = {}  # a known target's stats: one look-up a request
        self.durability: _Durability | None = None  # set once the server runs
        # Writes answered but not yet durable, in commit order: (seq, latency, started). One group commit waiter
        # at a time serves them all (``_waiting_for``: its seq, 0 if none), not one waiter a write.
        self._unsynced: deque[tuple[int, Histogram, float]] = deque()
        self._waiting_for = 0
        self._newest = 0  # the highest seq of a write timed so far

    def observe(self, target: str | None, error_type: str | None, status: int, commit_seq: int, started: float) -> None:
        """Count one answered request (``started``: its ``time.perf_counter()`` on arrival)."""
        stats = self._by_target.get(target) if target else None
        if stats is None:
            stats = self._stats_of(target)
        outcome = "ok" if error_type is None and status < 400 else outcome_of(error_type, status)
        stats.outcomes[outcome] = stats.outcomes.get(outcome, 0) + 1
        durability = self.durability
        if commit_seq and durability is not None and commit_seq > durability.durable_seq:
            self._unsynced.append((commit_seq, stats.latency, started))
            if commit_seq > self._newest:
                self._newest = commit_seq
            if not self._waiting_for:
                self._waiting_for = commit_seq
                durability.when_durable(commit_seq, self._synced)
        else:
            stats.latency.observe(perf_counter() - started)

    def _stats_of(self, target: str | None) -> _OperationStats:
        name = self._names.get(target, OTHER) if target else OTHER
        stats = self._stats.get(name)
        if stats is None:
            stats = self._stats[name] = _OperationStats()
        if target and target in self._names:  # (only known targets: a client's made-up ones are not kept)
            self._by_target[target] = stats
        return stats

    def _synced(self, failure: BaseException | None) -> None:
        """The write waited for is settled (durable, or lost with ``failure``): so is every write before it, and
        every write the sync made durable besides. Time them; wait for the newest of any still unsynced. (The
        newest, not the deque's last: should writes ever be timed out of commit order, a waiter for a seq already
        settled would be answered at once, settle nothing and be registered again, without end.)"""
        now = perf_counter()
        durability, unsynced = self.durability, self._unsynced
        assert durability is not None
        settled = max(self._waiting_for, durability.durable_seq)
        while unsynced and unsynced[0][0] <= settled:
            _, latency, started = unsynced.popleft()
            latency.observe(now - started)
        self._waiting_for = self._newest if unsynced else 0
        if unsynced:
            durability.when_durable(self._waiting_for, self._synced)

    def write(self, page: Page) -> None:
        names = sorted(self._stats)
        page.family(
            "dynastore_requests_total",
            "counter",
            "Requests answered, by operation and outcome (ok, throttled, server_error or the client error's type).",
        )
        for name in names:
            for outcome, n in sorted(self._stats[name].outcomes.items()):
                page.sample("dynastore_requests_total", n, ("operation", "outcome"), (name, outcome))
        page.family(
            "dynastore_request_duration_seconds",
            "histogram",
            "Seconds from a request's arrival until its answer may leave (for a write: once it is durable).",
        )
        for name in names:
            page.histogram("dynastore_request_duration_seconds", self._stats[name].latency, ("operation",), (name,))


class SyncMetrics:
    """The storage syncs group commit ran: how long each took and how many write transactions it made durable."""

    def __init__(self) -> None:
        self.latency = Histogram(LATENCY_BOUNDS)
        self.group = Histogram(GROUP_BOUNDS)

    def synced(self, seconds: float, commits: int) -> None:
        self.latency.observe(seconds)
        self.group.observe(commits)

    def write(self, page: Page) -> None:
        page.family("dynastore_wal_sync_duration_seconds", "histogram", "Seconds each write-ahead-log sync took.")
        page.histogram("dynastore_wal_sync_duration_seconds", self.latency)
        page.family(
            "dynastore_wal_sync_group_size",
            "histogram",
            "Write transactions each write-ahead-log sync made durable (the group of a group commit).",
        )
        page.histogram("dynastore_wal_sync_group_size", self.group)


def directory_bytes(path: Path) -> int:
    """Bytes of the regular files under ``path`` (the store's files, write-ahead log and reserve included)."""
    total = 0
    try:
        entries = list(os.scandir(path))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                total += directory_bytes(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue  # removed while counted (a retired log segment)
    return total


def write_cluster(page: Page, status: dict[str, Any]) -> None:
    """The replication metrics of a cluster node, from its GET /dynastore/cluster answer (docs/metrics.md
    "Cluster"): what the node knows of every node's applied index, measured against the log's head."""
    head = int(status["logHead"])
    applied = {str(n["node"]): int(n.get("appliedIndex") or 0) for n in status.get("nodes", ())}
    applied[str(status["node"])] = int(status["appliedIndex"])  # its own: newer than the one it last published
    page.family("dynastore_cluster_leader", "gauge", "1 while this node holds the write lease, else 0.")
    page.sample("dynastore_cluster_leader", 1 if status.get("role") == "leader" else 0)
    page.family("dynastore_cluster_leader_known", "gauge", "1 while this node knows a leader, 0 during an election.")
    page.sample("dynastore_cluster_leader_known", 0 if status.get("leader") is None else 1)
    page.family("dynastore_cluster_leader_changes_total", "counter", "Leader changes this node has seen.")
    page.sample("dynastore_cluster_leader_changes_total", int(status.get("leaderChanges", 0)))
    page.family("dynastore_cluster_log_head_index", "gauge", "The index of the newest entry of the replicated log.")
    page.sample("dynastore_cluster_log_head_index", head)
    page.family(
        "dynastore_cluster_log_entries",
        "gauge",
        "Log entries etcd still keeps: from the slowest node's applied index (compaction stays behind it) to the head.",
    )
    page.sample("dynastore_cluster_log_entries", max(0, head - min(applied.values())))
    page.family("dynastore_cluster_applied_index", "gauge", "The last log entry each node has applied, by node.")
    for node in sorted(applied):
        page.sample("dynastore_cluster_applied_index", applied[node], ("node",), (node,))
    page.family(
        "dynastore_cluster_replication_lag_entries",
        "gauge",
        "Log entries each node has still to apply (the log head minus its applied index), by node.",
    )
    for node in sorted(applied):
        page.sample("dynastore_cluster_replication_lag_entries", max(0, head - applied[node]), ("node",), (node,))


def cluster_page(status: dict[str, Any]) -> bytes:
    """The body of ``GET /metrics`` of a cluster node that runs no dynastore of its own now (a follower, or a node
    during an election): the cluster families only."""
    page = Page()
    write_cluster(page, status)
    return page.bytes()


class Metrics:
    """Every metric of one dynastore; ``page()`` is the body of ``GET /metrics``."""

    # A cluster node's status (GET /dynastore/cluster's answer), set by the node; None: not clustered.
    cluster_status: Callable[[], dict[str, Any]] | None = None
    # The replicator of global tables' view (global_tables/replicator.py): one row per table and region pair.
    global_tables: Callable[[], list[dict[str, Any]]] | None = None
    # Fetches of OpenID Connect providers' keys by the server, by result ("ok", "failed"); None: no STS endpoint.
    oidc_key_fetches: Callable[[], dict[str, int]] | None = None

    def __init__(
        self,
        requests: RequestMetrics,
        capacity: Capacity,
        catalog: Catalog,
        propagation: GsiPropagation,
        storage_bytes: Callable[[], int] | None,
        archive: PointInTimeArchive | None = None,
    ) -> None:
        self.requests = requests
        self.syncs = SyncMetrics()
        self._capacity = capacity
        self._catalog = catalog
        self._propagation = propagation
        self._archive = archive  # point-in-time recovery's (None: not kept by this dynastore)
        self._storage_bytes = storage_bytes  # None: nothing on disk (--in-memory)
        self._registries: list[Registry] = []

    def watch_connections(self, registry: Registry) -> None:
        """Count the open connections of a listener's registry."""
        self._registries.append(registry)

    def page(self) -> bytes:
        page = Page()
        self.requests.write(page)
        self._write_capacity(page)
        self._write_tables(page)
        self._write_lag(page)
        self._write_recovery(page)
        if self.global_tables is not None:
            write_replication(page, self.global_tables())
        self.syncs.write(page)
        if self._storage_bytes is not None:
            page.family("dynastore_storage_bytes", "gauge", "Bytes of the files in the data directory.")
            page.sample("dynastore_storage_bytes", self._storage_bytes())
        page.family("dynastore_open_connections", "gauge", "Client connections open now.")
        page.sample("dynastore_open_connections", sum(len(r.open) for r in self._registries))
        if self.oidc_key_fetches is not None:
            page.family("dynastore_oidc_key_fetches_total", "counter",
                        "Fetches of --jwks-url providers' keys by the server, by result (ok, failed).")  # fmt: skip
            for result, count in sorted(self.oidc_key_fetches().items()):
                page.sample("dynastore_oidc_key_fetches_total", count, ("result",), (result,))
        if self.cluster_status is not None:
            write_cluster(page, self.cluster_status())
        return page.bytes()

    def _write_capacity(self, page: Page) -> None:
        rows: list[tuple[str, str, float, float, int, int]] = []
        live = {name: self._catalog.find(name) for name in self._catalog.list_names()}
        for st in self._capacity.tables.values():
            td = live.get(st.td.name)
            if td is None or td.table_id != st.td.table_id:
                continue  # a table deleted since (or an earlier table of the same name)
            for res in st.resources():
                reads, writes = res.read_total, res.write_total
                index = res.index_name or ""
                rows.append((st.td.name, index, reads.consumed, writes.consumed, reads.throttled, writes.throttled))
        rows.sort()
        labels = ("table", "index")
        help_text = 'capacity units consumed, by table and GSI (the table itself has index="").'
        page.family("dynastore_consumed_read_capacity_units_total", "counter", "Read " + help_text)
        for row in rows:
            page.sample("dynastore_consumed_read_capacity_units_total", row[2], labels, row[:2])
        page.family("dynastore_consumed_write_capacity_units_total", "counter", "Write " + help_text)
        for row in rows:
            page.sample("dynastore_consumed_write_capacity_units_total", row[3], labels, row[:2])
        page.family(
            "dynastore_throttled_requests_total",
            "counter",
            "Requests (or batch items, or transaction actions) refused for capacity, by table, GSI and kind "
            "(read or write); with --capacity report, those that would have been.",
        )
        for row in rows:
            page.sample("dynastore_throttled_requests_total", row[4], (*labels, "kind"), (*row[:2], "read"))
            page.sample("dynastore_throttled_requests_total", row[5], (*labels, "kind"), (*row[:2], "write"))

    def _write_tables(self, page: Page) -> None:
        names = self._catalog.list_names()
        page.family("dynastore_table_items", "gauge", "Items in each table (the live count DescribeTable reports).")
        for name in names:
            page.sample("dynastore_table_items", self._catalog.stats(name)[0], ("table",), (name,))
        page.family("dynastore_table_size_bytes", "gauge", "Bytes of the items of each table, as DynamoDB sizes them.")
        for name in names:
            page.sample("dynastore_table_size_bytes", self._catalog.stats(name)[1], ("table",), (name,))

    def _write_recovery(self, page: Page) -> None:
        """The storage each table's point-in-time recovery period takes (engine/pitr_archive.py)."""
        archive = self._archive
        page.family(
            "dynastore_point_in_time_bytes",
            "gauge",
            'Bytes kept for point-in-time recovery, by table and kind ("bases": table images, "log": change records).',
        )
        if archive is None:
            return
        for name in self._catalog.list_names():
            table = self._catalog.find(name)
            if table is None or table.pitr is None:
                continue
            bases, log_bytes = archive.storage_bytes(table.table_id)
            page.sample("dynastore_point_in_time_bytes", bases, ("table", "kind"), (name, "bases"))
            page.sample("dynastore_point_in_time_bytes", log_bytes, ("table", "kind"), (name, "log"))

    def _write_lag(self, page: Page) -> None:
        propagation = self._propagation
        lags = propagation.lag_samples()
        page.family(
            "dynastore_gsi_propagation_lag_seconds",
            "summary",
            "Seconds from a write to its GSI changes being applied; quantiles over the last records applied.",
        )
        for q in LAG_QUANTILES:
            value = lags[min(len(lags) - 1, int(q * len(lags)))] if lags else float("nan")
            page.sample("dynastore_gsi_propagation_lag_seconds", value, ("quantile",), (str(q),))
        page.sample("dynastore_gsi_propagation_lag_seconds_sum", propagation.lag_seconds)
        page.sample("dynastore_gsi_propagation_lag_seconds_count", propagation.applied)
        page.family("dynastore_gsi_propagation_backlog", "gauge", "Writes whose GSI changes are not applied yet.")
        page.sample("dynastore_gsi_propagation_backlog", propagation.waiting)
