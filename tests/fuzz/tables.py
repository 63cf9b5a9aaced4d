"""The tables a fuzz run writes to: every key type, a sort key, a GSI, an LSI, a multi-attribute GSI key, a stream."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class KeyPart:
    name: str
    type: str  # "S" | "N" | "B"
    is_range: bool


@dataclass(frozen=True, slots=True)
class Index:
    name: str
    parts: tuple[KeyPart, ...]


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    hash_key: KeyPart
    range_key: KeyPart | None
    indexes: tuple[Index, ...] = ()
    stream: bool = False  # has a stream (NEW_AND_OLD_IMAGES): the run reads it (tests/fuzz/streams.py)

    @property
    def key_parts(self) -> tuple[KeyPart, ...]:
        return (self.hash_key,) if self.range_key is None else (self.hash_key, self.range_key)


def _p(name: str, kind: str, is_range: bool = False) -> KeyPart:
    return KeyPart(name, kind, is_range)


def fuzz_tables(prefix: str) -> tuple[Table, ...]:
    return (
        Table(f"{prefix}_s", _p("pk", "S"), None),
        Table(f"{prefix}_sn", _p("pk", "S"), _p("sk", "N", True), stream=True),
        Table(f"{prefix}_b", _p("pk", "B"), None),
        Table(
            f"{prefix}_idx",
            _p("pk", "S"),
            _p("sk", "S", True),
            (
                Index("gsi_g", (_p("g", "S"), _p("h", "N", True))),
                Index("lsi_l", (_p("pk", "S"), _p("l", "S", True))),
                Index("gsi_multi", (_p("m1", "S"), _p("m2", "N"), _p("r1", "S", True), _p("r2", "B", True))),
            ),
        ),
    )


def create_table_request(table: Table) -> dict[str, Any]:
    definitions: dict[str, str] = {part.name: part.type for part in table.key_parts}
    request: dict[str, Any] = {
        "TableName": table.name,
        "KeySchema": [{"AttributeName": p.name, "KeyType": "RANGE" if p.is_range else "HASH"} for p in table.key_parts],
        "BillingMode": "PAY_PER_REQUEST",
    }
    gsis: list[dict[str, Any]] = []
    lsis: list[dict[str, Any]] = []
    for index in table.indexes:
        for part in index.parts:
            definitions[part.name] = part.type
        spec = {
            "IndexName": index.name,
            "KeySchema": [{"AttributeName": p.name, "KeyType": "RANGE" if p.is_range else "HASH"} for p in index.parts],
            "Projection": {"ProjectionType": "ALL"},
        }
        (lsis if index.name.startswith("lsi") else gsis).append(spec)
    if table.stream:
        request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    if gsis:
        request["GlobalSecondaryIndexes"] = gsis
    if lsis:
        request["LocalSecondaryIndexes"] = lsis
    request["AttributeDefinitions"] = [{"AttributeName": n, "AttributeType": t} for n, t in definitions.items()]
    return request
