"""docs/operations.md stays complete: every served operation and every DynamoDB operation has a status row, and
every served operation lists every request parameter of DynamoDB's service model (sqlite-utils' test_docs idea)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import botocore.loaders
import pytest

from dynastore.protocol.dispatch import DYNAMODB_OPERATIONS, OPERATIONS, STREAMS_OPERATIONS, not_served

DOC = Path(__file__).resolve().parent.parent / "docs" / "operations.md"
STATUSES = {"supported", "partial", "in progress", "not yet"}
SERVED = {"supported", "partial"}
_ROW = re.compile(r"^\| *([A-Za-z0-9]+) *\| *([a-z ]+?) *\|(.*)\|\s*$")


def _model(service: str = "dynamodb") -> dict[str, Any]:
    model: dict[str, Any] = botocore.loaders.Loader().load_service_model(service, "service-2")
    return model


MODEL = _model()
MODEL_OPERATIONS = sorted(MODEL["operations"])
STREAMS_MODEL = _model("dynamodbstreams")
STREAMS_MODEL_OPERATIONS = sorted(STREAMS_MODEL["operations"])


def _input_members(operation: str, model: dict[str, Any] = MODEL) -> list[str]:
    shape = model["operations"][operation].get("input", {}).get("shape")
    return list(model["shapes"][shape]["members"]) if shape else []


@pytest.fixture(scope="module")
def text() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def statuses(text: str) -> dict[str, str]:
    """Operation -> status, from the rows of the "## Operations" table."""
    return _statuses(text, "## Operations")


@pytest.fixture(scope="module")
def streams_statuses(text: str) -> dict[str, str]:
    """Operation -> status, from the rows of the "## DynamoDB Streams operations" table."""
    return _statuses(text, "## DynamoDB Streams operations")


def _statuses(text: str, heading: str) -> dict[str, str]:
    section = text.split(f"{heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    out: dict[str, str] = {}
    for line in section.splitlines():
        match = _ROW.match(line)
        if match and match.group(1) != "Operation":
            assert match.group(1) not in out, f"{match.group(1)} has two rows"
            out[match.group(1)] = match.group(2)
    return out


def _section(text: str, operation: str) -> str:
    parts = re.split(rf"^### {operation}\s*$", text, flags=re.MULTILINE)
    assert len(parts) == 2, f"no single '### {operation}' section"
    return parts[1].split("\n### ", 1)[0].split("\n## ", 1)[0]


def test_model_is_complete() -> None:
    assert len(MODEL_OPERATIONS) >= 57


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_served_operation_is_documented(statuses: dict[str, str], operation: str) -> None:
    assert operation in statuses, f"{operation} is in dispatch.OPERATIONS but has no row in docs/operations.md"
    assert statuses[operation] != "not yet", f"{operation} is served but documented as 'not yet'"


@pytest.mark.parametrize("operation", MODEL_OPERATIONS)
def test_dynamodb_operation_has_a_status(statuses: dict[str, str], operation: str) -> None:
    assert operation in statuses, f"{operation} (botocore service model) has no row in docs/operations.md"
    assert statuses[operation] in STATUSES


def test_no_unknown_operations(statuses: dict[str, str]) -> None:
    assert set(statuses) <= set(MODEL_OPERATIONS)


def test_not_yet_means_not_served(statuses: dict[str, str]) -> None:
    claimed = {op for op, status in statuses.items() if status in SERVED}
    assert claimed <= set(OPERATIONS), (
        f"documented as served but not in dispatch.OPERATIONS: {claimed - set(OPERATIONS)}"
    )


@pytest.mark.parametrize("operation", MODEL_OPERATIONS)
def test_served_operation_lists_every_parameter(text: str, statuses: dict[str, str], operation: str) -> None:
    if statuses.get(operation) not in SERVED:
        return
    section = _section(text, operation)
    members = _input_members(operation)
    if not members:
        assert "No parameters" in section
        return
    documented = {m.group(1): m.group(2) for m in map(_ROW.match, section.splitlines()) if m}
    for member in members:
        assert member in documented, f"{operation}.{member} is missing from its parameter table"
        assert documented[member] in STATUSES, f"{operation}.{member} has no valid status"


def test_dynamodb_operation_names_are_the_models() -> None:
    """The list the server names unserved operations from (UnknownOperationException's message) is complete."""
    assert sorted(DYNAMODB_OPERATIONS) == MODEL_OPERATIONS


def test_not_yet_operations_are_refused_by_name(statuses: dict[str, str]) -> None:
    assert {op for op, status in statuses.items() if status == "not yet"} <= not_served()


def test_not_served_is_a_frozenset() -> None:
    # Protocol declares a frozenset, and compiled code checks declared types at run time.
    assert type(not_served()) is frozenset


def test_streams_operations_are_the_models(streams_statuses: dict[str, str]) -> None:
    """Every DynamoDB Streams operation is served and documented (botocore's ``dynamodbstreams`` model)."""
    assert len(STREAMS_MODEL_OPERATIONS) >= 4
    assert sorted(STREAMS_OPERATIONS) == STREAMS_MODEL_OPERATIONS
    assert sorted(streams_statuses) == STREAMS_MODEL_OPERATIONS
    assert set(streams_statuses.values()) <= SERVED


@pytest.mark.parametrize("operation", STREAMS_MODEL_OPERATIONS)
def test_streams_operation_lists_every_parameter(text: str, operation: str) -> None:
    documented = {m.group(1): m.group(2) for m in map(_ROW.match, _section(text, operation).splitlines()) if m}
    for member in _input_members(operation, STREAMS_MODEL):
        assert member in documented, f"{operation}.{member} is missing from its parameter table"
        assert documented[member] in STATUSES, f"{operation}.{member} has no valid status"


@pytest.mark.parametrize("operation", STREAMS_MODEL_OPERATIONS)
def test_streams_request_shapes_have_the_models_members(operation: str) -> None:
    shape, _ = STREAMS_OPERATIONS[operation]
    served = {name for name, _ in shape.members}
    assert served <= set(_input_members(operation, STREAMS_MODEL))
