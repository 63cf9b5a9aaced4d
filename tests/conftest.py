"""Shared pytest options: --url runs the end-to-end suite against any DynamoDB endpoint."""

from __future__ import annotations

import pytest

# Installed as an entry point too; listed here so that a checkout whose install predates the plugin still has it.
pytest_plugins = ["dynastore.pytest_plugin"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--url", default=None, help="run end-to-end tests against this endpoint instead of a new server")
