"""A short multi-region strong consistency run (docs/fault-injection.md "Multi-region strong consistency"): two
regions and a witness, each with an etcd member of the table's strong log (the three-replica form is run by hand,
``python -m tests.cluster.global_harness --strong --regions 3``: the same code with one more server);
compare-and-set writes, puts, deletes and strongly consistent reads in every region while servers are killed and
paused and regions cut off, then the checker. It needs root and etcd; without them, it fails saying so (a skip
would hide that the proof was not run)."""

from __future__ import annotations

import os

from tests.cluster.global_harness import missing_prerequisites
from tests.cluster.strong_harness import run
from tests.cluster.suite_runs import assert_passed_with_faults, run_workdir

DURATION = float(os.environ.get("DYNASTORE_STRONG_FAULTS_DURATION", "35"))
SEED = int(os.environ.get("DYNASTORE_STRONG_FAULTS_SEED", "179"))  # each fault kind once, the witness cut off


def test_a_short_run_with_faults_stays_linearizable_and_loses_nothing() -> None:
    with run_workdir("the MRSC run", missing_prerequisites(strong=True), "dynastore-strong-") as workdir:
        report = run(True, DURATION, SEED, workdir, log=False)
        assert_passed_with_faults(report, workdir)
        assert report.figures.acknowledged > 0, "no write was acknowledged"
