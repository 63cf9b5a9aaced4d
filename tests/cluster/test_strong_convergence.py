"""Short multi-region strong consistency runs (docs/fault-injection.md "Multi-region strong consistency"): three
regions, then two and a witness, each with an etcd member of the table's strong log; compare-and-set writes, puts,
deletes and strongly consistent reads in every region while servers are killed and paused and regions cut off,
then the checker. It needs root and etcd; without them, it fails saying so (a skip would hide that the proof was
not run)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.cluster.global_harness import missing_prerequisites
from tests.cluster.strong_harness import run

DURATION = float(os.environ.get("DYNASTORE_STRONG_FAULTS_DURATION", "60"))
SEED = int(os.environ.get("DYNASTORE_STRONG_FAULTS_SEED", "179"))  # each fault kind once, the witness cut off


@pytest.mark.parametrize("witness", [False, True], ids=["three-replicas", "two-replicas-and-a-witness"])
def test_a_short_run_with_faults_stays_linearizable_and_loses_nothing(witness: bool) -> None:
    missing = missing_prerequisites(strong=True)
    if missing:
        pytest.fail(f"the MRSC run cannot start: missing {', '.join(missing)} (docs/fault-injection.md)")
    # Not pytest's tmp_path: other sessions' runs rotate it away, and a failed run's logs must stay.
    workdir = Path(tempfile.mkdtemp(prefix="dynastore-strong-"))
    report = run(witness, DURATION, SEED, workdir, log=False)
    assert report.passed, f"{report.render()}\ndata, logs and history.jsonl kept in {workdir}"
    assert report.faults, "the nemesis injected no fault"
    assert report.figures.acknowledged > 0, "no write was acknowledged"
    shutil.rmtree(workdir, ignore_errors=True)
