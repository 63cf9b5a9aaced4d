"""Shared pytest options: --url runs the end-to-end suite against any DynamoDB endpoint."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

# Installed as an entry point too; listed here so that a checkout whose install predates the plugin still has it.
pytest_plugins = ["dynastore.pytest_plugin"]

# The aiobotocore tests need an older botocore than the suite's pins: they run in an environment of their own
# (tests/aio/README.md; CI does it), and are not collected where aioboto3 is not installed.
collect_ignore = [] if importlib.util.find_spec("aioboto3") else ["aio"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--url", default=None, help="run end-to-end tests against this endpoint instead of a new server")
    parser.addoption(
        "--dynastore-cluster",
        action="store_true",
        default=False,
        help="run the end-to-end suite's dynastore as a three-node cluster (needs etcd; docs/cluster.md): each test "
        "module's clients use the next node",
    )


# The README's test command runs the suite in two worker processes (pytest-xdist's `-n 2`): a test mostly waits on a
# server process, so one process alone leaves a core idle. A worker takes whole files, so a module's fixtures (its
# servers, its browser) start once. The fault-injection runs share one unit of work: each builds network
# namespaces and a cluster of its own and loads it for a minute, and two at once on the same cores would measure
# each other rather than the system.
FAULT_RUN_MODULES = frozenset(
    {
        "tests/cluster/test_faults.py",
        "tests/cluster/test_global_convergence.py",
        "tests/cluster/test_strong_convergence.py",
    }
)


@pytest.hookimpl(optionalhook=True)  # (a hook of pytest-xdist's: an environment without it, tests/aio's, ignores it)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadFileScheduling

    class WholeFiles(LoadFileScheduling):  # type: ignore[misc]  # (pytest-xdist has no type hints)
        """pytest-xdist's file-by-file scheduling, the fault-injection runs one unit of work."""

        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return "fault runs" if path in FAULT_RUN_MODULES else path

    return WholeFiles(config, log)
