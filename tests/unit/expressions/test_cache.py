import pytest

from dynastore.errors import ValidationException
from dynastore.expressions import ExpressionCache, ExpressionContext


def test_hits_misses_and_successes_only() -> None:
    cache = ExpressionCache(maxsize=2)
    ctx = ExpressionContext(None, {":v": {"S": "x"}}, cache=cache)
    ctx.condition("ConditionExpression", "a = :v")
    ctx.condition("FilterExpression", "a = :v")
    assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)
    with pytest.raises(ValidationException):
        ctx.condition("ConditionExpression", "a = ")
    with pytest.raises(ValidationException):
        ctx.condition("ConditionExpression", "a = ")
    assert (cache.misses, len(cache)) == (3, 1)


def test_cached_tree_is_resolved_per_request() -> None:
    cache = ExpressionCache()
    one = ExpressionContext({"#n": "a"}, {":v": {"S": "1"}}, cache=cache).condition("ConditionExpression", "#n = :v")
    two = ExpressionContext({"#n": "b"}, {":v": {"S": "2"}}, cache=cache).condition("ConditionExpression", "#n = :v")
    assert one != two and cache.hits == 1


def test_lru_eviction() -> None:
    cache = ExpressionCache(maxsize=2)
    for text in ("a", "b", "a", "c"):
        cache.get("ProjectionExpression", text)
    assert len(cache) == 2
    cache.get("ProjectionExpression", "a")
    assert cache.hits == 2  # "a" survived (recently used), "b" was evicted
    cache.get("ProjectionExpression", "b")
    assert cache.misses == 4
