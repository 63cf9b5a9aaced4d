"""A multi-region strong consistency (MRSC) run: three regions, each with an etcd member of the table's strong log,
three serving the table or two plus a witness; compare-and-set writes, puts, deletes and strongly consistent reads
in every region at once while the nemesis kills, pauses and cuts regions off; then, once healed and quiet, the
checker (docs/fault-injection.md "Multi-region strong consistency").

    python -m tests.cluster.global_harness --strong --regions 3 --duration 120 --seed 7
    python -m tests.cluster.global_harness --strong --witness --duration 120 --seed 7
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tests.cluster.checker import Verdicts
from tests.cluster.global_checker import Replicas, check_identical
from tests.cluster.global_harness import check_load_got_something_done, save_run
from tests.cluster.global_regions import Region
from tests.cluster.harness import load_under_faults, render_checks, render_faults, render_operations, utc_now
from tests.cluster.history import History, Op, Outcome
from tests.cluster.nemesis import Fault
from tests.cluster.strong_checker import (
    WRITE_KINDS,
    WriteFigures,
    check_cas_registers,
    check_eventual_reads,
    check_final,
    check_strong_reads,
    write_figures,
)
from tests.cluster.strong_nemesis import StrongNemesis
from tests.cluster.strong_regions import StrongRegions
from tests.cluster.strong_workload import StrongLoad, create_strong_table, final_reads, scan, wait_active

QUIESCENCE = 60.0  # seconds the eventually consistent reads may take to show what the strong ones do
SHOWN_ACTIVE = "every region shows the table STRONG, the other replicas (and the witness) ACTIVE"
KINDS = ("read", "cas", "put", "delete", "sread", "eread")  # each must have been acknowledged at least once


@dataclass
class Report:
    regions: list[str]
    witness: str | None
    duration: float
    seed: int
    history: History
    faults: list[Fault] = field(default_factory=list)
    fault_summary: str = ""
    verdicts: Verdicts = field(default_factory=Verdicts)
    lost_writes: int = 0
    lost_deletes: int = 0
    settled: float | None = None  # seconds the eventually consistent reads took to agree (None: never)
    replicas: Replicas = field(default_factory=dict)  # what each region held once quiet (strongly consistent)
    started: str = field(default_factory=utc_now)

    @property
    def passed(self) -> bool:
        return self.verdicts.ok

    @property
    def figures(self) -> WriteFigures:
        return write_figures(self.history.ops)

    def render(self) -> str:
        ops = [op for op in self.history.ops if op.process >= 0]
        settled = "never" if self.settled is None else f"after {self.settled:.1f} s"
        witness = f" + witness {self.witness}" if self.witness else ""
        lines = [
            f"MRSC: {len(self.regions)} regions ({', '.join(self.regions)}){witness}, seed {self.seed}, "
            f"{self.duration:.0f} s of load from {self.started} (fault times: seconds since then)",
            render_operations(ops),
            *render_faults(self.faults, self.fault_summary),
            self.figures.render(),
            f"  failed and in doubt by cause: {_causes(ops)}",
            f"lost: {self.lost_writes + self.lost_deletes} (writes {self.lost_writes}, deletes {self.lost_deletes})",
            f"eventually consistent reads agreed with the strong ones {settled} once the load stopped",
            *render_checks(self.verdicts),
        ]
        return "\n".join(lines)


def _causes(ops: list[Op]) -> str:
    """What refused the writes, or left them in doubt (error codes, connection errors), most frequent first."""
    causes = Counter(op.error for op in ops if op.kind in WRITE_KINDS and op.outcome is not Outcome.OK)
    return ", ".join(f"{cause or 'timeout'} {n}" for cause, n in causes.most_common()) or "none"


def run(witness: bool, duration: float, seed: int, workdir: Path, log: bool = True) -> Report:
    """Build the regions, load them for ``duration`` seconds while the nemesis works, heal, check, take them down."""
    regions = StrongRegions(workdir, witness)
    say: Callable[[str], object] = print if log else (lambda _: None)
    try:
        regions.start()
        create_strong_table(regions.regions, regions.witness_name)
        say(f"regions up: {', '.join(f'{r.name} {r.url}' for r in regions.regions)}; MRSC table ready")
        load = StrongLoad(regions.regions, seed)
        nemesis_from = partial(StrongNemesis, regions, seed, say=say)
        started, nemesis = load_under_faults(load.history, load.run, nemesis_from, duration, say)
        report = Report(regions.names, regions.witness_name, duration, seed, load.history, nemesis.faults,
                        nemesis.summary(), started=started)  # fmt: skip
        check(regions, report)
        save_run(workdir, load.history, report.replicas)
        return report
    finally:
        regions.destroy()


def check(regions: StrongRegions, report: Report) -> None:
    """Once healed: the checker's verdicts. A check that cannot read what it needs fails with what it got; the
    others still run."""
    verdicts, history = report.verdicts, report.history
    check_load_got_something_done(verdicts, history.ops, KINDS, regions.names)
    try:
        regions.wait_ready(60)
        wait_active(regions.regions, regions.names, regions.witness_name, 60)
        verdicts.add(SHOWN_ACTIVE, [], "yes")
    except Exception as e:  # the items are checked anyway
        verdicts.add(SHOWN_ACTIVE, [str(e)], "")
    try:
        final_reads(regions.regions, history)
        report.replicas = {region.name: scan(region, consistent=True) for region in regions.regions}
    except Exception as e:  # a region that will not be read
        verdicts.add("every region's items read (strongly consistent)", [f"{type(e).__name__}: {e}"], "")
        return
    check_identical(verdicts, report.replicas)
    losses = check_final(verdicts, history.ops, report.replicas)
    report.lost_writes, report.lost_deletes = len(losses.writes), len(losses.deletes)
    check_cas_registers(verdicts, history.ops)
    check_strong_reads(verdicts, history.ops)
    check_eventual_reads(verdicts, history.ops)
    _check_eventual(regions.regions, report)
    if not verdicts.ok:
        regions.dump_stacks()  # into the servers' logs, kept with the run's data


def _check_eventual(regions: list[Region], report: Report) -> None:
    """Once quiet, every region's eventually consistent Scan shows what the strongly consistent ones did."""
    start = time.monotonic()
    problems: list[str] = []
    while True:
        try:
            eventual = {region.name: scan(region, consistent=False) for region in regions}
        except Exception as e:  # a region that will not be read
            problems = [f"{type(e).__name__}: {e}"]
            break
        problems = [f"{name}: {len(items)} items, not those of the strong reads" for name, items in eventual.items()
                    if items != report.replicas.get(name)]  # fmt: skip
        if not problems:
            report.settled = time.monotonic() - start
            break
        if time.monotonic() - start > QUIESCENCE:
            break
        time.sleep(1.0)
    report.verdicts.add("eventually consistent reads, once quiet, identical to the strong ones in every region",
                        problems, f"after {report.settled or 0:.1f} s")  # fmt: skip
