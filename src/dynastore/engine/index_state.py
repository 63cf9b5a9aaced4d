"""What index maintenance keeps for one dynastore: the GSI backlog and the pacing of backfills."""

from __future__ import annotations

import math

from dynastore.config import Config
from dynastore.engine.gsi_backlog import Backlog, IndexTarget
from dynastore.storage.kv import KV

__all__ = ["IndexState"]


class IndexState:
    """Per server: the GSI backlog, the item-collection limit, backfill pacing."""

    def __init__(self, config: Config, kv: KV) -> None:
        self.backlog = Backlog(kv, config.clock, config.gsi_propagation_delay)
        self.collection_limit = config.item_collection_size_limit
        self.backfill_interval = config.gsi_backfill_interval
        self.backfill_chunk = max(1, config.gsi_backfill_chunk)
        self.last_backfill = -math.inf
        self.targets: tuple[int, dict[int, IndexTarget]] | None = None  # (catalog generation, GSIs to write)
