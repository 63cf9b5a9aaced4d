"""A short fault-injection run (docs/fault-injection.md): three nodes in network namespaces, each with its etcd
member, load from clients outside them, the nemesis at work, then the checker. It needs root and Debian's etcd;
without them it fails saying what is missing (a skip would hide that the proof was not run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cluster.harness import missing_prerequisites, run

DURATION = float(os.environ.get("DYNASTORE_FAULTS_DURATION", "75"))
SEED = int(os.environ.get("DYNASTORE_FAULTS_SEED", "29"))


def test_a_short_run_with_faults_loses_nothing(tmp_path: Path) -> None:
    missing = missing_prerequisites()
    if missing:
        pytest.fail(f"the fault-injection run cannot start: missing {', '.join(missing)} (docs/fault-injection.md)")
    report = run(DURATION, SEED, tmp_path, log=False)
    print(report.render())
    assert report.passed, f"{report.render()}\ndata and logs: {tmp_path}"
    assert report.faults, "the nemesis injected no fault"
