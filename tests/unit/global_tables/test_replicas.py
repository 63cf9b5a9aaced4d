"""global_tables/replicas.py: the status DescribeTable shows of a strongly consistent table's witness."""

from __future__ import annotations

import dataclasses

from dynastore.global_tables.replicas import witness_status
from dynastore.model.table_schema import ACTIVE, CREATING, DELETING, KeyAttr, KeySchema, ReplicaDef, TableDef


def table(*statuses: str, witness: str | None = "us-west-2") -> TableDef:
    base = TableDef(
        name="t",
        table_id=1,
        uuid="u",
        key_schema=KeySchema(KeyAttr("pk", "S")),
        attribute_definitions=(KeyAttr("pk", "S"),),
        created_at=0.0,
    )
    replicas = tuple(ReplicaDef(f"us-east-{n + 2}", status) for n, status in enumerate(statuses))
    return dataclasses.replace(base, replicas=replicas, strong_log="log", witness_region=witness)


def test_no_witness() -> None:
    assert witness_status(table(ACTIVE, ACTIVE, witness=None)) is None


def test_follows_the_replicas() -> None:
    assert witness_status(table(CREATING)) == CREATING
    assert witness_status(table(ACTIVE)) == ACTIVE
    assert witness_status(table(DELETING)) == DELETING
