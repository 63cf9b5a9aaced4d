"""The condition keys of PartiQL statements (api/partiql_access.py), as ``checks_for`` builds them per statement
on a server in ``auth sigv4`` mode: table Music (pk S), table Events (pk S, sk N) with an index ByV (v S)."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore.api.authorization import checks_for
from dynastore.security.conditions import UNKNOWN, ConditionValue
from tests.unit.api.test_authorization import TABLE, Server

LEAD, ATTRS = "dynamodb:leadingkeys", "dynamodb:attributes"


@pytest.fixture(scope="module")
def server() -> Server:
    srv = Server()
    srv.table("Music")
    srv.admin(
        "CreateTable",
        TableName="Events",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "v", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "ByV",
                "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            },
        ],  # fmt: skip
        BillingMode="PAY_PER_REQUEST",
    )
    return srv


def keys(server: Server, statement: str, *params: dict[str, Any], operation: str = "ExecuteStatement") -> Any:
    entry: dict[str, Any] = {"Statement": statement}
    if params:
        entry["Parameters"] = list(params)
    req: dict[str, Any] = {
        "ExecuteStatement": entry,
        "BatchExecuteStatement": {"Statements": [entry]},
        "ExecuteTransaction": {"TransactStatements": [entry]},
    }[operation]
    checks = checks_for(operation, req, server.ctx, server.services)
    assert len(checks) == 1
    return checks[0].action, checks[0].resource, checks[0].values


SELECT_CASES: list[tuple[str, tuple[dict[str, Any], ...], ConditionValue, tuple[str, ...], str]] = [
    # statement, parameters, LeadingKeys, Attributes, FullTableScan
    ("SELECT * FROM Music WHERE pk = 'a'", (), ("a",), ("pk",), "false"),
    ("SELECT * FROM Music WHERE pk = ?", ({"S": "b"},), ("b",), ("pk",), "false"),
    ("SELECT x.y, z[0] FROM Music WHERE 'a' = pk AND w > 1", (), ("a",), ("pk", "w", "x", "z"), "false"),
    ("SELECT * FROM Music WHERE pk IN ['a', 'b', 'a']", (), ("a", "b"), ("pk",), "false"),
    ("SELECT * FROM Music WHERE pk = 'a' OR pk = ?", ({"S": "c"},), ("a", "c"), ("pk",), "false"),
    ("SELECT * FROM Events WHERE pk = 'a' AND sk BETWEEN 1 AND 5", (), ("a",), ("pk", "sk"), "false"),
    ("SELECT * FROM Music", (), UNKNOWN, (), "true"),
    ("SELECT * FROM Music WHERE pk <> 'a'", (), UNKNOWN, ("pk",), "true"),
    ("SELECT * FROM Music WHERE pk = 'a' OR v = 'b'", (), UNKNOWN, ("pk", "v"), "true"),
    ("SELECT * FROM Music WHERE pk = 1", (), UNKNOWN, ("pk",), "true"),  # another type: no Query
    ("SELECT * FROM Music WHERE NOT pk = 'a'", (), UNKNOWN, ("pk",), "true"),
    ("SELECT * FROM Music WHERE begins_with(pk, 'a')", (), UNKNOWN, ("pk",), "true"),
]


@pytest.mark.parametrize(("statement", "params", "leading", "attributes", "scans"), SELECT_CASES)
def test_a_select_names_the_partitions_its_plan_reads(
    server: Server,
    statement: str,
    params: tuple[dict[str, Any], ...],
    leading: ConditionValue,
    attributes: tuple[str, ...],
    scans: str,
) -> None:
    table = "Events" if "Events" in statement else "Music"
    projected = "SELECT *" not in statement
    assert keys(server, statement, *params) == ("dynamodb:PartiQLSelect", TABLE + table, {
        LEAD: leading,
        ATTRS: attributes,
        "dynamodb:select": "SPECIFIC_ATTRIBUTES" if projected else "ALL_ATTRIBUTES",
        "dynamodb:fulltablescan": scans,
        "dynamodb:returnconsumedcapacity": "NONE",
    })  # fmt: skip


def test_a_select_on_an_index_names_the_index_partition(server: Server) -> None:
    action, resource, values = keys(server, "SELECT * FROM \"Events\".\"ByV\" WHERE v = 'x' AND pk = 'a'")
    assert resource == TABLE + "Events/index/ByV"
    assert values[LEAD] == ("x",)
    assert values["dynamodb:select"] == "ALL_PROJECTED_ATTRIBUTES"


def test_writes_name_their_one_item_and_what_they_touch(server: Server) -> None:
    update = "UPDATE Music SET a = b + 1 SET c.d = list_append(c.d, [1]) REMOVE e WHERE pk = ? AND f = 2"
    assert keys(server, update + " RETURNING MODIFIED OLD *", {"S": "k"}) == (
        "dynamodb:PartiQLUpdate",
        TABLE + "Music",
        {LEAD: ("k",), ATTRS: ("a", "b", "c", "e", "f", "pk"), "dynamodb:returnvalues": "UPDATED_OLD",
         "dynamodb:returnconsumedcapacity": "NONE"},
    )  # fmt: skip
    action, _, values = keys(server, "DELETE FROM Events WHERE sk = 1 AND pk = 'k' RETURNING ALL OLD *")
    assert (action, values[LEAD], values[ATTRS], values["dynamodb:returnvalues"]) == (
        "dynamodb:PartiQLDelete", ("k",), ("pk", "sk"), "ALL_OLD"
    )  # fmt: skip
    action, _, values = keys(server, "INSERT INTO Music VALUE {'pk': 'k', 'x': 1, 'y': {'z': 2}}")
    assert (action, values[LEAD], values[ATTRS], values["dynamodb:returnvalues"]) == (
        "dynamodb:PartiQLInsert", ("k",), ("pk", "x", "y"), "NONE"
    )  # fmt: skip
    _, _, values = keys(server, "INSERT INTO Music VALUE ?", {"M": {"pk": {"S": "p"}, "q": {"N": "1"}}})
    assert (values[LEAD], values[ATTRS]) == (("p",), ("pk", "q"))


@pytest.mark.parametrize(
    ("statement", "params"),
    [
        ("UPDATE Music SET a = 1 WHERE a = 2", ()),  # no key equality: refused by the operation
        ("UPDATE Events SET a = 1 WHERE pk = 'k'", ()),  # half the key
        ("DELETE FROM Music WHERE pk = ?", ({"BOOL": True},)),  # not a key value
        ("INSERT INTO Music VALUE ?", ({"S": "not a map"},)),
        ("INSERT INTO Music VALUE {'x': 1}", ()),  # no partition key
    ],
)
def test_a_write_whose_key_cannot_be_told_has_unknown_leading_keys(
    server: Server, statement: str, params: tuple[dict[str, Any], ...]
) -> None:
    assert keys(server, statement, *params)[2][LEAD] is UNKNOWN


def test_an_unreadable_value_makes_both_multivalued_keys_unknown(server: Server) -> None:
    values = keys(server, "INSERT INTO Music VALUE {'pk': 'k', 'n': 1e999}")[2]
    assert values[LEAD] is UNKNOWN and values[ATTRS] is UNKNOWN


def test_batch_and_transaction_reads_name_one_full_key(server: Server) -> None:
    select = "SELECT a FROM Events WHERE pk = 'k' AND sk = 1"
    _, _, values = keys(server, select, operation="BatchExecuteStatement")
    assert (values[LEAD], values["dynamodb:fulltablescan"]) == (("k",), "false")
    _, _, values = keys(server, "SELECT * FROM Events WHERE pk = 'k'", operation="BatchExecuteStatement")
    assert values[LEAD] is UNKNOWN  # not a full key: refused by the operation
    _, _, values = keys(server, select, operation="ExecuteTransaction")
    assert values == {
        LEAD: ("k",),
        ATTRS: ("a", "pk", "sk"),
        "dynamodb:select": "SPECIFIC_ATTRIBUTES",
        "dynamodb:fulltablescan": "false",
        "dynamodb:enclosingoperation": "ExecuteTransaction",
    }


def test_transaction_writes_and_exists(server: Server) -> None:
    _, _, values = keys(server, "UPDATE Music SET a = 1 WHERE pk = 'k'", operation="ExecuteTransaction")
    assert values == {LEAD: ("k",), ATTRS: ("a", "pk"), "dynamodb:enclosingoperation": "ExecuteTransaction"}
    action, _, values = keys(server, "EXISTS(SELECT * FROM Music WHERE pk = 'k' AND b = 1)",
                             operation="ExecuteTransaction")  # fmt: skip
    assert (action, values[LEAD], values[ATTRS]) == ("dynamodb:PartiQLSelect", ("k",), ("b", "pk"))


def test_statements_the_operation_refuses_unread_carry_no_check(server: Server) -> None:
    for statement in ("SELECT * FROM", "SELECT * FROM Music WHERE pk = ?", "SELECT * FROM Music WHERE pk = 'a'"):
        req: dict[str, Any] = {"Statement": statement}
        if statement.endswith("'a'"):
            req["Parameters"] = [{"S": "one too many"}]
        assert checks_for("ExecuteStatement", req, server.ctx, server.services) == []


def test_a_missing_table_has_no_leading_keys(server: Server) -> None:
    assert keys(server, "SELECT * FROM Nowhere WHERE pk = 'a'")[2][LEAD] == ()
