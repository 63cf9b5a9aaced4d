"""A fault-injection run: a three-node cluster in network namespaces, load from clients outside them, a nemesis,
then the checker (docs/fault-injection.md).

    python -m tests.cluster.harness --duration 600 --seed 7

What every fault-injection run does the same way (the global tables' and MRSC runs too): ``load_under_faults``, the
load while the nemesis works, and the report's common lines (``render_operations``, ``render_faults``,
``render_checks``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from tests.cluster import checker, gather
from tests.cluster.cluster import Cluster
from tests.cluster.history import History, Op, Outcome
from tests.cluster.nemesis import Nemesis, Schedule
from tests.cluster.workloads import ACCOUNTS, OPENING_BALANCE, PUTS, STREAM, Load, create_tables

WORKERS = {"puts": 2, "registers": 3, "transfers": 2, "balances": 1, "stream": 2}
NEEDED = {"/usr/bin/etcd": "Debian's etcd-server", "/usr/sbin/ip": "iproute2", "/usr/sbin/tc": "iproute2"}
KINDS = ("put", "read", "cas", "transfer", "balances", "stream-put")
QUIET_END = 8.0  # seconds of load after the last fault is healed
N = TypeVar("N", bound=Schedule[Any])


def missing_prerequisites() -> list[str]:
    """What this machine lacks to run the harness (it needs root for namespaces, links and tc)."""
    missing = [] if os.geteuid() == 0 else ["root (network namespaces, links and tc need it)"]
    missing += [f"{path} ({package})" for path, package in NEEDED.items() if not shutil.which(path)]
    return missing


def utc_now() -> str:
    """The time a report says its run's load started at."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


@dataclass
class Report:
    duration: float
    seed: int
    history: History
    faults: list[str] = field(default_factory=list)
    fault_summary: str = ""
    verdicts: checker.Verdicts = field(default_factory=checker.Verdicts)
    started: str = field(default_factory=utc_now)

    @property
    def passed(self) -> bool:
        return self.verdicts.ok

    def counts(self) -> Counter[str]:
        return Counter(op.outcome.value for op in self.history.ops if op.process >= 0)

    def render(self) -> str:
        ops = [op for op in self.history.ops if op.process >= 0]
        counts = self.counts()
        lines = [
            f"seed {self.seed}, {self.duration:.0f} s of load from {self.started} (fault times: seconds since then)",
            render_operations(ops),
            *render_faults(self.faults, self.fault_summary),
            f"acknowledged: {counts[Outcome.OK.value]}  failed: {counts[Outcome.FAILED.value]}  "
            f"in doubt: {counts[Outcome.UNKNOWN.value]}  lost: {self.verdicts.lost}",
            *render_checks(self.verdicts),
        ]
        return "\n".join(lines)


def render_operations(ops: Sequence[Op]) -> str:
    kinds = Counter(op.kind for op in ops)
    return f"operations: {len(ops)} ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})"


def render_faults(faults: Sequence[object], summary: str) -> list[str]:
    return [f"faults injected: {len(faults)} ({summary})", *(f"  {fault}" for fault in faults)]


def render_checks(verdicts: checker.Verdicts) -> list[str]:
    """Each check's finding, then the verdict: PASS when every check passed."""
    return [
        "checks:",
        *(f"  {'ok  ' if f.ok else 'FAIL'} {f.check}: {f.detail}" for f in verdicts.findings),
        f"verdict: {'PASS' if verdicts.ok else 'FAIL'}",
    ]


def run(duration: float, seed: int, workdir: Path, log: bool = True) -> Report:
    """Build the cluster, load it for ``duration`` seconds while the nemesis works, heal, check, take it down."""
    cluster = Cluster(workdir)
    say: Callable[[str], object] = print if log else (lambda _: None)
    try:
        cluster.start()
        say(f"cluster up: {', '.join(cluster.urls)} (leader {getattr(cluster.leader(), 'name', None)})")
        create_tables(cluster.urls[0])
        load = Load(cluster.urls, seed)
        nemesis_from = partial(Nemesis, cluster, seed, say=say)
        started, nemesis = load_under_faults(
            load.history, partial(load.run, workers=WORKERS), nemesis_from, duration, say
        )
        report = Report(duration, seed, load.history, [str(f) for f in nemesis.faults], nemesis.summary(),
                        started=started)  # fmt: skip
        check(cluster, report)
        load.history.save(workdir / "history.jsonl")
        return report
    finally:
        cluster.destroy()


def load_under_faults(history: History, load: Callable[[float], None], nemesis_from: Callable[[float], N],
                      duration: float, say: Callable[[str], object]) -> tuple[str, N]:  # fmt: skip
    """``load(duration)``, recording in ``history``, while the nemesis (``nemesis_from(origin)``) injects faults, the
    last one healed QUIET_END seconds before the load ends. The history's clock (``origin``) starts with the load;
    when that was (for the report) and the nemesis (its faults) are returned."""
    history.origin = time.monotonic()  # the clock of the report starts with the load
    started = utc_now()
    nemesis = nemesis_from(history.origin)
    stop_at = time.monotonic() + max(0.0, duration - QUIET_END)
    injector = threading.Thread(target=nemesis.run, args=(stop_at,), name="nemesis")
    injector.start()
    try:
        load(duration)
    finally:
        nemesis.stop()
        injector.join()
    say(f"load done: {len(history.ops)} operations, {len(nemesis.faults)} faults; checking")
    return started, nemesis


def check(cluster: Cluster, report: Report) -> None:
    """Once every node has applied the whole log: the checker's verdicts on what the nodes hold. A check that
    cannot read what it needs (a node that keeps refusing) fails with what it got; the others still run."""
    verdicts, history = report.verdicts, report.history
    idle = sorted(set(KINDS) - {op.kind for op in history.ops if op.outcome is Outcome.OK})
    verdicts.add("the load got something done", [f"no {kind} acknowledged" for kind in idle], "every kind of operation")
    try:
        head = gather.wait_caught_up(cluster)
        verdicts.add("every node applied the whole log", [], f"log head {head} on every node")
    except AssertionError as e:  # the checks go on: what each node holds says more
        verdicts.add("every node applied the whole log", [str(e)], "")
    urls = {m.name: m.url for m in cluster.members}
    steps: list[tuple[str, Callable[[], None]]] = [
        ("replicas", lambda: checker.check_replicas(verdicts, gather.digests(cluster))),
        ("puts", lambda: _check_puts(urls, history, verdicts)),
        ("registers", lambda: _check_registers(cluster, history, verdicts)),
        ("bank", lambda: _check_bank(cluster, history, verdicts)),
    ]  # fmt: skip
    steps += [(f"stream via {n}", partial(_check_stream, history, verdicts, n, u)) for n, u in urls.items()]
    for name, step in steps:
        try:
            step()
        except Exception as e:  # reading failed: that is a finding too
            verdicts.add(name, [f"could not read what the check needs: {type(e).__name__}: {e}"], "")
    if not verdicts.ok:
        cluster.dump_stacks()  # into the nodes' logs, kept with the run's data


def _check_registers(cluster: Cluster, history: History, verdicts: checker.Verdicts) -> None:
    """With a last read of each register the in-doubt writes are decided before the search; without one (the
    cluster would not answer it) the search tries both outcomes of each."""
    try:
        gather.final_register_reads(cluster.urls[0], history)
        last_read = True
    except Exception as e:  # what the load saw is checked anyway
        verdicts.add("registers: a strongly consistent read after the run", [f"{type(e).__name__}: {e}"], "")
        last_read = False
    ops = [op for op in history.of_kind("read") + history.of_kind("cas") if op.process >= 0 or last_read]
    checker.check_registers(verdicts, ops, prune=last_read)


def _check_puts(urls: dict[str, str], history: History, verdicts: checker.Verdicts) -> None:
    """The puts against each node that lets its replica be read (one that does not is a finding of its own)."""
    present = {}
    for name, url in urls.items():
        try:
            present[name] = set(gather.keys_on(url, PUTS))
        except Exception as e:  # the other replicas are still checked
            verdicts.add(f"puts: reading {name}'s replica", [f"{type(e).__name__}: {e}"], "")
    checker.check_puts(verdicts, history.of_kind("put"), present)


def _check_bank(cluster: Cluster, history: History, verdicts: checker.Verdicts) -> None:
    final, refused = gather.final_balances(cluster.urls[0])
    verdicts.add("bank: a transactional read once the load stopped", [refused] if refused else [], "answered")
    checker.check_bank(verdicts, history.of_kind("balances"), final, ACCOUNTS * OPENING_BALANCE)


def _check_stream(history: History, verdicts: checker.Verdicts, node: str, url: str) -> None:
    final = {k: item["w"]["S"] for k, item in gather.keys_on(url, STREAM).items()}
    checker.check_stream(verdicts, history.of_kind("stream-put"), node, gather.stream_records(url), final)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.cluster.harness", description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=90, help="seconds of load (default: 90)")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 10000, help="the nemesis's and load's seed")
    parser.add_argument("--workdir", type=Path, default=None, help="where data and logs go (default: a new one)")
    args = parser.parse_args(argv)
    missing = missing_prerequisites()
    if missing:
        print(f"cannot run: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="dynastore-faults-"))
    report = run(args.duration, args.seed, workdir)
    print(report.render())
    if report.passed:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"data and logs kept in {workdir}")
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
