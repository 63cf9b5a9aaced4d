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

__all__ = ["ChangeRefused", "ReplicatedChange", "change_from_bytes", "change_to_bytes", "from_wire", "to_wire"]


@dataclass(frozen=True, slots=True)
class ReplicatedChange:
    key: Item  # the item's key attributes
    item: Item | None  # the whole item as the origin holds it, None when deleted
    version: Version
    at: float


class ChangeRefused(Exception):
    """The target region refused a change of a batch for ``reason``, and applied nothing of the batch.

    ``index``: the refused change's position in the batch, None when the whole batch is refused (the replica
    table is gone or being deleted there). ``final``: the change can never be applied (its key does not fit the
    replica's key schema), so it is skipped at once; otherwise it is tried again a bounded number of times
    (global_tables/replicator.py ``REFUSED_ATTEMPTS``) before it is skipped.
    """

    def __init__(self, reason: str, index: int | None, final: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.index = index
        self.final = final


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
    return [_change_from_json(entry) for entry in doc["Changes"]]


def _change_from_json(entry: dict[str, Any]) -> ReplicatedChange:
    key, item = entry["Key"], entry["Item"]
    if not isinstance(key, dict) or not (item is None or isinstance(item, dict)):
        raise ValueError("a replicated change's Key and Item are maps of attribute values")
    version = Version(int(entry["Stamp"]), str(entry["Region"]), bool(entry["Deleted"]))
    return ReplicatedChange(key, item, version, float(entry["At"]))


def change_to_bytes(change: ReplicatedChange) -> bytes:
    """One change in the JSON form of a batch's entry (a strong log's record, global_tables/strong_log.py)."""
    return orjson.dumps(_change_to_json(change))


def change_from_bytes(data: bytes) -> ReplicatedChange:
    """The change ``change_to_bytes`` made; raises ValueError (or KeyError/TypeError) on anything else."""
    return _change_from_json(orjson.loads(data))
