"""A global tables convergence run: two or three regions, each a dynastore server in a network namespace of its
own replicating one global table with the others; writes, conditional writes, updates and deletes in every region
at once while the nemesis cuts regions off and kills servers; then, once replication is quiet, the checker
(docs/fault-injection.md "Global tables").

    python -m tests.cluster.global_harness --regions 3 --duration 120 --seed 7
    python -m tests.cluster.global_harness --strong --regions 3 --duration 120 --seed 7   # MRSC: strong_harness.py
    python -m tests.cluster.global_harness --strong --witness --duration 120 --seed 7   # two replicas + a witness
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tests.cluster.checker import Verdicts
from tests.cluster.global_checker import (
    DELETES,
    READS,
    WRITES,
    Replicas,
    check_final_states,
    check_identical,
    check_reads,
    percentile,
)
from tests.cluster.global_nemesis import RegionNemesis
from tests.cluster.global_regions import Region, Regions, get_text
from tests.cluster.global_workload import (
    TABLE,
    GlobalLoad,
    Lag,
    create_global_table,
    outcome_counts,
    scan,
    wait_replicas_active,
)
from tests.cluster.harness import load_under_faults, render_checks, render_faults, render_operations, utc_now
from tests.cluster.history import History, Op, Outcome
from tests.cluster.nemesis import Fault

NEEDED = {"/usr/sbin/ip": "iproute2", "/usr/sbin/tc": "iproute2"}
STRONG_NEEDED = {"/usr/bin/etcd": "Debian's etcd-server"}
QUIESCENCE = 120.0  # seconds replication may take to settle once the load stopped
KINDS = ("put", "cond-put", "update", "delete", "probe")  # each must have been acknowledged at least once


def missing_prerequisites(strong: bool = False) -> list[str]:
    """What this machine lacks to run the harness (it needs root for namespaces, links and tc; an MRSC run, etcd)."""
    missing = [] if os.geteuid() == 0 else ["root (network namespaces, links and tc need it)"]
    needed = {**NEEDED, **(STRONG_NEEDED if strong else {})}
    missing += [f"{path} ({package})" for path, package in needed.items() if not shutil.which(path)]
    return missing


@dataclass
class Report:
    regions: list[str]
    duration: float
    seed: int
    history: History
    lags: list[Lag] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    fault_summary: str = ""
    verdicts: Verdicts = field(default_factory=Verdicts)
    lost_writes: int = 0
    lost_deletes: int = 0
    settled: float | None = None  # seconds replication took to be quiet once the load stopped (None: never)
    replicas: Replicas = field(default_factory=dict)  # what each region held once quiet
    metrics: list[str] = field(default_factory=list)  # the servers' replication figures after the run
    started: str = field(default_factory=utc_now)

    @property
    def passed(self) -> bool:
        return self.verdicts.ok

    def render(self) -> str:
        changes, reads = outcome_counts(self.history, WRITES | DELETES), outcome_counts(self.history, READS)
        ok, failed, doubt = Outcome.OK.value, Outcome.FAILED.value, Outcome.UNKNOWN.value
        settled = "never" if self.settled is None else f"after {self.settled:.1f} s"
        lines = [
            f"global tables: {len(self.regions)} regions ({', '.join(self.regions)}), seed {self.seed}, "
            f"{self.duration:.0f} s of load from {self.started} (fault times: seconds since then)",
            render_operations(self.history.ops),
            *render_faults(self.faults, self.fault_summary),
            f"writes and deletes: acknowledged {changes[ok]}  failed {changes[failed]}  in doubt {changes[doubt]}  "
            f"lost {self.lost_writes + self.lost_deletes} (writes {self.lost_writes}, deletes {self.lost_deletes})",
            f"reads: acknowledged {reads[ok]}  failed {reads[failed]}  in doubt {reads[doubt]}",
            *render_lags(self.lags, self.faults),
            f"replication quiet {settled} once the load stopped",
            *(f"  {line}" for line in self.metrics),
            *render_checks(self.verdicts),
        ]
        return "\n".join(lines)


def render_lags(lags: Sequence[Lag], faults: Sequence[Fault]) -> list[str]:
    """Replication lag p50 / p99: over every probe, over those no fault overlapped, over those between two regions
    no fault struck meanwhile (a fault elsewhere should not slow them), and per pair of regions."""
    seen = [lag for lag in lags if lag.seen is not None]
    calm = [lag for lag in seen if not any(_during(lag, fault) for fault in faults)]
    untouched = [
        lag for lag in seen if not any(_during(lag, f) and f.target in (lag.source, lag.target) for f in faults)
    ]
    lines = [
        "replication lag (a probe's write acknowledged -> read back in another region), p50 / p99:",
        f"  all probes: {_quantiles(seen)}; not seen within the probe's patience: {len(lags) - len(seen)}",
        f"  outside faults: {_quantiles(calm)}; between regions no fault struck (faults elsewhere or none): "
        f"{_quantiles(untouched)}",
    ]
    pairs = sorted({(lag.source, lag.target) for lag in seen})
    lines += [f"  {a} -> {b}: {_quantiles([lag for lag in seen if (lag.source, lag.target) == (a, b)])}"
              for a, b in pairs]  # fmt: skip
    return lines


def _during(lag: Lag, fault: Fault) -> bool:
    """Whether ``fault`` was in force at some time between the probe's write and its being seen."""
    return lag.seen is not None and fault.start <= lag.seen and lag.acked <= fault.end


def _quantiles(lags: Sequence[Lag]) -> str:
    values = [lag.seconds for lag in lags if lag.seconds is not None]
    if not values:
        return "no samples"
    samples = f"{len(values)} sample{'' if len(values) == 1 else 's'}"
    return f"{percentile(values, 0.5) * 1000:.0f} / {percentile(values, 0.99) * 1000:.0f} ms ({samples})"


def run(count: int, duration: float, seed: int, workdir: Path, log: bool = True) -> Report:
    """Build the regions, load them for ``duration`` seconds while the nemesis works, heal, check, take them down."""
    regions = Regions(workdir, count)
    say: Callable[[str], object] = print if log else (lambda _: None)
    try:
        regions.start()
        create_global_table(regions.regions)
        say(f"regions up: {', '.join(f'{r.name} {r.url}' for r in regions.regions)}; {TABLE} replicated")
        load = GlobalLoad(regions.regions, seed)
        nemesis_from = partial(RegionNemesis, regions, seed, say=say)
        started, nemesis = load_under_faults(load.history, load.run, nemesis_from, duration, say)
        report = Report(regions.names, duration, seed, load.history, load.lags, nemesis.faults, nemesis.summary(),
                        started=started)  # fmt: skip
        check(regions, report)
        save_run(workdir, load.history, report.replicas)
        save_lags(load.lags, workdir / "lags.jsonl")
        return report
    finally:
        regions.destroy()


def check(regions: Regions, report: Report) -> None:
    """Once replication is quiet: the checker's verdicts on what every region holds. A check that cannot read what
    it needs fails with what it got; the others still run."""
    verdicts, ops = report.verdicts, report.history.ops
    check_load_got_something_done(verdicts, ops, KINDS, regions.names)
    try:
        regions.wait_ready(60)
        wait_replicas_active(regions.regions, regions.names, 60)
        verdicts.add("every region shows the table and the others as ACTIVE replicas", [], "yes")
    except Exception as e:  # the items are checked anyway
        verdicts.add("every region shows the table and the others as ACTIVE replicas", [str(e)], "")
    try:
        report.replicas, report.settled = wait_quiet(regions.regions)
    except Exception as e:  # a region that will not be read
        verdicts.add("every region's items read", [f"{type(e).__name__}: {e}"], "")
        return
    report.metrics = replication_metrics(regions.regions)
    check_identical(verdicts, report.replicas)
    losses = check_final_states(verdicts, ops, report.replicas)
    report.lost_writes, report.lost_deletes = len(losses.writes), len(losses.deletes)
    check_reads(verdicts, ops)
    if not verdicts.ok:
        regions.dump_stacks()  # into the servers' logs, kept with the run's data


def check_load_got_something_done(verdicts: Verdicts, ops: list[Op], kinds: Sequence[str], regions: list[str]) -> None:
    """Each of ``kinds`` acknowledged at least once, and something acknowledged in each of ``regions``."""
    idle = [kind for kind in kinds if not any(op.kind == kind and op.outcome is Outcome.OK for op in ops)]
    quiet = [r for r in regions if not any(op.node == r and op.outcome is Outcome.OK for op in ops)]
    verdicts.add("the load got something done", [f"no {kind} acknowledged" for kind in idle] +
                 [f"nothing acknowledged in {region}" for region in quiet], "every kind, in every region")  # fmt: skip


def wait_quiet(regions: list[Region], timeout: float = QUIESCENCE) -> tuple[Replicas, float | None]:
    """Every region's items once they are the same in every region and stayed so for a second (replication has
    nothing left to ship), with how long that took; past ``timeout``, the last ones read and None."""
    start = time.monotonic()
    previous: dict[str, dict[str, dict[str, Any]]] | None = None
    while True:
        current = {region.name: scan(region) for region in regions}
        same = all(items == current[regions[0].name] for items in current.values())
        if same and current == previous:
            return current, time.monotonic() - start
        if time.monotonic() - start > timeout:
            return current, None
        previous = current
        time.sleep(1.0)


def replication_metrics(regions: list[Region]) -> list[str]:
    """The servers' own replication figures (``/metrics`` families named for replication), as each shows them."""
    lines = []
    for region in regions:
        text = get_text(f"{region.url}/metrics") or ""
        lines += [f"{region.name}: {line}" for line in text.splitlines()
                  if "replication" in line and not line.startswith("#")]  # fmt: skip
    return lines


def save_run(workdir: Path, history: History, replicas: Replicas) -> None:
    """What a run leaves for a look after it: its history (history.jsonl), what each region held (replicas.json)."""
    history.save(workdir / "history.jsonl")
    (workdir / "replicas.json").write_text(json.dumps(replicas, indent=1, sort_keys=True))


def save_lags(lags: Sequence[Lag], path: Path) -> None:
    """Every probe's sample as a JSON line (times in seconds since the load started; seen null: never)."""
    with path.open("w") as out:
        for lag in lags:
            out.write(json.dumps(dataclasses.asdict(lag)) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.cluster.global_harness", description=__doc__.split("\n")[0])
    parser.add_argument("--regions", type=int, default=3, choices=(2, 3), help="how many regions (default: 3)")
    parser.add_argument("--duration", type=float, default=90, help="seconds of load (default: 90)")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 10000, help="the nemesis's and load's seed")
    parser.add_argument("--workdir", type=Path, default=None, help="where data and logs go (default: a new one)")
    parser.add_argument("--strong", action="store_true", help="multi-region strong consistency (3 regions, etcd)")
    parser.add_argument("--witness", action="store_true", help="with --strong: two replicas and a witness region")
    args = parser.parse_args(argv)
    if args.witness and not args.strong:
        parser.error("--witness needs --strong")
    if args.strong and not args.witness and args.regions != 3:
        parser.error("--strong needs 3 regions (or 2 and --witness)")
    missing = missing_prerequisites(strong=args.strong)
    if missing:
        print(f"cannot run: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="dynastore-strong-" if args.strong else "dynastore-global-"))
    from tests.cluster import strong_harness  # here, not above: it is built on this module

    report: Report | strong_harness.Report
    if args.strong:
        report = strong_harness.run(args.witness, args.duration, args.seed, workdir)
    else:
        report = run(args.regions, args.duration, args.seed, workdir)
    print(report.render())
    if report.passed:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"data, logs and history.jsonl kept in {workdir}")
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
