"""``dynastore partitions TABLE --contributors``: each top key with its counts and the partition it falls in."""

from __future__ import annotations

from dynastore.admin.partitions_cli import format_contributors, format_partitions


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


def test_a_table_with_point_in_time_recovery_shows_its_storage() -> None:
    part = {
        "partition": 0,
        "hash_range": ["00000000", "ffffffff"],
        "items": 1,
        "bytes": 10,
        "provisioned": {"read": 5.0, "write": 5.0},
        "consumed": {"read": 0.0, "write": 1.0},
        "burst": {"read": 1500.0, "write": 1499.0},
        "throttled": {"read": 0, "write": 0},
        "adaptive": {"read": False, "write": False},
    }
    view = {
        "table": "t",
        "billing_mode": "PROVISIONED",
        "capacity_mode": "enforce",
        "as_if": None,
        "item_count": 1,
        "size_bytes": 10,
        "partition_count": 1,
        "provisioned": True,
        "throughput": {"read": 5.0, "write": 5.0},
        "partitions": [part],
        "indexes": [],
        "point_in_time": {"recovery_days": 7, "bases": 2, "base_bytes": 300, "log_bytes": 120},
    }
    assert format_partitions(view).splitlines()[-1] == (
        "point-in-time recovery: 7 day(s), 2 base(s) of 300 bytes, 120 bytes of log records"
    )
    assert "point-in-time" not in format_partitions({**view, "point_in_time": None})
