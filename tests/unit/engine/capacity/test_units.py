"""Capacity units in half-units: DynamoDB's rounding rules."""

from __future__ import annotations

import pytest

from dynastore.engine.capacity.units import read_half_units, write_half_units


@pytest.mark.parametrize(
    ("size", "consistent", "half_units"),
    [(0, False, 1), (0, True, 2), (4096, False, 1), (4097, False, 2), (4097, True, 4), (1024 * 1024, False, 256)],
)
def test_reads_round_up_to_4_kb(size: int, consistent: bool, half_units: int) -> None:
    assert read_half_units(size, consistent=consistent) == half_units


def test_transactional_reads_cost_double_a_strong_read() -> None:
    assert read_half_units(5000, consistent=False, transactional=True) == 8


@pytest.mark.parametrize(("size", "half_units"), [(0, 2), (1, 2), (1024, 2), (1025, 4), (409_600, 800)])
def test_writes_round_up_to_1_kb(size: int, half_units: int) -> None:
    assert write_half_units(size) == half_units
    assert write_half_units(size, transactional=True) == 2 * half_units
