"""A short fault-injection run (docs/fault-injection.md): three nodes in network namespaces, each with its etcd
member, load from clients outside them, the nemesis at work, then the checker. It needs root and Debian's etcd;
without them it fails saying what is missing (a skip would hide that the proof was not run)."""

from __future__ import annotations

import os

from tests.cluster.harness import missing_prerequisites, run
from tests.cluster.suite_runs import assert_passed_with_faults, run_workdir

DURATION = float(os.environ.get("DYNASTORE_FAULTS_DURATION", "75"))
SEED = int(os.environ.get("DYNASTORE_FAULTS_SEED", "29"))


def test_a_short_run_with_faults_loses_nothing() -> None:
    with run_workdir("the fault-injection run", missing_prerequisites(), "dynastore-faults-") as workdir:
        report = run(DURATION, SEED, workdir, log=False)
        assert_passed_with_faults(report, workdir)
