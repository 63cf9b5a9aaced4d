"""A short fault-injection run (docs/fault-injection.md): three nodes in network namespaces, each with its etcd
member, load from clients outside them, the nemesis at work, then the checker. It needs root and Debian's etcd;
without them it fails saying what is missing (a skip would hide that the proof was not run)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.cluster.harness import missing_prerequisites, run

DURATION = float(os.environ.get("DYNASTORE_FAULTS_DURATION", "75"))
SEED = int(os.environ.get("DYNASTORE_FAULTS_SEED", "29"))


def test_a_short_run_with_faults_loses_nothing() -> None:
    missing = missing_prerequisites()
    if missing:
        pytest.fail(f"the fault-injection run cannot start: missing {', '.join(missing)} (docs/fault-injection.md)")
    # Not pytest's tmp_path: other sessions' runs rotate it away, and a failed run's logs must stay.
    workdir = Path(tempfile.mkdtemp(prefix="dynastore-faults-"))
    report = run(DURATION, SEED, workdir, log=False)
    assert report.passed, f"{report.render()}\ndata, logs and history.jsonl kept in {workdir}"
    assert report.faults, "the nemesis injected no fault"
    shutil.rmtree(workdir, ignore_errors=True)
