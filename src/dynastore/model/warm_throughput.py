"""Warm throughput: the read and write units per second a table or GSI is prepared to serve at once.

DynamoDB reports it in DescribeTable for every table and GSI: the value a CreateTable / UpdateTable configured
(a unit left out keeps the baseline), else the baseline every new table starts with
(``limits.WARM_READ_UNITS`` / ``limits.WARM_WRITE_UNITS``). A CreateTable response carries it only when the
request configured it (api/table_description.py describes it). dynastore stores and reports it; it does not
change how requests are admitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dynastore import limits

__all__ = ["WarmThroughput", "warm_from_request"]


@dataclass(frozen=True, slots=True)
class WarmThroughput:
    read: int
    write: int

    def to_record(self) -> list[int]:
        return [self.read, self.write]

    @classmethod
    def from_record(cls, rec: list[int] | None) -> WarmThroughput | None:
        return None if rec is None else cls(rec[0], rec[1])


def warm_from_request(spec: dict[str, Any] | None, current: WarmThroughput | None = None) -> WarmThroughput | None:
    """A request's ``WarmThroughput`` over what was configured before (or the baseline); None if not given."""
    if spec is None:
        return current
    base = current if current is not None else WarmThroughput(limits.WARM_READ_UNITS, limits.WARM_WRITE_UNITS)
    read = spec.get("ReadUnitsPerSecond")
    write = spec.get("WriteUnitsPerSecond")
    return WarmThroughput(base.read if read is None else read, base.write if write is None else write)
