"""Shared pytest options: --url runs the end-to-end suite against any DynamoDB endpoint."""

from __future__ import annotations

import importlib.util

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
