"""DynamoDB's daily limit on provisioned-throughput decreases (UpdateTable), with its message's dates."""

from __future__ import annotations

import datetime

from dynastore import limits, messages
from dynastore.errors import LimitExceededException
from dynastore.model.table_schema import ProvisionedThroughput


def check_throughput_decrease(current: ProvisionedThroughput, now: float) -> None:
    """DynamoDB's daily limit on decreases: 4 at any time of the UTC day, then one an hour after the last
    one (27 in all). Raises LimitExceededException with DynamoDB's text."""
    count = current.decreases_on(now)
    if count < limits.THROUGHPUT_FREE_DECREASES:
        return
    last = current.last_decrease
    assert last is not None
    next_at = last + limits.THROUGHPUT_DECREASE_INTERVAL
    if count >= limits.MAX_THROUGHPUT_DECREASES_PER_DAY:
        next_at = (now // 86400 + 1) * 86400
    elif now >= next_at:
        return
    raise LimitExceededException(
        messages.THROUGHPUT_DECREASE_LIMIT.format(count=count, last=utc_text(last), next=utc_text(next_at))
    )


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def utc_text(t: float) -> str:
    """``Friday, October 9, 2026 at 12:21:34 AM Coordinated Universal Time`` (as DynamoDB writes times)."""
    d = datetime.datetime.fromtimestamp(int(t), datetime.UTC)
    hour = d.hour % 12 or 12
    half = "AM" if d.hour < 12 else "PM"
    return (
        f"{_DAYS[d.weekday()]}, {_MONTHS[d.month - 1]} {d.day}, {d.year} at "
        f"{hour}:{d.minute:02d}:{d.second:02d} {half} Coordinated Universal Time"
    )
