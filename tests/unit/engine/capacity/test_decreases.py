"""The daily limit on provisioned-throughput decreases (engine/capacity/decreases.py)."""

from __future__ import annotations

import pytest

from dynastore.engine.capacity import decreases
from dynastore.errors import LimitExceededException
from dynastore.model.table_schema import ProvisionedThroughput


def test_decreases_four_at_once_then_one_an_hour() -> None:
    day = 1_760_000_000 - 1_760_000_000 % 86400  # midnight UTC
    pt = ProvisionedThroughput(10, 10, None, day + 60, 4)
    with pytest.raises(LimitExceededException) as e:
        decreases.check_throughput_decrease(pt, day + 120)
    assert e.value.message == (
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the "
        "first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 "
        "seconds. Number of decreases today: 4. Last decrease at Thursday, October 9, 2025 at 12:01:00 AM "
        "Coordinated Universal Time. Next decrease can be made at Thursday, October 9, 2025 at 1:01:00 AM "
        "Coordinated Universal Time"
    )
    decreases.check_throughput_decrease(pt, day + 60 + 3600)  # an hour later: allowed
    decreases.check_throughput_decrease(ProvisionedThroughput(10, 10, None, day + 60, 3), day + 61)
    decreases.check_throughput_decrease(pt, day + 86400 + 1)  # a new UTC day
