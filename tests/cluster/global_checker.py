"""What the global tables' checker concludes from the history and from each region's replica once replication is
quiet (pure: no I/O here; docs/fault-injection.md "Global tables").

Every write stores a value no other operation uses (its region and a counter) in the item's ``w`` attribute, so a
value found in a replica names the one operation that wrote it; every delete has such a value too, in the history
only.

Last writer wins orders an item's writes and deletes by their hybrid-clock stamps, which clients never see. What
clients do see bounds them: a stamp is taken while its request is served, so an operation answered more than
``margin`` before another was sent took the smaller stamp (the servers share one clock here, and a stamp's wall part
has a resolution of 1 ms; ``margin`` covers both). Operations that overlap, or are closer than that, may be ordered
either way; an operation in doubt may have taken effect at any time after it was sent, or never. The checks claim a
loss only where that order is certain:

- the operation whose value a replica holds must not be certainly older than an acknowledged write (that write is
  then lost) or than an acknowledged delete (the item came back: the delete is lost);
- an item absent from a replica that an acknowledged write put there needs a delete, acknowledged or in doubt,
  that is not certainly older than that write (else the write is lost).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.cluster.checker import Verdicts
from tests.cluster.history import Op, Outcome

WRITES = frozenset({"put", "cond-put", "update", "probe"})  # each leaves its value in the item's VALUE attribute
DELETES = frozenset({"delete"})
READS = frozenset({"read"})
VALUE = "w"
MARGIN = 0.005  # seconds: see the module's docstring

Item = dict[str, Any]  # an item as the API answers it (DynamoDB-typed attribute values)
Replicas = Mapping[str, Mapping[str, Item]]  # region -> key -> item


@dataclass
class Losses:
    """The acknowledged operations a replica contradicts, by their values (one operation lost in several regions
    counts once)."""

    writes: set[str] = field(default_factory=set)
    deletes: set[str] = field(default_factory=set)
    lost_writes: list[str] = field(default_factory=list)  # what each replica showed of them
    items_back: list[str] = field(default_factory=list)


def certainly_before(first: Op, second: Op, margin: float = MARGIN) -> bool:
    """Whether ``first`` took its stamp before ``second`` took its own, whatever the servers did: it was answered
    more than ``margin`` before ``second`` was sent (an operation in doubt is never answered)."""
    return first.complete + margin < second.invoke


def value_of(item: Item) -> str | None:
    value = item.get(VALUE, {})
    return value.get("S") if isinstance(value, dict) else None


def check_identical(verdicts: Verdicts, replicas: Replicas) -> None:
    """Every region holds the same items, attribute by attribute."""
    regions = sorted(replicas)
    keys = sorted(set().union(*(replicas[r].keys() for r in regions))) if regions else []
    problems = []
    for key in keys:
        held = [replicas[r].get(key) for r in regions]
        if any(item != held[0] for item in held[1:]):
            shown = ", ".join(f"{r} {_describe(item)}" for r, item in zip(regions, held, strict=True))
            problems.append(f"{key}: {shown}")
    counts = sorted({len(replicas[r]) for r in regions})
    verdicts.add("replicas identical item by item", problems,
                 f"{'/'.join(map(str, counts))} items in each of {len(regions)} regions")  # fmt: skip


def _describe(item: Item | None) -> str:
    if item is None:
        return "absent"
    others = sorted(set(item) - {"pk", VALUE})
    return f"w={value_of(item)}" + (f" (+{','.join(others)})" if others else "")


def check_final_states(verdicts: Verdicts, ops: Sequence[Op], replicas: Replicas, margin: float = MARGIN) -> Losses:
    """Each region's items against the history: no value that was never written (or was refused), no acknowledged
    write lost, no acknowledged delete undone (a deleted item back). Adds the losses to ``verdicts.lost``."""
    by_key = _by_key(op for op in ops if op.kind in WRITES | DELETES)
    written = {op.value: op for op in ops if op.kind in WRITES}
    losses, phantoms = Losses(), []
    for region in sorted(replicas):
        items = replicas[region]
        for key in sorted(set(by_key) | set(items)):
            item = items.get(key)
            if item is None:
                _check_absent(region, key, by_key.get(key, []), losses, margin)
                continue
            holder = written.get(value_of(item))
            problem = _provenance(key, value_of(item), holder, "holds")
            if problem:
                phantoms.append(f"{region}: {problem}")
            elif holder is not None:
                _check_present(region, key, holder, by_key[key], losses, margin)
    verdicts.lost += len(losses.writes) + len(losses.deletes)
    acked = [op for op in ops if op.outcome is Outcome.OK]
    verdicts.add("every acknowledged write present or overwritten by a later write or delete",
                 losses.lost_writes,
                 f"{sum(op.kind in WRITES for op in acked)} acknowledged writes")  # fmt: skip
    verdicts.add("no deleted item back", losses.items_back,
                 f"{sum(op.kind in DELETES for op in acked)} acknowledged deletes")  # fmt: skip
    verdicts.add("every value held was written (acknowledged or in doubt)", phantoms, "none other")
    return losses


def _by_key(ops: Iterable[Op]) -> dict[str, list[Op]]:
    grouped: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        grouped[op.key].append(op)
    return grouped


def _provenance(key: str, value: str | None, holder: Op | None, verb: str) -> str:
    """What is wrong with where a value held or read came from ("" when from a write of this key that may have
    taken effect)."""
    if holder is None:
        return f"{key} {verb} {value}, which no operation wrote"
    if holder.outcome is Outcome.FAILED:
        return f"{key} {verb} {value}, whose write was refused ({holder.error})"
    if holder.key != key:
        return f"{key} {verb} {value}, written to {holder.key}"
    return ""


def _check_present(region: str, key: str, holder: Op, ops: Sequence[Op], losses: Losses, margin: float) -> None:
    """The held value's write must not be certainly older than any acknowledged write or delete of the key."""
    for op in ops:
        if op is holder or op.outcome is not Outcome.OK or not certainly_before(holder, op, margin):
            continue
        if op.kind in DELETES:
            losses.deletes.add(op.value)
            losses.items_back.append(f"{region}: {key} deleted by {op.value} at {op.invoke:.3f}-{op.complete:.3f} s "
                                   f"is back with {holder.value}, answered at {holder.complete:.3f} s")  # fmt: skip
        else:
            losses.writes.add(op.value)
            losses.lost_writes.append(f"{region}: {key} lost {op.value} (sent at {op.invoke:.3f} s): holds the older "
                                   f"{holder.value}, answered at {holder.complete:.3f} s")  # fmt: skip


def _check_absent(region: str, key: str, ops: Sequence[Op], losses: Losses, margin: float) -> None:
    """An acknowledged write of an absent item needs a delete that may have come after it."""
    deletes = [op for op in ops if op.kind in DELETES and op.outcome is not Outcome.FAILED]
    latest = max(deletes, key=lambda op: op.complete, default=None)
    for op in ops:
        if op.kind not in WRITES or op.outcome is not Outcome.OK:
            continue
        if latest is None or certainly_before(latest, op, margin):
            losses.writes.add(op.value)
            after = "no delete" if latest is None else f"the last delete answered at {latest.complete:.3f} s"
            losses.lost_writes.append(f"{region}: {key} lost {op.value} (sent at {op.invoke:.3f} s): absent, {after}")


def check_reads(verdicts: Verdicts, ops: Sequence[Op]) -> None:
    """Every value a read returned was written to that key by a write sent before the read was answered, and not
    refused."""
    written = {op.value: op for op in ops if op.kind in WRITES}
    problems = []
    reads = [op for op in ops if op.kind in READS and op.outcome is Outcome.OK]
    for read in reads:
        if read.result is None:
            continue
        holder = written.get(read.result)
        problem = _provenance(read.key, read.result, holder, "read")
        if not problem and holder is not None and holder.invoke > read.complete:
            problem = f"{read.key} read {read.result} at {read.complete:.3f} s, before it was sent"
        if problem:
            problems.append(f"{read.node}: {problem}")
    verdicts.add("reads saw only written values", problems, f"{len(reads)} reads")


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` in 0-1) of ``values``; nan when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]
