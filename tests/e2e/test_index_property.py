"""Property, end to end: after any sequence of writes through boto3 (PutItem, UpdateItem, DeleteItem,
BatchWriteItem, TransactWriteItems) and once GSI propagation has settled, a Scan of every index returns exactly
the projection of the table's items, computed here from a Scan of the table (a multi-attribute GSI key
included)."""

from __future__ import annotations

import json
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import Send, unique_name

PKS = ["a", "b", "c"]
SKS = ["1", "2", "3"]
WORDS = st.sampled_from(["G", "H", "Z"])
INDEXES = {
    # name: (hash attributes, range attributes, projected attributes or None for ALL)
    "lsi_n": (("pk",), ("n",), ()),
    "gsi_g": (("g",), (), None),
    "gsi_hn": (("h",), ("n",), ("x",)),
    "gsi_multi": (("g", "h"), ("n", "x"), ()),  # a multi-attribute key: an entry needs all four attributes
}
TABLE_KEYS = ("pk", "sk")


@st.composite
def items(draw: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"pk": {"S": draw(st.sampled_from(PKS))}, "sk": {"S": draw(st.sampled_from(SKS))}}
    for name in ("n", "g", "h", "x"):
        if draw(st.booleans()):
            item[name] = {"N": draw(st.sampled_from(["1", "2", "-3.5"]))} if name == "n" else {"S": draw(WORDS)}
    return item


def key_of(item: dict[str, Any]) -> dict[str, Any]:
    return {name: item[name] for name in TABLE_KEYS}


WRITES = st.one_of(
    st.tuples(st.just("put"), items()),
    st.tuples(st.just("delete"), items()),
    st.tuples(st.just("update"), items(), st.sampled_from(["SET g = :v", "REMOVE g", "SET n = :n", "REMOVE h"])),
    st.tuples(st.just("batch"), st.lists(items(), min_size=1, max_size=4, unique_by=lambda i: str(key_of(i)))),
    st.tuples(st.just("transact"), st.lists(items(), min_size=1, max_size=3, unique_by=lambda i: str(key_of(i)))),
)


def create(ddb: Any) -> str:
    name = unique_name()
    attrs = [("pk", "S"), ("sk", "S"), ("n", "N"), ("g", "S"), ("h", "S"), ("x", "S")]

    def keys(hash_names: tuple[str, ...], range_names: tuple[str, ...]) -> list[dict[str, str]]:
        out = [{"AttributeName": name, "KeyType": "HASH"} for name in hash_names]
        return out + [{"AttributeName": name, "KeyType": "RANGE"} for name in range_names]

    def projection(projected: tuple[str, ...] | None) -> dict[str, Any]:
        if projected is None:
            return {"ProjectionType": "ALL"}
        if not projected:
            return {"ProjectionType": "KEYS_ONLY"}
        return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(projected)}

    ddb.create_table(
        TableName=name,
        KeySchema=keys(("pk",), ("sk",)),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in attrs],
        BillingMode="PAY_PER_REQUEST",
        LocalSecondaryIndexes=[
            {"IndexName": "lsi_n", "KeySchema": keys(("pk",), ("n",)), "Projection": projection(INDEXES["lsi_n"][2])}
        ],
        GlobalSecondaryIndexes=[
            {"IndexName": index, "KeySchema": keys(h, r), "Projection": projection(p)}
            for index, (h, r, p) in INDEXES.items()
            if index.startswith("gsi")
        ],
    )
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    return name


def apply(ddb: Any, table: str, write: tuple[Any, ...]) -> None:
    kind = write[0]
    if kind == "put":
        ddb.put_item(TableName=table, Item=write[1])
    elif kind == "delete":
        ddb.delete_item(TableName=table, Key=key_of(write[1]))
    elif kind == "update":
        ddb.update_item(
            TableName=table,
            Key=key_of(write[1]),
            UpdateExpression=write[2],
            **({"ExpressionAttributeValues": {":v": {"S": "G"}}} if ":v" in write[2] else {}),
            **({"ExpressionAttributeValues": {":n": {"N": "2"}}} if ":n" in write[2] else {}),
        )
    elif kind == "batch":
        ddb.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": item}} for item in write[1]]})
    else:
        ddb.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": item}} for item in write[1]])


def scan_all(ddb: Any, table: str, index: str | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table, "Limit": 4}
    if index is not None:
        kwargs["IndexName"] = index
    while True:
        page = ddb.scan(**kwargs)
        out.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return out
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def expected(items: list[dict[str, Any]], index: str) -> list[dict[str, Any]]:
    hash_names, range_names, projected = INDEXES[index]
    keys = {*TABLE_KEYS, *hash_names, *range_names}
    out = []
    for item in items:
        if all(name in item for name in keys):
            keep = None if projected is None else keys | set(projected)
            out.append(item if keep is None else {k: v for k, v in item.items() if k in keep})
    return out


def canonical(items: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(item, sort_keys=True) for item in items)


def settle(send: Send) -> None:
    """Until the server has no GSI change left to apply. The count is the whole server's: the session server may
    still be applying what earlier tests wrote, which on a loaded machine (the suite's other worker running its
    fault injection) takes seconds, hence the generous bound."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lag = json.loads(send("GET", "/dynastore/indexes", b"", {})[1])
        if lag["waiting"] == 0:
            return
        time.sleep(0.01)
    raise AssertionError("GSI propagation did not settle")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(WRITES, max_size=12))
def test_every_index_is_the_projection_of_the_table(ddb: Any, send: Send, sequence: list[Any]) -> None:
    table = create(ddb)
    for write in sequence:
        apply(ddb, table, write)
    settle(send)
    table_items = scan_all(ddb, table)
    for index in INDEXES:
        assert canonical(scan_all(ddb, table, index)) == canonical(expected(table_items, index)), index
    ddb.delete_table(TableName=table)
