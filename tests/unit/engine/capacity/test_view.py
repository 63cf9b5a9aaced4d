"""What the capacity model shows (engine/capacity/view.py): the partitions of a table and its GSIs, and the top
keys of Contributor Insights, as the admin endpoints and the partitions CLI print them."""

from __future__ import annotations

from dynastore.engine import writes
from dynastore.engine.capacity import admission, insights
from dynastore.engine.capacity.view import contributors_view, partitions_view
from dynastore.engine.context import Context
from dynastore.engine.keys import storage_key
from dynastore.errors import ProvisionedThroughputExceededException
from dynastore.limits import CONTRIBUTOR_WINDOW_SECONDS
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import KeyAttr, KeySchema, TableDef
from dynastore.model.values import Item
from tests.unit.engine.tables import T0, create, gsi, make_ctx

COLOR = KeyAttr("color", "S")


def put(ctx: Context, td: TableDef, item: Item) -> None:
    writes.perform(ctx, td, storage_key(td, item), writes.PutPlan(item, size=item_size(item)))


def test_partitions_of_a_table_and_its_gsi() -> None:
    ctx, clock = make_ctx()
    td = create(ctx, "shown", 5000, 10, more_attributes=(COLOR,), gsis=(gsi(ctx, "by-color", COLOR, 5, 7),))
    put(ctx, td, {"pk": {"S": "a"}, "color": {"S": "red"}})
    spent = partitions_view(ctx, ctx.capacity.find("shown"))
    assert sum(p["burst"]["write"] for p in spent["partitions"]) == 2 * 5 * 300 - 1
    clock.advance(2)
    view = partitions_view(ctx, ctx.capacity.find("shown"))
    assert {k: v for k, v in view.items() if k not in ("partitions", "indexes")} == {
        "table": "shown",
        "billing_mode": "PROVISIONED",
        "capacity_mode": "enforce",
        "as_if": None,
        "item_count": 1,
        "size_bytes": item_size({"pk": {"S": "a"}, "color": {"S": "red"}}),
        "limits": {
            "partition_bytes": 10 * 1024**3,
            "partition_rcu": 3000,
            "partition_wcu": 1000,
            "adaptive_delay": 300.0,
        },
        "now": T0 + 2,
        "provisioned": True,
        "throughput": {"read": 5000.0, "write": 10.0},
        "peaks": {"read": 0.0, "write": 0.0},
        "partition_count": 2,
        "point_in_time": None,  # point-in-time recovery is off
    }
    first, second = view["partitions"]
    assert first["hash_range"] == ["00000000", "7fffffff"] and second["hash_range"] == ["80000000", "ffffffff"]
    assert (first["weight"], second["weight"]) == ("1/2", "1/2")
    assert first["provisioned"] == {"read": 2500.0, "write": 5.0}
    assert first["ceiling"] == {"read": 3000.0, "write": 1000.0}
    assert sum(p["consumed"]["write"] for p in view["partitions"]) == 1.0
    assert sum(p["burst"]["write"] for p in view["partitions"]) == 2 * 5 * 300  # refilled as it is shown
    assert first["throttled"] == first["borrowed"] == {"read": 0, "write": 0}
    assert first["adaptive"] == {"read": False, "write": False}
    [index] = view["indexes"]
    assert index["index"] == "by-color" and index["partition_count"] == 1
    assert index["throughput"] == {"read": 5.0, "write": 7.0}
    assert index["partitions"][0]["consumed"] == {"read": 0, "write": 1.0}


def test_the_as_if_count_set_by_tag_wins() -> None:
    ctx, _ = make_ctx(capacity="report")
    create(ctx, "tagged", 400, 400, tags=(("dynastore:partitions", "4"),))
    st = ctx.capacity.find("tagged")
    ctx.capacity.set_as_if(st, 2)
    view = partitions_view(ctx, st)
    assert (view["as_if"], view["capacity_mode"], view["partition_count"]) == (4, "report", 4)


def test_contributors_of_a_table_never_enabled() -> None:
    ctx, _ = make_ctx()
    create(ctx, "quiet", 1, 1)
    assert contributors_view(ctx, ctx.capacity.find("quiet"), None) == {
        "table": "quiet",
        "index": None,
        "status": "DISABLED",
        "mode": None,
        "window": CONTRIBUTOR_WINDOW_SECONDS,
        "rules": {},
    }


def test_contributors_name_the_top_keys_with_their_sort_keys() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "busy", 1, 1, range_key=KeyAttr("sk", "N"))
    insights.change(ctx, "busy", None, enable=True, mode=None)
    for sk in ("1", "1", "2"):
        put(ctx, td, {"pk": {"S": "hot"}, "sk": {"N": sk}})
    put(ctx, td, {"pk": {"S": "cold"}, "sk": {"N": "1"}})
    key = storage_key(td, {"pk": {"S": "hot"}, "sk": {"N": "1"}})
    while admission.try_admit_write(ctx, td, key, 2) is not None:  # spend the partition: one throttle
        pass
    view = contributors_view(ctx, ctx.capacity.find("busy"), None)
    assert (view["status"], view["mode"]) == ("ENABLED", insights.DEFAULT_MODE)
    rules = view["rules"]
    assert sorted(rules) == ["PKC", "PKT", "SKC", "SKT"]
    assert rules["PKC"][-1] == {
        "key": {"pk": {"S": "cold"}},
        "ConsumedThroughputUnits": 3.0,
        "ThrottleCount": 0,
        "partition": 0,
    }
    assert rules["PKT"] == [
        {
            "key": {"pk": {"S": "hot"}},
            "ConsumedThroughputUnits": rules["PKC"][0]["ConsumedThroughputUnits"],
            "ThrottleCount": 1,
            "partition": 0,
        }
    ]
    assert rules["SKT"] == [
        {
            "key": {"pk": {"S": "hot"}, "sk": {"N": "1"}},
            "ConsumedThroughputUnits": rules["SKC"][0]["ConsumedThroughputUnits"],
            "ThrottleCount": 1,
            "partition": 0,
        }
    ]
    assert {
        "key": {"pk": {"S": "hot"}, "sk": {"N": "2"}},
        "ConsumedThroughputUnits": 3.0,
        "ThrottleCount": 0,
        "partition": 0,
    } in rules["SKC"]


def test_throttled_keys_mode_shows_only_the_throttle_rules() -> None:
    ctx, _ = make_ctx()
    td = create(ctx, "strict", 1, 100, more_attributes=(COLOR,), gsis=(gsi(ctx, "by-color", COLOR, 1, 1),))
    insights.change(ctx, "strict", "by-color", enable=True, mode="THROTTLED_KEYS")
    for i in range(302):  # distinct items: each writes the index; its 1 WCU and burst credit serve 301
        try:
            put(ctx, td, {"pk": {"S": f"k{i}"}, "color": {"S": "red"}})
        except ProvisionedThroughputExceededException:
            assert i == 301
    view = contributors_view(ctx, ctx.capacity.find("strict"), "by-color")
    assert (view["index"], view["status"], view["mode"]) == ("by-color", "ENABLED", "THROTTLED_KEYS")
    assert view["rules"] == {
        "PKT": [{"key": {"color": {"S": "red"}}, "ConsumedThroughputUnits": 0, "ThrottleCount": 1, "partition": 0}]
    }


def test_each_top_key_names_the_partition_it_falls_in() -> None:
    """Which partitions and which keys take the load: a top key names the partition its partition key hashes to,
    the one the partition view shows throttled."""
    ctx, _ = make_ctx()
    td = create(ctx, "spread", 4, 4)
    st = ctx.capacity.find("spread")
    ctx.capacity.set_as_if(st, 8)
    ctx.capacity.spend_burst(st)
    insights.change(ctx, "spread", None, enable=True, mode=None)
    key = storage_key(td, {"pk": {"S": "hot"}})
    while admission.try_admit_write(ctx, td, key, 1) is not None:
        pass
    expected = st.base.pmap.index_of(int.from_bytes(key[5:9], "big"))
    [entry] = contributors_view(ctx, st, None)["rules"]["PKT"]
    assert (entry["key"], entry["partition"]) == ({"pk": {"S": "hot"}}, expected)
    throttled = [p["partition"] for p in partitions_view(ctx, st)["partitions"] if p["throttled"]["write"]]
    assert throttled == [expected]


def test_contributors_of_a_multi_attribute_gsi_name_every_key_attribute() -> None:
    ctx, _ = make_ctx()
    schema = KeySchema(COLOR, KeyAttr("year", "N"), (KeyAttr("size", "S"),), (KeyAttr("month", "N"),))
    td = create(ctx, "multi", 10, 10, gsis=(gsi(ctx, "by-color-size", schema, 10, 10),))
    insights.change(ctx, "multi", "by-color-size", enable=True, mode=None)
    for pk, size in (("a", "S"), ("b", "S"), ("c", "L")):
        put(
            ctx,
            td,
            {"pk": {"S": pk}, "color": {"S": "red"}, "size": {"S": size}, "year": {"N": "2025"}, "month": {"N": "1"}},
        )
    rules = contributors_view(ctx, ctx.capacity.find("multi"), "by-color-size")["rules"]
    # Partition keys are (color, size) pairs: red/S written twice, red/L once (3 units a write), never merged as "red".
    assert [(entry["key"], entry["ConsumedThroughputUnits"]) for entry in rules["PKC"]] == [
        ({"color": {"S": "red"}, "size": {"S": "S"}}, 6.0),
        ({"color": {"S": "red"}, "size": {"S": "L"}}, 3.0),
    ]
    assert rules["SKC"][-1]["key"] == {
        "color": {"S": "red"},
        "size": {"S": "L"},
        "year": {"N": "2025"},
        "month": {"N": "1"},
    }
