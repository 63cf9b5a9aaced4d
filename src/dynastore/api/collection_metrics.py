"""The wire ``ItemCollectionMetrics`` of one write, from the item collection facts the engine reports
(``IndexEffects.collection_key`` / ``collection_size``, engine/indexes.py)."""

from __future__ import annotations

import math
from typing import Any

from dynastore.engine.indexes import IndexEffects

__all__ = ["collection_metrics"]

_GB = 1024**3


def collection_metrics(effects: IndexEffects | None) -> dict[str, Any] | None:
    """The ItemCollectionMetrics of a write (None for tables without LSIs).

    DynamoDB documents only that the estimate is a [lower, upper] range in GB; dynastore knows the exact size
    and reports the whole gigabytes around it: [floor(GB), floor(GB) + 1].
    """
    if effects is None or effects.collection_key is None:
        return None
    low = float(math.floor(effects.collection_size / _GB))
    return {"ItemCollectionKey": effects.collection_key, "SizeEstimateRangeGB": [low, low + 1.0]}
