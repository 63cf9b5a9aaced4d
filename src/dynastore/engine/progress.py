"""How far long work is: the one registry of the running GSI backfills, TTL sweeps, partition splits, backups,
restores, exports and imports of a dynastore (docs/operations.md "Progress of long work").

Each long job registers a ``Job`` when it starts (``Jobs.start``: one server log line), adds to ``job.done`` as
it goes (an integer addition per chunk of items, nothing else) and ends it (``Jobs.finish``: one line with the
totals and the duration). ``Jobs.report``, called from the server's maintenance loop, writes a line for each job
that has gone ``REPORT_EVERY`` seconds without one: items done of the total, the rate and an estimate of the time
left. ``Jobs.view`` is what ``GET /dynastore/progress`` shows (the console's bars, the commands' bars).

Time is the dynastore's clock (``--manual-clock`` in tests), so the intervals, rates and estimates follow it.
A job whose total is not known (an export of a past time, an import) has ``total`` None: no estimate then.

A quiet job (``quiet=True``) is counted but neither logged nor shown until ``announce``: a TTL sweep round is
one only once it has deleted many items, so sweeping tables where nothing expires writes no line.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from dynastore.util.clock import Clock

__all__ = [
    "BACKFILL",
    "BACKUP",
    "EXPORT",
    "IMPORT",
    "REPORT_EVERY",
    "RESTORE",
    "SPLIT",
    "TTL_SWEEP",
    "Job",
    "Jobs",
]

log = logging.getLogger("dynastore")

REPORT_EVERY = 5.0  # seconds of the clock between two log lines of one job

BACKFILL, TTL_SWEEP, SPLIT = "gsi_backfill", "ttl_sweep", "partition_split"
BACKUP, RESTORE, EXPORT, IMPORT = "backup", "restore", "export", "import"

_TITLES = {
    BACKFILL: "GSI backfill",
    TTL_SWEEP: "TTL sweep",
    SPLIT: "partition split",
    BACKUP: "backup",
    RESTORE: "restore",
    EXPORT: "export",
    IMPORT: "import",
}


class Job:
    """One piece of long work: ``done`` of ``total`` items (``total`` None while unknown) since ``started``.
    ``counts`` holds what else it reports (a TTL sweep's items deleted)."""

    __slots__ = ("kind", "key", "table", "index", "account", "region", "done", "total", "started", "counts",
                 "unit", "quiet", "_reported_at")  # fmt: skip

    unit: str  # what ``done`` and ``total`` count: "items", or "bytes" (an import's source)

    def __init__(
        self,
        kind: str = "",
        key: object = None,
        table: str = "",
        index: str | None = None,
        total: int | None = None,
        started: float = 0.0,
        account: str | None = None,
        region: str | None = None,
    ) -> None:
        self.kind = kind
        self.key = key  # what makes the job unique among those of its kind (an index id, a backup's name)
        self.table = table
        self.index = index
        self.account = account
        self.region = region
        self.done = 0
        self.total = total
        self.started = started
        self.counts: dict[str, int] = {}
        self.unit = "items"
        self.quiet = False
        self._reported_at = started

    @property
    def subject(self) -> str:
        """What the log lines name: ``GSI backfill of orders/by_status``."""
        what = self.table if self.index is None else f"{self.table}/{self.index}"
        return f"{_TITLES.get(self.kind, self.kind)} of {what}"

    def rate(self, now: float) -> float | None:
        """Items (or bytes) per second since the start; None before any time has passed."""
        elapsed = now - self.started
        return self.done / elapsed if elapsed > 0 and self.done > 0 else None

    def seconds_left(self, now: float) -> float | None:
        """The estimate of the time left at the rate so far; None without a total or a rate."""
        rate = self.rate(now)
        if self.total is None or rate is None:
            return None
        return max(0, self.total - self.done) / rate

    def view(self, now: float) -> dict[str, Any]:
        rate = self.rate(now)
        left = self.seconds_left(now)
        return {
            "kind": self.kind,
            "account": self.account,
            "region": self.region,
            "table": self.table,
            "index": self.index,
            "done": self.done,
            "total": self.total,
            "unit": self.unit,
            "percent": _percent(self.done, self.total),
            "started": self.started,
            "rate": None if rate is None else round(rate, 3),
            "seconds_left": None if left is None else round(left, 3),
            "estimated_end": None if left is None else round(now + left, 3),
            **self.counts,
        }


class Jobs:
    """The running long jobs of one dynastore, by (kind, key)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._running: dict[tuple[str, object], Job] = {}

    def start(
        self,
        kind: str,
        key: object,
        table: str,
        *,
        index: str | None = None,
        total: int | None = None,
        account: str | None = None,
        region: str | None = None,
        quiet: bool = False,
    ) -> Job:
        """Register a job (replacing one of the same kind and key) and log its start unless ``quiet``."""
        job = Job(kind, key, table, index, total, self.clock.now(), account, region)
        job.quiet = quiet
        return self.begin(job)

    def begin(self, job: Job) -> Job:
        """Register ``job``, built by its work (a subclass keeping more counts), from now on."""
        job.started = job._reported_at = self.clock.now()
        self._running[(job.kind, job.key)] = job
        if not job.quiet:
            _log_start(job)
        return job

    def get(self, kind: str, key: object) -> Job | None:
        return self._running.get((kind, key))

    def announce(self, job: Job) -> None:
        """A quiet job becomes one that is logged and shown (from its start line on)."""
        if job.quiet:
            job.quiet = False
            job._reported_at = self.clock.now()
            _log_start(job)

    def finish(self, job: Job, failure: str | None = None) -> None:
        """The job is over (``failure``: why it ended early): its end line, and it leaves the registry."""
        if self._running.get((job.kind, job.key)) is job:
            del self._running[(job.kind, job.key)]
        if job.quiet:
            return
        now = self.clock.now()
        elapsed = max(0.0, now - job.started)
        rate = job.rate(now)
        counts = "".join(f", {n} {name}" for name, n in job.counts.items())
        speed = "" if rate is None else f" ({rate:.0f} {job.unit}/s)"
        if failure is None:
            log.info("%s finished: %d %s%s in %.1f s%s", job.subject, job.done, job.unit, counts, elapsed, speed)
        else:
            log.warning("%s failed after %d %s in %.1f s: %s", job.subject, job.done, job.unit, elapsed, failure)

    def drop_except(self, kind: str, keys: Iterable[object]) -> None:
        """End, as abandoned, the jobs of ``kind`` whose key is not in ``keys`` (their work went away: an index
        or a table deleted while it ran)."""
        kept = set(keys)
        for job in [j for (k, key), j in self._running.items() if k == kind and key not in kept]:
            self.finish(job, "abandoned (its table or index is gone)")

    def running(self, kind: str | None = None) -> list[Job]:
        """The jobs running (of ``kind``), quiet ones included."""
        return [job for (k, _), job in self._running.items() if kind is None or k == kind]

    def report(self) -> None:
        """A progress line for each shown job that has gone ``REPORT_EVERY`` seconds without one (the server's
        maintenance loop calls this on every pass)."""
        if not self._running:
            return
        now = self.clock.now()
        for job in list(self._running.values()):
            if not job.quiet and now - job._reported_at >= REPORT_EVERY:
                job._reported_at = now
                _log_progress(job, now)

    def view(self) -> dict[str, Any]:
        """``GET /dynastore/progress``: the clock's time and every shown job, the oldest first."""
        now = self.clock.now()
        jobs = sorted((j for j in self._running.values() if not j.quiet), key=lambda j: j.started)
        return {"now": now, "jobs": [job.view(now) for job in jobs]}


def _percent(done: int, total: int | None) -> float | None:
    if total is None:
        return None
    if total <= 0:
        return 100.0
    return round(min(100.0, 100.0 * done / total), 1)


def _log_start(job: Job) -> None:
    size = "total unknown" if job.total is None else f"{job.total} {job.unit}"
    log.info("%s started: %s", job.subject, size)


def _log_progress(job: Job, now: float) -> None:
    rate = job.rate(now)
    left = job.seconds_left(now)
    done = f"{job.done} {job.unit}"
    if job.total is not None:
        done = f"{job.done} of {job.total} {job.unit} ({_percent(job.done, job.total)}%)"
    speed = "" if rate is None else f", {rate:.0f} {job.unit}/s"
    eta = "" if left is None else f", about {left:.0f} s left"
    log.info("%s: %s%s%s", job.subject, done, speed, eta)
