"""Warm throughput values: a request's units over the configured or baseline ones, and their record."""

from __future__ import annotations

from dynastore.model.warm_throughput import WarmThroughput, warm_from_request


def test_a_unit_left_out_keeps_the_baseline_or_the_configured_value() -> None:
    assert warm_from_request(None) is None
    assert warm_from_request({"ReadUnitsPerSecond": 15000}) == WarmThroughput(15000, 4000)
    current = WarmThroughput(15000, 5000)
    assert warm_from_request({"WriteUnitsPerSecond": 6000}, current) == WarmThroughput(15000, 6000)
    assert warm_from_request(None, current) is current


def test_record_round_trip() -> None:
    warm = WarmThroughput(13000, 4500)
    assert WarmThroughput.from_record(warm.to_record()) == warm
    assert WarmThroughput.from_record(None) is None
