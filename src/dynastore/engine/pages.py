"""One page of a Query or Scan: the engine's page read, admitted, caught up and settled.

A page walks one contiguous key range of a ``KeySpace`` (engine/key_spaces.py):

* ``Limit`` counts the items *read* (evaluated), before the filter; reaching it ends the page with a
  ``LastEvaluatedKey`` even when no item follows (DynamoDB does the same);
* the 1 MB page limit is measured on the sizes (DynamoDB's item-size rules, ``model.item_size``) of the items
  read, again before the filter: the page ends after the item that brings the total to 1 MB or more;
* ``Count`` counts the items that pass the filter, ``ScannedCount`` the items read;
* capacity: the sizes of all items read, summed and rounded once (``read_half_units``).

Reading avoids decoding what it will not return. A stored item is its size (exact, written with the item)
and its wire JSON (``itemcodec``): page limits and capacity read the size from the header, and an item that
needs no filter and no projection goes out as a slice of the stored value, never decoded.

``read_page`` is the call Query and Scan make: admission, GSI catch-up, the read, settlement.
``read_range`` is the read alone, inside a read transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import orjson

from dynastore.engine import indexes
from dynastore.engine.capacity import admission
from dynastore.engine.capacity.units import read_half_units
from dynastore.engine.context import Context
from dynastore.engine.key_spaces import IndexKeySpace, KeySpace
from dynastore.expressions import ResolvedCondition, ResolvedProjection, evaluate, project
from dynastore.expressions.ast import (
    ArithOperand,
    BetweenCondition,
    Comparison,
    FunctionCondition,
    FunctionOperand,
    InCondition,
    PathOperand,
    ResolvedOperand,
    ResolvedPath,
    iter_conditions,
)
from dynastore.limits import MAX_PAGE_BYTES
from dynastore.model.values import Item
from dynastore.storage.itemcodec import item_json, sized_json, stored_size
from dynastore.storage.kv import ReadTxn

__all__ = [
    "Json",
    "Page",
    "PageRequest",
    "TableFetch",
    "condition_paths",
    "read_page",
    "read_range",
]

Json = bytes | memoryview  # an item's JSON, ready to splice into a response


@dataclass(frozen=True, slots=True)
class TableFetch:
    """An LSI read that needs attributes the index does not project: each entry's table item is read too
    (DynamoDB's "fetch from the table"), each rounded to 4 KB on its own."""

    space: IndexKeySpace
    for_filter: bool  # the filter names unprojected attributes: fetch every entry read, before filtering
    consistent: bool


# PageRequest and Page are plain classes rather than dataclasses: each Query and Scan makes one of each, and a
# compiled build makes a dataclass through its interpreted __init__ (docs/design.md "Compiled modules").
class PageRequest:
    """One page to read: ``[lo, hi)`` of ``space`` and what to do with each item. ``admit_at`` is the storage key
    whose partition admits the read (Query: its partition's prefix; Scan, by default: ``lo``)."""

    __slots__ = (
        "space",
        "lo",
        "hi",
        "reverse",
        "limit",
        "filter",
        "projection",
        "count_only",
        "page_bytes",
        "fetch",
        "consistent",
        "admit_at",
    )

    def __init__(
        self,
        space: KeySpace,
        lo: bytes,
        hi: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
        filter: ResolvedCondition | None = None,
        projection: ResolvedProjection | None = None,
        count_only: bool = False,
        page_bytes: int = MAX_PAGE_BYTES,
        fetch: TableFetch | None = None,
        consistent: bool = False,
        admit_at: bytes | None = None,
    ) -> None:
        self.space: Final = space
        self.lo: Final = lo
        self.hi: Final = hi
        self.reverse: Final = reverse
        self.limit: Final = limit
        self.filter: Final = filter
        self.projection: Final = projection
        self.count_only: Final = count_only
        self.page_bytes: Final = page_bytes
        self.fetch: Final = fetch
        self.consistent: Final = consistent
        self.admit_at: Final = lo if admit_at is None else admit_at


class Page:
    __slots__ = ("items", "count", "scanned_count", "last_key", "read_bytes", "fetch_half_units")

    def __init__(
        self,
        items: list[Json],
        count: int,
        scanned_count: int,
        last_key: Item | None,
        read_bytes: int,
        fetch_half_units: int = 0,
    ) -> None:
        self.items = items  # the JSON of each returned item, ready to splice into a response
        self.count = count
        self.scanned_count = scanned_count
        self.last_key = last_key
        self.read_bytes = read_bytes  # the sum of the sizes of the items (or index entries) read (capacity)
        self.fetch_half_units = fetch_half_units  # table fetches of an LSI read


def read_page(ctx: Context, req: PageRequest) -> Page:
    """One page of a Query or Scan under the capacity model (docs/capacity.md "How every operation is admitted"):
    admitted at the partition of ``req.admit_at`` (a GSI's own partitions; an LSI shares the table's) before
    reading (a throttled read raises and reads nothing), and settled with the page's actual cost afterwards.
    A GSI read first applies the index updates of the writes acknowledged before it (docs/indexes.md)."""
    space = req.space
    index = space.index
    gsi = index.name if index is not None and index.kind == "GSI" else None
    consistent = req.consistent
    ticket = admission.admit_read(ctx, space.table, req.admit_at, read_half_units(0, consistent=consistent), index=gsi)
    if gsi is not None:
        indexes.catch_up(ctx)
    with ctx.kv.read() as txn:
        page = read_range(txn, req)
    admission.settle_read(ctx, ticket, read_half_units(page.read_bytes, consistent=consistent) + page.fetch_half_units)
    return page


def read_range(txn: ReadTxn, req: PageRequest) -> Page:
    """The read of one page of ``req``'s range, starting at ``req.lo`` (or ``req.hi`` going backwards)."""
    if req.fetch is not None:
        return _read_page_fetching(txn, req, req.fetch)
    filt, projection, count_only, limit = req.filter, req.projection, req.count_only, req.limit
    page_bytes = req.page_bytes
    items: list[Json] = []
    count = scanned = total = 0
    last: bytes | None = None
    stopped = False
    sized, append = sized_json, items.append  # the loop runs once per item read: no lookups in it
    for key, raw in txn.iter_range(req.lo, req.hi, reverse=req.reverse):
        scanned += 1
        last = key
        size, view = sized(raw)
        total += size
        if filt is None:
            if not count_only:
                append(view if projection is None else orjson.dumps(project(orjson.loads(view), projection)))
        else:
            item = orjson.loads(view)
            if evaluate(filt, item):
                count += 1
                if not count_only:
                    append(view if projection is None else orjson.dumps(project(item, projection)))
        if scanned == limit or total >= page_bytes:
            stopped = True
            break
    if filt is None:
        count = scanned
    last_key = req.space.last_key(last) if stopped and last is not None else None
    return Page(items, count, scanned, last_key, total)


def _read_page_fetching(txn: ReadTxn, req: PageRequest, fetch: TableFetch) -> Page:
    """``read_page`` for an LSI read that fetches table items: page limits and the index part of the capacity
    count the index entries; each fetched item costs its own read (``Page.fetch_half_units``)."""
    filt, projection, limit = req.filter, req.projection, req.limit
    items: list[Json] = []
    count = scanned = total = fetched = 0
    last: bytes | None = None
    stopped = False
    for key, raw in txn.iter_range(req.lo, req.hi, reverse=req.reverse):
        scanned += 1
        last = key
        total += stored_size(raw)
        item: Item | None = None
        if fetch.for_filter:
            item, units = _fetch(txn, fetch, key)
            fetched += units
        passes = filt is None or evaluate(filt, item if item is not None else orjson.loads(item_json(raw)))
        if passes:
            count += 1
            if not req.count_only:
                if item is None:
                    item, units = _fetch(txn, fetch, key)
                    fetched += units
                items.append(orjson.dumps(item if projection is None else project(item, projection)))
        if scanned == limit or total >= req.page_bytes:
            stopped = True
            break
    last_key = req.space.last_key(last) if stopped and last is not None else None
    return Page(items, count, scanned, last_key, total, fetched)


def _fetch(txn: ReadTxn, fetch: TableFetch, entry_key: bytes) -> tuple[Item, int]:
    """The table item behind an index entry and the half-units of reading it. LSI entries are written in the
    item's own transaction, so the item is there."""
    raw = txn.get(fetch.space.table_key(entry_key))
    if raw is None:
        return {}, read_half_units(0, consistent=fetch.consistent)
    item: Item = orjson.loads(item_json(raw))
    return item, read_half_units(stored_size(raw), consistent=fetch.consistent)


def condition_paths(condition: ResolvedCondition) -> list[ResolvedPath]:
    """Every document path of a condition, in source order."""
    paths: list[ResolvedPath] = []

    def operand(node: ResolvedOperand) -> None:
        if isinstance(node, PathOperand):
            paths.append(node.path)
        elif isinstance(node, FunctionOperand):
            for arg in node.args:
                operand(arg)
        elif isinstance(node, ArithOperand):
            operand(node.left)
            operand(node.right)

    for node in iter_conditions(condition.root):
        if isinstance(node, Comparison):
            operand(node.left)
            operand(node.right)
        elif isinstance(node, BetweenCondition):
            for part in (node.operand, node.low, node.high):
                operand(part)
        elif isinstance(node, InCondition):
            operand(node.operand)
            for option in node.options:
                operand(option)
        elif isinstance(node, FunctionCondition):
            for arg in node.args:
                operand(arg)
    return paths
