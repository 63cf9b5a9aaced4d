"""Capacity units as DynamoDB counts them, in integer half-units so sums never drift.

Reads: ceil(bytes / 4 KB) units, half for eventually consistent reads, at least one unit (half a unit for an
eventually consistent read) even when nothing is found. Writes: ceil(bytes / 1 KB) of the larger of the old and
new item, at least one unit. Transactional reads and writes cost double. api/consumed_capacity.py turns the
half-units into the wire ConsumedCapacity.
"""

from __future__ import annotations

from dynastore.limits import READ_UNIT_BYTES, WRITE_UNIT_BYTES


def read_half_units(size_bytes: int, *, consistent: bool, transactional: bool = False) -> int:
    units = max(1, -(-size_bytes // READ_UNIT_BYTES))
    if transactional:
        return units * 4
    return units * 2 if consistent else units


def write_half_units(size_bytes: int, *, transactional: bool = False) -> int:
    units = max(1, -(-size_bytes // WRITE_UNIT_BYTES))
    return units * (4 if transactional else 2)
