"""Short global tables convergence runs (docs/fault-injection.md "Global tables"): two and three regions, each a
server in a network namespace replicating one global table with the others, writes and deletes everywhere while
regions are cut off and servers killed, then the checker. It needs root; without it, it fails saying so (a skip
would hide that the proof was not run)."""

from __future__ import annotations

import os

import pytest

from tests.cluster.global_harness import missing_prerequisites, run
from tests.cluster.suite_runs import assert_passed_with_faults, run_workdir

DURATION = float(os.environ.get("DYNASTORE_GLOBAL_FAULTS_DURATION", "40"))
SEED = int(os.environ.get("DYNASTORE_GLOBAL_FAULTS_SEED", "38"))  # cuts a region off, kills one, drops one way


@pytest.mark.parametrize("regions", [2, 3])
def test_a_short_run_with_faults_converges_and_loses_nothing(regions: int) -> None:
    with run_workdir("the global tables run", missing_prerequisites(), "dynastore-global-") as workdir:
        report = run(regions, DURATION, SEED, workdir, log=False)
        assert_passed_with_faults(report, workdir)
        assert any(lag.seen is not None for lag in report.lags), "no probe's write was seen in another region"
