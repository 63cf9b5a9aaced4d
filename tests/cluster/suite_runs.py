"""What the test suite's short runs of the harnesses (test_faults.py, test_global_convergence.py,
test_strong_convergence.py) do the same way: fail when the machine lacks what a run needs, keep a failed run's data
and logs, and assert what every run must show."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cluster import global_harness, harness, strong_harness

RunReport = harness.Report | global_harness.Report | strong_harness.Report


@contextmanager
def run_workdir(what: str, missing: list[str], prefix: str) -> Iterator[Path]:
    """A directory of its own for a run's data and logs, removed once the test's assertions hold, kept when one
    fails. Without its prerequisites (``missing``) the test fails saying so: a skip would hide that the proof was
    not run."""
    if missing:
        pytest.fail(f"{what} cannot start: missing {', '.join(missing)} (docs/fault-injection.md)")
    # Not pytest's tmp_path: other sessions' runs rotate it away, and a failed run's logs must stay.
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    yield workdir
    shutil.rmtree(workdir, ignore_errors=True)


def assert_passed_with_faults(report: RunReport, workdir: Path) -> None:
    assert report.passed, f"{report.render()}\ndata, logs and history.jsonl kept in {workdir}"
    assert report.faults, "the nemesis injected no fault"
