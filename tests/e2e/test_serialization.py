"""The validation matrix end to end.

Phase 1: for every member of the PutItem, GetItem, UpdateItem, DeleteItem and CreateTable request shapes
(``api/schemas.py``), the wrong JSON types of that member, sent as raw HTTP (boto3 would serialise them away),
must give a SerializationException with DynamoDB's Java-flavoured text. The expected texts come from the rules
below (dynalite's ``assertType`` matrix, which was checked against DynamoDB), not from the server's code.

Phase 2: several constraint failures in one request, through boto3, in the "N validation errors detected" format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from dynastore.api import schemas
from dynastore.validation import shapes
from tests.e2e.conftest import Send, error_of

MODEL = "com.amazonaws.dynamodb.v20120810."
SERIALIZATION = "com.amazon.coral.service#SerializationException"
CAST = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class java.lang.Class "
    "(sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in module java.base "
    "of loader 'bootstrap')"
)
STRUCT_NOT_EXPECTED = "Start of structure or map found where not expected"
AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)


# --- a shape tree, independent of the server's validation code ------------------------------------------------
@dataclass
class Node:
    kind: str  # String | Boolean | Long | Integer | Blob | List | Map | Struct
    java: str = ""  # the Java class named in "Unrecognized collection type" texts
    children: list[tuple[str | int, Node]] = field(default_factory=list)


def attribute_value(depth: int) -> Node:
    """AttributeValue as a structure; its nested L / M members are expanded one level only."""
    node = Node("Struct", MODEL + "AttributeValue")
    if depth > 1:
        return node
    string, boolean, blob = Node("String", "java.lang.String"), Node("Boolean", "java.lang.Boolean"), Node("Blob")
    node.children = [
        ("S", string),
        ("N", string),
        ("B", blob),
        ("SS", Node("List", children=[(0, string)])),
        ("NS", Node("List", children=[(0, string)])),
        ("BS", Node("List", children=[(0, blob)])),
        ("M", Node("Map", children=[("a", attribute_value(depth + 1))])),
        ("L", Node("List", children=[(0, attribute_value(depth + 1))])),
        ("NULL", boolean),
        ("BOOL", boolean),
    ]
    return node


def to_node(shape: shapes.Shape, expand_values: bool, seen: set[str]) -> Node:
    """The node of ``shape``; a structure met before is not expanded again (it shares its shape, and so its
    texts), which keeps the matrix to a few hundred cases."""
    if isinstance(shape, shapes.String | shapes.Enum):
        return Node("String", "java.lang.String")
    if isinstance(shape, shapes.Boolean):
        return Node("Boolean", "java.lang.Boolean")
    if isinstance(shape, shapes.Long):
        return Node("Long", "java.lang.Long")
    if isinstance(shape, shapes.Integer):
        return Node("Integer", "java.lang.Integer")
    if isinstance(shape, shapes.Blob):
        return Node("Blob")
    if isinstance(shape, shapes.AttrValue):
        return attribute_value(1) if expand_values else Node("Struct", MODEL + "AttributeValue")
    if isinstance(shape, shapes.List):
        return Node("List", children=[(0, to_node(shape.member, expand_values, seen))])
    if isinstance(shape, shapes.Map):
        return Node("Map", children=[("a", to_node(shape.value, expand_values, seen))])
    assert isinstance(shape, shapes.Struct)
    node = Node("Struct", MODEL + shape.name)
    if shape.name in seen:
        return node
    seen.add(shape.name)
    node.children = [(name, to_node(member, expand_values and name == "Item", seen)) for name, member in shape.members]
    return node


# --- DynamoDB's phase-1 texts per expected type -----------------------------------------------------------------
def wrong_values(node: Node, in_value: bool, top: bool) -> list[tuple[Any, str]]:
    """(wrong JSON value, DynamoDB's message) pairs for a member of this type in this position.

    Top-level members get every wrong JSON type; nested members one value per distinct message.
    """
    if node.kind in ("String", "Boolean", "Long", "Integer"):
        simple = node.java.rsplit(".", 1)[1]
        out: list[tuple[Any, str]] = [
            ([], f"Unrecognized collection type class {node.java}"),
            ({}, STRUCT_NOT_EXPECTED),
        ]
        if node.kind == "Boolean":
            out += [
                (23, "NUMBER_VALUE cannot be converted to Boolean"),
                ("23", "Unexpected token received from parser"),
            ]
            if top:
                out.append((34.56, "DECIMAL_VALUE cannot be converted to Boolean"))
        else:
            out.append((True, f"TRUE_VALUE cannot be converted to {simple}"))
            if top and node.kind != "String":
                out.append((False, f"FALSE_VALUE cannot be converted to {simple}"))
        if node.kind == "String":
            out.append((23, "NUMBER_VALUE cannot be converted to String"))
            if top:
                out.append((34.56, "DECIMAL_VALUE cannot be converted to String"))
        if node.kind in ("Long", "Integer"):
            out.append(("23", f"STRING_VALUE cannot be converted to {simple}"))
        return out
    if node.kind == "Blob":
        return [
            (True, "only base-64-encoded strings are convertible to bytes"),
            ([], "Unrecognized collection type class java.nio.ByteBuffer"),
            ({}, STRUCT_NOT_EXPECTED),
            ("23456", "Base64 encoded length is expected a multiple of 4 bytes but found: 5"),
            ("234567", "Base64 encoded length is expected a multiple of 4 bytes but found: 6"),
        ]
    scalar_text = {
        "List": CAST if in_value else "Unexpected field type",
        "Map": CAST if in_value else "Unexpected field type",
        "Struct": "Unexpected value type in payload" if in_value else "Unexpected field type",
    }[node.kind]
    out = [("23", scalar_text), (23 if top else True, scalar_text)]
    if node.kind == "List":
        out.append(({}, STRUCT_NOT_EXPECTED))
    elif node.kind == "Map":
        value = node.children[0][1]
        out.append(([], f"Unrecognized collection type java.util.Map<java.lang.String, {value.java}>"))
    else:
        out.append(([], f"Unrecognized collection type class {node.java}"))
    return out


def walk(node: Node, path: tuple[str | int, ...], in_value: bool) -> Any:
    """Every (path, node, in_value) below a structure."""
    for key, child in node.children:
        child_in_value = node.kind in ("List", "Map")
        yield (*path, key), child, child_in_value
        yield from walk(child, (*path, key), child_in_value)


def build(path: tuple[str | int, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        return [build(rest, value)]
    return {head: build(rest, value)}


def render(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path)


OPERATIONS = {
    "PutItem": schemas.PUT_ITEM,
    "GetItem": schemas.GET_ITEM,
    "UpdateItem": schemas.UPDATE_ITEM,
    "DeleteItem": schemas.DELETE_ITEM,
    "CreateTable": schemas.CREATE_TABLE,
}


def cases() -> list[Any]:
    out = []
    seen: set[str] = set()  # a structure shared by several operations is expanded in the first one only
    for op, shape in OPERATIONS.items():
        root = to_node(shape, True, seen)
        for path, node, in_value in walk(root, (), False):
            for value, message in wrong_values(node, in_value, len(path) == 1):
                case_id = f"{op}:{render(path)}={json.dumps(value)}"
                out.append(pytest.param(op, build(path, value), message, id=case_id))
    return out


CASES = cases()


def test_matrix_stays_small() -> None:
    assert 200 <= len(CASES) <= 500


class Raw:
    def __init__(self, send: Send) -> None:
        self.send = send

    def call(self, target: str, payload: Any) -> tuple[int, Any]:
        headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"DynamoDB_20120810.{target}",
            "X-Amz-Date": "20260101T000000Z",
            "Authorization": AUTH,
        }
        status, body = self.send("POST", "/", json.dumps(payload).encode(), headers)
        return status, json.loads(body)


@pytest.fixture(scope="module")
def raw(send: Send) -> Raw:
    return Raw(send)


class TestSerialization:
    @pytest.mark.parametrize(("op", "body", "message"), CASES)
    def test_wrong_json_type(self, raw: Raw, op: str, body: dict[str, Any], message: str) -> None:
        status, response = raw.call(op, body)
        assert (status, response) == (400, {"__type": SERIALIZATION, "Message": message})


class TestValidation:
    """Phase 2 through boto3: every constraint failure, in member order, at most ten, one message."""

    def test_put_item_several_errors(self, ddb: Any) -> None:
        code, message = error_of(
            lambda: ddb.put_item(
                TableName="a;",
                ReturnConsumedCapacity="ALL",
                ConditionalOperator="XOR",
                ReturnValues="SOME",
                ReturnItemCollectionMetrics="FULL",
                ReturnValuesOnConditionCheckFailure="NEW",
            )
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: Member must satisfy "
            "regular expression pattern: [a-zA-Z0-9_.-]+"
        )

    def test_only_the_first_failure_is_reported(self, ddb: Any) -> None:
        # The older form listed 10 of the 12 (docs/operations.md "Validation messages"); the new one the first
        expected = {f"k{n}": {"ComparisonOperator": "NEAR"} for n in range(12)}
        code, message = error_of(lambda: ddb.put_item(TableName="abc", Item={}, Expected=expected))
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'Expected.k0.member.ComparisonOperator' failed to satisfy "
            "constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, "
            "NE, LE, BEGINS_WITH, GE, CONTAINS]"
        )

    def test_get_item_errors(self, ddb: Any) -> None:
        code, message = error_of(
            lambda: ddb.get_item(TableName="a" * 256, AttributesToGet=[], ReturnConsumedCapacity="SOME")
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'TableName' failed to satisfy constraint: "
            "Member must have length less than or equal to 255"
        )

    def test_update_item_nested_errors(self, ddb: Any) -> None:
        code, message = error_of(
            lambda: ddb.update_item(
                TableName="abc",
                Key={},
                ReturnValues="EVERYTHING",
                AttributeUpdates={"a": {"Action": "MULTIPLY"}, "b": {"Action": "ADD"}},
            )
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'AttributeUpdates.a.member.Action' failed to satisfy "
            "constraint: Member must satisfy enum value set: [ADD, PUT, DELETE]"
        )

    def test_delete_item_single_error(self, ddb: Any) -> None:
        assert error_of(lambda: ddb.delete_item(TableName="abc")) == (
            "ValidationException",
            "1 validation error detected: Value at 'Key' failed to satisfy constraint: Member must not be null",
        )

    def test_create_table_key_schema_errors(self, ddb: Any) -> None:
        code, message = error_of(
            lambda: ddb.create_table(
                TableName="abc",
                AttributeDefinitions=[],
                KeySchema=[{"KeyType": "HASH"}, {"AttributeName": "a"}, {"KeyType": "Woop", "AttributeName": "a"}],
                ProvisionedThroughput={"ReadCapacityUnits": 1000000000001, "WriteCapacityUnits": 1000000000001},
            )
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'KeySchema' failed to satisfy constraint: "
            "Member must have length less than or equal to 2"
        )

    def test_create_table_throughput_and_names(self, ddb: Any) -> None:
        code, message = error_of(
            lambda: ddb.create_table(
                TableName="abc",
                AttributeDefinitions=[{"AttributeName": "a", "AttributeType": "SS"}],
                KeySchema=[{"AttributeName": "a", "KeyType": "HASH"}],
                ProvisionedThroughput={"ReadCapacityUnits": -1, "WriteCapacityUnits": 0},
                BillingMode="FREE",
            )
        )
        assert code == "ValidationException"
        assert message == (
            "1 validation error detected: Value at 'AttributeDefinitions.1.member.AttributeType' failed to "
            "satisfy constraint: Member must satisfy enum value set: [B, N, S]"
        )

    def test_serialization_wins_over_constraints(self, raw: Raw) -> None:
        status, response = raw.call("PutItem", {"TableName": "a;", "ReturnValues": 5})
        assert (status, response) == (
            400,
            {"__type": SERIALIZATION, "Message": "NUMBER_VALUE cannot be converted to String"},
        )


class TestNullMembers:
    """A JSON null inside a list or map of structures is read as an empty one: a 400, never a crash."""

    @pytest.mark.parametrize(
        ("op", "body", "message"),
        [
            (
                "BatchGetItem",
                {"RequestItems": {"{table}": {"Keys": [None]}}},
                "The provided key element does not match the schema",
            ),
            (
                "TransactGetItems",
                {"TransactItems": [None]},
                "1 validation error detected: Value at 'TransactItems.1.member.Get' failed to satisfy constraint: "
                "Member must not be null",
            ),
            (
                "TransactWriteItems",
                {"TransactItems": [None]},
                "1 validation error detected: "
                "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request",
            ),
            (
                "Query",
                {"TableName": "{table}", "KeyConditions": {"pk": None}},
                "1 validation error detected: Value at 'KeyConditions.pk.member.ComparisonOperator' failed to "
                "satisfy constraint: Member must not be null",
            ),
            (
                "PutItem",
                {"TableName": "{table}", "Item": {"pk": {"S": "null-members"}}, "Expected": {"a": None}},
                "1 validation error detected: One or more parameter values were invalid: Value must be provided "
                "when Exists is null for Attribute: a",
            ),
            (
                "UpdateTable",
                {"TableName": "{table}", "GlobalSecondaryIndexUpdates": [None]},
                "One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, "
                "GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null",
            ),
        ],
    )
    def test_null_member(self, raw: Raw, ddb: Any, table_s: str, op: str, body: dict[str, Any], message: str) -> None:
        payload = json.loads(json.dumps(body).replace("{table}", table_s))
        status, response = raw.call(op, payload)
        assert (status, response["__type"].split("#")[-1], response["message"]) == (
            400,
            "ValidationException",
            message,
        )
        assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "null-members"}}, ConsistentRead=True)
