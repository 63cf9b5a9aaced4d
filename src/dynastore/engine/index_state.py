"""What index maintenance keeps for one dynastore: the item-collection limit and the pacing of backfills."""

from __future__ import annotations

import math

from dynastore.config import Config
from dynastore.engine.gsi_propagation import IndexTarget

__all__ = ["IndexState"]


class IndexState:
    """Per dynastore: the item-collection limit, backfill pacing, the GSIs propagation may write."""

    def __init__(self, config: Config) -> None:
        self.collection_limit = config.item_collection_size_limit
        self.backfill_interval = config.gsi_backfill_interval
        self.backfill_chunk = max(1, config.gsi_backfill_chunk)
        self.last_backfill = -math.inf
        self.targets: tuple[int, dict[int, IndexTarget]] | None = None  # (catalog generation, GSIs to write)
