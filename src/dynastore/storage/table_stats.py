"""The item statistics the catalog keeps in memory for each table (storage/catalog.py): counted by every write,
persisted into the table's record now and then."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dynastore.model.table_schema import IndexDef, TableDef

__all__ = ["TableStats"]


@dataclass
class TableStats:
    """The live item statistics of a table and of each of its indexes (kept in memory by the catalog)."""

    items: int
    bytes: int
    dirty: bool = False
    indexes: dict[int, list[int]] = field(default_factory=dict)  # index id -> [items, bytes]

    @classmethod
    def of(cls, td: TableDef) -> TableStats:
        return cls(
            td.item_count, td.size_bytes, indexes={i.index_id: [i.item_count, i.size_bytes] for i in td.lsis + td.gsis}
        )

    def applied_to(self, td: TableDef) -> TableDef:
        """``td`` carrying these counters (the table's and every index's)."""

        def counted(idx: IndexDef) -> IndexDef:
            items, size = self.indexes.get(idx.index_id, (0, 0))
            return (
                idx
                if (items, size) == (idx.item_count, idx.size_bytes)
                else replace(idx, item_count=items, size_bytes=size)
            )

        return replace(
            td,
            item_count=self.items,
            size_bytes=self.bytes,
            lsis=tuple(counted(i) for i in td.lsis),
            gsis=tuple(counted(i) for i in td.gsis),
        )
