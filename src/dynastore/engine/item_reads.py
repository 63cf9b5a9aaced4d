"""Reading items by key: GetItem's lookup and BatchGetItem's, each admitted at its exact cost.

Capacity (docs/capacity.md): a read has no effect, so each key is admitted after its item was looked up, at the
item's exact cost. GetItem raises the throttling error; BatchGetItem leaves a refused key unprocessed, as it
does the keys after the 16 MB response limit, and fails with the first refusal when it could read no key at
all (DynamoDB: "If none of the items can be processed due to insufficient provisioned throughput ...").

Results hand the api layer an item's stored wire JSON (spliced into a response, never decoded) or the decoded
item, so nothing above the engine knows how items are stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final

import orjson

from dynastore.engine.capacity import admission
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.engine.pages import Json
from dynastore.errors import DynamoError
from dynastore.expressions import ResolvedProjection, project
from dynastore.limits import MAX_BATCH_GET_RESPONSE_BYTES
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item
from dynastore.storage.itemcodec import decode_item, item_json, stored_size
from dynastore.storage.kv import ReadTxn

__all__ = [
    "Admit",
    "BatchGetRequest",
    "BatchGetResult",
    "GetItemRequest",
    "GetItemResult",
    "batch_get",
    "get_item",
    "read_batch",
]


# ---------------------------------------------------------------- GetItem


# Plain classes rather than dataclasses: every GetItem makes one of each, and a compiled build makes a dataclass
# through its interpreted __init__ (docs/design.md "Compiled modules").
class GetItemRequest:
    """The item of ``table`` whose key attributes ``key`` holds (already checked against the key schema)."""

    __slots__ = ("table", "key", "consistent")

    def __init__(self, table: TableDef, key: Item, *, consistent: bool = False) -> None:
        self.table: Final = table
        self.key: Final = key
        self.consistent: Final = consistent


class GetItemResult:
    """What a GetItem found, and the half read units it consumed. ``item_json`` is the found item's wire JSON as
    stored, ready to splice into a response (None when there is no item); ``item()`` decodes it."""

    __slots__ = ("item_json", "half_units", "_raw")

    def __init__(self, raw: bytes | None, half_units: int) -> None:
        self._raw = raw
        self.item_json: Final = None if raw is None else item_json(raw)
        self.half_units: Final = half_units

    def item(self) -> Item:
        """The found item, decoded."""
        assert self._raw is not None
        return decode_item(self._raw)


def get_item(ctx: Context, req: GetItemRequest) -> GetItemResult:
    """Look the item up and admit the read at its exact cost (raising the throttling error when refused)."""
    table = req.table
    key = storage_key(table, req.key)
    with ctx.kv.read() as txn:
        raw = txn.get(key)
    half_units = admission.read_cost(raw, consistent=req.consistent)
    admission.admit_read(ctx, table, key, half_units)
    return GetItemResult(raw, half_units)


# ---------------------------------------------------------------- BatchGetItem


@dataclass(frozen=True, slots=True)
class BatchGetRequest:
    """One table's part of a BatchGetItem: stored keys (``engine.keys.storage_key``) in request order."""

    table: TableDef
    keys: tuple[bytes, ...]
    projection: ResolvedProjection | None = None
    consistent: bool = False


@dataclass(slots=True)
class BatchGetResult:
    items: list[Json] = field(default_factory=list)
    unprocessed: list[int] = field(default_factory=list)  # indexes into BatchGetRequest.keys
    half_units: int = 0


Admit = Callable[[TableDef, bytes], bool]


def batch_get(
    ctx: Context, requests: list[BatchGetRequest], *, response_bytes: int = MAX_BATCH_GET_RESPONSE_BYTES
) -> list[BatchGetResult]:
    """Read every key under the capacity model, one result per request. Keys refused by admission or past the
    response limit are left unprocessed, and what an admitted key took is given back when it is; raises the
    first refusal when not one key could be read."""
    with ctx.kv.read() as txn:
        admit = _Admission(ctx, txn, requests)
        results = read_batch(admit, requests, admit=admit, response_bytes=response_bytes)
    if admit.refusal is not None and not admit.tickets:
        raise admit.refusal
    admit.refund_unprocessed(requests, results)
    return results


def read_batch(
    txn: ReadTxn,
    requests: list[BatchGetRequest],
    *,
    admit: Admit | None = None,
    response_bytes: int = MAX_BATCH_GET_RESPONSE_BYTES,
) -> list[BatchGetResult]:
    """Read every key; keys refused by ``admit`` or past the response limit are left unprocessed.

    The response limit counts the sizes of the items found; the item that would take the total over it, and
    every key after it, is left unprocessed. Each key read costs ``read_half_units`` of its item (of 0 bytes,
    the minimum, when there is no item): BatchGetItem rounds every item on its own.
    """
    results = [BatchGetResult() for _ in requests]
    total = 0
    stopped = False
    for request, result in zip(requests, results, strict=True):
        projection, consistent, table = request.projection, request.consistent, request.table
        for index, key in enumerate(request.keys):
            if stopped or (admit is not None and not admit(table, key)):
                result.unprocessed.append(index)
                continue
            raw = txn.get(key)
            if raw is None:
                result.half_units += read_half_units(0, consistent=consistent)
                continue
            size = stored_size(raw)
            if total + size > response_bytes:
                stopped = True
                result.unprocessed.append(index)
                continue
            total += size
            result.half_units += read_half_units(size, consistent=consistent)
            view = item_json(raw)
            result.items.append(view if projection is None else orjson.dumps(project(orjson.loads(view), projection)))
    return results


class _Admission:
    """The capacity model's ``admit`` hook for ``read_batch``, and the read transaction it reads through.

    The hook looks the item up to admit the key at its exact cost (a read has no effect, so it is admitted
    after it ran, as GetItem is); ``read_batch``'s read of that same key, which follows at once, is then
    answered from here instead of being looked up again.
    """

    def __init__(self, ctx: Context, txn: ReadTxn, requests: list[BatchGetRequest]) -> None:
        self.ctx = ctx
        self.txn = txn
        self.consistent = {request.table.name: request.consistent for request in requests}
        self.tickets: dict[bytes, admission.Ticket] = {}  # storage keys are unique across tables
        self.refusal: DynamoError | None = None
        self._looked_up: tuple[bytes, bytes | None] | None = None

    def __call__(self, table: TableDef, key: bytes) -> bool:
        raw = self.txn.get(key)
        self._looked_up = (key, raw)
        cost = admission.read_cost(raw, consistent=self.consistent[table.name])
        outcome = admission.attempt_read(self.ctx, table, key, cost)
        if isinstance(outcome, DynamoError):
            self.refusal = self.refusal or outcome
            return False
        self.tickets[key] = outcome
        return True

    def get(self, key: bytes) -> bytes | None:
        looked_up = self._looked_up
        if looked_up is not None and looked_up[0] == key:
            self._looked_up = None
            return looked_up[1]
        return self.txn.get(key)

    def iter_range(self, lo: bytes, hi: bytes, *, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        return self.txn.iter_range(lo, hi, reverse=reverse)

    def refund_unprocessed(self, requests: list[BatchGetRequest], results: list[BatchGetResult]) -> None:
        """Give back what admitted keys took that were then left unprocessed (past the 16 MB response limit)."""
        for request, result in zip(requests, results, strict=True):
            for index in result.unprocessed:
                ticket = self.tickets.pop(request.keys[index], None)
                if ticket is not None:
                    admission.refund(self.ctx, ticket)
