"""A replicated change: the state of one item after a change in its origin region, with the item's version.

A change carries the item as it is (or None once deleted), not the operation that made it, so applying it is
idempotent and the newest change of an item stands for every earlier one (the replicator ships an item's newest
state once however many times it changed). ``at``: when the origin committed the change (its clock), for the
replication latency.

Between servers (global_tables/peers.py) a batch travels as JSON:
``{"Changes": [{"Key": {...}, "Item": {...} | null, "Stamp": int, "Region": str, "Deleted": bool, "At": float}]}``
with the attribute values in the API's JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from dynastore.global_tables.versions import Version
from dynastore.model.values import Item

__all__ = ["ReplicatedChange", "from_wire", "to_wire"]


@dataclass(frozen=True, slots=True)
class ReplicatedChange:
    key: Item  # the item's key attributes
    item: Item | None  # the whole item as the origin holds it, None when deleted
    version: Version
    at: float


def _change_to_json(change: ReplicatedChange) -> dict[str, Any]:
    version = change.version
    return {
        "Key": change.key,
        "Item": change.item,
        "Stamp": version.stamp,
        "Region": version.region,
        "Deleted": version.deleted,
        "At": change.at,
    }


def to_wire(changes: list[ReplicatedChange]) -> bytes:
    return orjson.dumps({"Changes": [_change_to_json(c) for c in changes]})


def from_wire(body: bytes) -> list[ReplicatedChange]:
    """The changes of a batch; raises ValueError (or KeyError/TypeError) on a body that is not one."""
    doc = orjson.loads(body)
    out: list[ReplicatedChange] = []
    for entry in doc["Changes"]:
        key, item = entry["Key"], entry["Item"]
        if not isinstance(key, dict) or not (item is None or isinstance(item, dict)):
            raise ValueError("a replicated change's Key and Item are maps of attribute values")
        version = Version(int(entry["Stamp"]), str(entry["Region"]), bool(entry["Deleted"]))
        out.append(ReplicatedChange(key, item, version, float(entry["At"])))
    return out
