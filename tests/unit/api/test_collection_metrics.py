"""api/collection_metrics.py: the ItemCollectionMetrics of a write, from the engine's IndexEffects."""

from __future__ import annotations

from dynastore.api.collection_metrics import collection_metrics
from dynastore.engine.indexes import IndexEffects

GB = 1024**3


def test_no_metrics_without_an_item_collection() -> None:
    assert collection_metrics(None) is None
    assert collection_metrics(IndexEffects()) is None  # a table without LSIs


def test_the_estimate_is_the_whole_gigabytes_around_the_size() -> None:
    small = IndexEffects(collection_key={"pk": {"S": "a"}}, collection_size=120)
    assert collection_metrics(small) == {"ItemCollectionKey": {"pk": {"S": "a"}}, "SizeEstimateRangeGB": [0.0, 1.0]}
    large = IndexEffects(collection_key={"pk": {"N": "7"}}, collection_size=3 * GB + 1)
    assert collection_metrics(large) == {"ItemCollectionKey": {"pk": {"N": "7"}}, "SizeEstimateRangeGB": [3.0, 4.0]}
    empty = IndexEffects(collection_key={"pk": {"B": "AQ=="}}, collection_size=0)
    assert collection_metrics(empty) == {"ItemCollectionKey": {"pk": {"B": "AQ=="}}, "SizeEstimateRangeGB": [0.0, 1.0]}
