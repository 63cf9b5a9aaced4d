"""``dynastore partitions TABLE --contributors``: each top key with its counts and the partition it falls in."""

from __future__ import annotations

from dynastore.admin.partitions_cli import format_contributors


def test_top_keys_name_their_partition() -> None:
    view = {
        "status": "ENABLED",
        "rules": {
            "PKT": [{"key": {"pk": {"S": "hot"}}, "ConsumedThroughputUnits": 6.0, "ThrottleCount": 3, "partition": 2}]
        },
    }
    assert format_contributors(view) == (
        '\ncontributor insights: ENABLED\n  PKT:\n    {"pk": {"S": "hot"}}  units=6  throttled=3  partition=2'
    )
