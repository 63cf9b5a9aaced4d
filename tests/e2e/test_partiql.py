"""ExecuteStatement end to end through boto3: every statement form, pagination, capacity and DynamoDB's errors."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from tests.e2e.conftest import create_table, create_table_with_gsi, error_of, retrying_throttled, unique_name

VALIDATION = "ValidationException"
NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "


def run(ddb: Any, statement: str, *params: dict[str, Any], **kwargs: Any) -> Any:
    if params:
        kwargs["Parameters"] = list(params)
    response = ddb.execute_statement(Statement=statement, **kwargs)
    response.pop("ResponseMetadata", None)
    return response


def select_all(ddb: Any, statement: str, *params: dict[str, Any], **kwargs: Any) -> tuple[list[Any], int]:
    """Every item of a SELECT, page by page; returns (items, pages)."""
    items: list[Any] = []
    pages = 0
    while True:
        response = run(ddb, statement, *params, **kwargs)
        pages += 1
        items += response["Items"]
        if "NextToken" not in response:
            return items, pages
        kwargs["NextToken"] = response["NextToken"]


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    """pk S + sk N; partitions "a" and "b" hold sk 0..9 with v = sk % 3 and s = "item<sk>"."""
    name = create_table(ddb, "S", "N")
    for pk in ("a", "b"):
        for sk in range(10):
            item = {"pk": {"S": pk}, "sk": {"N": str(sk)}, "v": {"N": str(sk % 3)}, "s": {"S": f"item{sk}"}}
            ddb.put_item(TableName=name, Item=item)
    return name


def sks(items: list[Any]) -> list[int]:
    return [int(item["sk"]["N"]) for item in items]


class TestSelect:
    def test_partition_key_equality_is_a_query_in_sort_order(self, ddb: Any, table: str) -> None:
        response = run(ddb, f'SELECT * FROM "{table}" WHERE pk = ?', {"S": "a"})
        assert sks(response["Items"]) == list(range(10))
        assert response["Items"][3] == {"pk": {"S": "a"}, "sk": {"N": "3"}, "v": {"N": "0"}, "s": {"S": "item3"}}

    def test_sort_key_conditions(self, ddb: Any, table: str) -> None:
        base = f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND "
        assert sks(run(ddb, base + "sk > 6")["Items"]) == [7, 8, 9]
        assert sks(run(ddb, base + "sk <= 1")["Items"]) == [0, 1]
        assert sks(run(ddb, base + "sk BETWEEN 2 AND 4")["Items"]) == [2, 3, 4]
        assert sks(run(ddb, base + "3 = sk")["Items"]) == [3]

    def test_begins_with_on_a_string_sort_key(self, ddb: Any) -> None:
        name = create_table(ddb, "S", "S")
        for sk in ("apple", "apricot", "banana"):
            ddb.put_item(TableName=name, Item={"pk": {"S": "p"}, "sk": {"S": sk}})
        response = run(ddb, f"SELECT sk FROM \"{name}\" WHERE pk = 'p' AND begins_with(sk, 'ap')")
        assert response["Items"] == [{"sk": {"S": "apple"}}, {"sk": {"S": "apricot"}}]

    def test_filters(self, ddb: Any, table: str) -> None:
        base = f"SELECT sk FROM \"{table}\" WHERE pk = 'a' AND "
        assert sks(run(ddb, base + "v = 1")["Items"]) == [1, 4, 7]
        assert sks(run(ddb, base + "(v = 1 OR sk = 0) AND NOT sk IN [4, 7]")["Items"]) == [0, 1]
        assert sks(run(ddb, base + "v BETWEEN 1 AND 2 AND sk < 3")["Items"]) == [1, 2]
        assert sks(run(ddb, base + "(begins_with(s, 'item1') OR contains(s, '9'))")["Items"]) == [1, 9]
        assert sks(run(ddb, base + "size(s) > 5")["Items"]) == []
        assert sks(run(ddb, base + "attribute_type(v, 'N') AND v <> 0")["Items"]) == [1, 2, 4, 5, 7, 8]
        assert sks(run(ddb, base + "nothing IS MISSING AND s IS NOT MISSING AND sk < 2")["Items"]) == [0, 1]

    def test_is_null(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "null1"}, "z": {"NULL": True}})
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "null2"}, "z": {"S": "x"}})
        items = run(ddb, f"SELECT pk FROM \"{table_s}\" WHERE pk IN ['null1', 'null2'] AND z IS NULL")["Items"]
        assert items == [{"pk": {"S": "null1"}}]
        items = run(ddb, f"SELECT pk FROM \"{table_s}\" WHERE pk IN ['null1', 'null2'] AND z IS NOT NULL")["Items"]
        assert items == [{"pk": {"S": "null2"}}]

    def test_projection_of_nested_paths(self, ddb: Any, table_s: str) -> None:
        item = {"pk": {"S": "nested"}, "m": {"M": {"l": {"L": [{"N": "1"}, {"S": "two"}]}, "x": {"S": "y"}}}}
        ddb.put_item(TableName=table_s, Item=item)
        response = run(ddb, f"SELECT m.l[1], m.x, gone FROM \"{table_s}\" WHERE pk = 'nested'")
        assert response["Items"] == [{"m": {"M": {"l": {"L": [{"S": "two"}]}, "x": {"S": "y"}}}}]

    def test_a_condition_off_the_partition_key_scans(self, ddb: Any, table: str) -> None:
        items, _ = select_all(ddb, f'SELECT pk, sk FROM "{table}" WHERE v = 2')
        assert sorted((i["pk"]["S"], int(i["sk"]["N"])) for i in items) == [
            (pk, sk) for pk in ("a", "b") for sk in (2, 5, 8)
        ]
        everything, _ = select_all(ddb, f'SELECT * FROM "{table}"')
        assert len(everything) == 20

    def test_in_and_or_read_several_partitions_and_order_by(self, ddb: Any, table: str) -> None:
        response = run(ddb, f"SELECT pk, sk FROM \"{table}\" WHERE pk IN ['b', 'a'] AND sk < 2 ORDER BY pk DESC")
        assert [(i["pk"]["S"], i["sk"]["N"]) for i in response["Items"]] == [
            ("b", "0"),
            ("b", "1"),
            ("a", "0"),
            ("a", "1"),
        ]
        response = run(ddb, f"SELECT sk FROM \"{table}\" WHERE pk = 'a' OR pk = 'a' ORDER BY sk DESC")
        assert sks(response["Items"]) == list(range(9, -1, -1))

    def test_limit_and_next_token(self, ddb: Any, table: str) -> None:
        first = run(ddb, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", Limit=4)
        assert sks(first["Items"]) == [0, 1, 2, 3]
        assert first["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "3"}}
        second = run(ddb, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", Limit=4, NextToken=first["NextToken"])
        assert sks(second["Items"]) == [4, 5, 6, 7]
        items, pages = select_all(ddb, f"SELECT * FROM \"{table}\" WHERE pk IN ['a', 'b'] AND v = 0", Limit=3)
        assert [(i["pk"]["S"], int(i["sk"]["N"])) for i in items] == [
            (pk, sk) for pk in ("a", "b") for sk in (0, 3, 6, 9)
        ]
        assert pages == 7  # 3 items read per page: 20 items are 7 pages, the last one ending the read

    def test_pages_stop_at_one_megabyte(self, ddb: Any) -> None:
        name = create_table(ddb, "S", "N")
        blob = "x" * 100_000
        for sk in range(25):
            item = {"pk": {"S": "big"}, "sk": {"N": str(sk)}, "b": {"S": blob}}
            retrying_throttled(partial(ddb.put_item, TableName=name, Item=item))  # 2.5 MB in one partition
        first = run(ddb, f"SELECT sk FROM \"{name}\" WHERE pk = 'big'")
        assert len(first["Items"]) == 11  # 11 items of ~100 KB reach 1 MB
        items, pages = select_all(ddb, f"SELECT sk FROM \"{name}\" WHERE pk = 'big'")
        assert (len(items), pages) == (25, 3)

    def test_consumed_capacity_of_a_query_and_a_scan(self, ddb: Any, table: str) -> None:
        response = run(ddb, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", ReturnConsumedCapacity="TOTAL")
        assert response["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5}
        response = run(
            ddb, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", ConsistentRead=True, ReturnConsumedCapacity="INDEXES"
        )
        assert response["ConsumedCapacity"] == {
            "TableName": table,
            "CapacityUnits": 1.0,
            "Table": {"CapacityUnits": 1.0},
        }
        query = ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "a"}},
            ReturnConsumedCapacity="TOTAL",
        )
        assert query["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5}

    def test_a_global_secondary_index(self, ddb: Any) -> None:
        name = create_table_with_gsi(ddb, "KEYS_ONLY")
        for pk in ("x", "y", "z"):
            ddb.put_item(TableName=name, Item={"pk": {"S": pk}, "g": {"S": "G"}, "other": {"S": pk}})
        run(ddb, f"INSERT INTO \"{name}\" VALUE {{'pk': 'w', 'g': 'G'}}")  # indexed as PutItem's item is
        items = run(ddb, f'SELECT * FROM "{name}"."by_g" WHERE g = \'G\'')["Items"]
        assert sorted(i["pk"]["S"] for i in items) == ["w", "x", "y", "z"]
        assert all(set(i) == {"pk", "g"} for i in items)
        assert error_of(lambda: run(ddb, f'SELECT * FROM "{name}"."by_g" WHERE g = \'G\'', ConsistentRead=True)) == (
            VALIDATION,
            "Strongly consistent read is not supported on Global Secondary Indexes",
        )
        assert error_of(lambda: run(ddb, f'SELECT other FROM "{name}"."by_g" WHERE g = \'G\'')) == (
            VALIDATION,
            "One or more parameter values were invalid: Global secondary index by_g does not project [other]",
        )
        assert error_of(lambda: run(ddb, f"SELECT pk FROM \"{name}\".\"by_g\" WHERE g = 'G' AND other = 'x'")) == (
            VALIDATION,
            "One or more parameter values were invalid: Secondary index by_g does not project one or more filter "
            "attributes: [other]",
        )
        assert error_of(lambda: run(ddb, f'SELECT * FROM "{name}"."nope"')) == (
            VALIDATION,
            "The table does not have the specified index",
        )


class TestWrites:
    def test_insert_then_duplicate(self, ddb: Any, table_sn: str) -> None:
        statement = (
            f'INSERT INTO "{table_sn}" VALUE '
            "{'pk': ?, 'sk': 1, 'n': 1.50, 'ss': <<'a', 'b'>>, 'm': {'k': [TRUE, NULL]}, 'q': 'it''s'}"
        )
        assert run(ddb, statement, {"S": "ins"}) == {"Items": []}
        stored = ddb.get_item(TableName=table_sn, Key={"pk": {"S": "ins"}, "sk": {"N": "1"}})["Item"]
        assert stored == {
            "pk": {"S": "ins"},
            "sk": {"N": "1"},
            "n": {"N": "1.5"},
            "ss": {"SS": ["a", "b"]},
            "m": {"M": {"k": {"L": [{"BOOL": True}, {"NULL": True}]}}},
            "q": {"S": "it's"},
        }
        assert error_of(lambda: run(ddb, statement, {"S": "ins"})) == (
            "DuplicateItemException",
            "Duplicate primary key exists in table",
        )

    def test_update_set_remove_and_returning(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(
            TableName=table_s,
            Item={
                "pk": {"S": "upd"},
                "n": {"N": "5"},
                "ss": {"SS": ["a"]},
                "l": {"L": [{"N": "1"}]},
                "gone": {"S": "x"},
            },
        )
        statement = (
            f"UPDATE \"{table_s}\" SET n = n + 2 SET ss = set_add(ss, <<'b'>>) SET l = list_append(l, [2]) "
            "REMOVE gone WHERE pk = 'upd' RETURNING MODIFIED NEW *"
        )
        assert run(ddb, statement)["Items"] == [
            {"n": {"N": "7"}, "ss": {"SS": ["a", "b"]}, "l": {"L": [{"N": "1"}, {"N": "2"}]}}
        ]
        old = run(ddb, f"UPDATE \"{table_s}\" SET ss = set_delete(ss, <<'a'>>) WHERE pk = 'upd' RETURNING ALL OLD *")
        assert old["Items"][0]["ss"] == {"SS": ["a", "b"]}
        modified_old = run(ddb, f"UPDATE \"{table_s}\" SET n = 1 WHERE pk = 'upd' RETURNING MODIFIED OLD *")
        assert modified_old["Items"] == [{"n": {"N": "7"}}]
        new = run(ddb, f"UPDATE \"{table_s}\" SET n = n - 1 WHERE pk = 'upd' AND n = 1 RETURNING ALL NEW *")
        assert new["Items"] == [
            {"pk": {"S": "upd"}, "n": {"N": "0"}, "ss": {"SS": ["b"]}, "l": {"L": [{"N": "1"}, {"N": "2"}]}}
        ]

    def test_update_conditions(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "cond"}, "n": {"N": "1"}})
        assert error_of(lambda: run(ddb, f"UPDATE \"{table_s}\" SET n = 2 WHERE pk = 'cond' AND n = 5")) == (
            "ConditionalCheckFailedException",
            "The conditional request failed",
        )
        assert error_of(lambda: run(ddb, f"UPDATE \"{table_s}\" SET n = 2 WHERE pk = 'never-written'")) == (
            "ConditionalCheckFailedException",
            "The conditional request failed",
        )
        assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "never-written"}})
        from botocore.exceptions import ClientError

        with pytest.raises(ClientError) as info:
            run(
                ddb,
                f"UPDATE \"{table_s}\" SET n = 2 WHERE pk = 'cond' AND n = 5",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        assert info.value.response["Item"] == {"pk": {"S": "cond"}, "n": {"N": "1"}}

    def test_delete(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "del"}, "n": {"N": "1"}})
        assert error_of(lambda: run(ddb, f"DELETE FROM \"{table_s}\" WHERE pk = 'del' AND n = 2")) == (
            "ConditionalCheckFailedException",
            "The conditional request failed",
        )
        response = run(ddb, f"DELETE FROM \"{table_s}\" WHERE pk = 'del' RETURNING ALL OLD *")
        assert response["Items"] == [{"pk": {"S": "del"}, "n": {"N": "1"}}]
        assert run(ddb, f"DELETE FROM \"{table_s}\" WHERE pk = 'del'") == {"Items": []}
        assert run(ddb, f"DELETE FROM \"{table_s}\" WHERE pk = 'del' RETURNING ALL OLD *") == {"Items": []}
        assert "Item" not in ddb.get_item(TableName=table_s, Key={"pk": {"S": "del"}})

    def test_write_capacity(self, ddb: Any, table_s: str) -> None:
        response = run(
            ddb, f"INSERT INTO \"{table_s}\" VALUE {{'pk': 'cap', 'b': '{'x' * 1500}'}}", ReturnConsumedCapacity="TOTAL"
        )
        assert response["ConsumedCapacity"] == {"TableName": table_s, "CapacityUnits": 2.0}
        response = run(ddb, f"DELETE FROM \"{table_s}\" WHERE pk = 'cap'", ReturnConsumedCapacity="INDEXES")
        assert response["ConsumedCapacity"] == {
            "TableName": table_s,
            "CapacityUnits": 2.0,
            "Table": {"CapacityUnits": 2.0},
        }


class TestErrors:
    @pytest.mark.parametrize(
        ("statement", "message"),
        [
            ('SELECT * FROM "{t}" WHERE', NOT_WELL_FORMED + "Unexpected term"),
            ('SELECT * FROM "{t}" WHERE pk = 1 foo', NOT_WELL_FORMED + "Unexpected token after expression"),
            (
                "SELECT * FROM \"{t}\" WHERE pk = 'a' AND",
                NOT_WELL_FORMED + "Missing right-hand side expression of infix operator",
            ),
            ('SELECT * FROM "{t}" WHERE pk = 1 # note', NOT_WELL_FORMED),
            ("SELECT * FROM \"{t}\" x WHERE pk = 'x'", "Aliasing is not supported"),
            (
                "UPDATE \"{t}\" SET v = 1 WHERE s = 'x'",
                "Where clause does not contain a mandatory equality on all key attributes",
            ),
            (
                "DELETE FROM \"{t}\" WHERE pk = 'a'",
                "Where clause does not contain a mandatory equality on all key attributes",
            ),
            (
                "UPDATE \"{t}\" SET sk = 1 WHERE pk = 'a' AND sk = 1",
                "One or more parameter values were invalid: Cannot update attribute sk. "
                "This attribute is part of the key",
            ),
            ('SELECT * FROM "{t}" ORDER BY sk', "Must have WHERE clause in the statement when using ORDER BY clause."),
            (
                'SELECT * FROM "{t}" WHERE pk = 1e126',
                "Number overflow. Attempting to store a number with magnitude larger than supported range under root",
            ),
            (
                "INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': 1, 'm': {{'x': 1e126}}}}",
                "Number overflow. Attempting to store a number with magnitude larger than supported range"
                " under root.m.x",
            ),
            (
                "UPDATE \"{t}\" SET ss = set_add(ss, <<'x', 'x'>>) WHERE pk = 'a' AND sk = 1",
                "One or more parameter values were invalid: Input collection [x, x] contains duplicates.",
            ),
            ('SELECT * FROM "{t}" WHERE EXISTS(ss)', "Unrecognized function: exists at 1:{col}:6"),
        ],
    )
    def test_statement_errors(self, ddb: Any, table: str, statement: str, message: str) -> None:
        text = statement.format(t=table, col=0)
        if "{col}" in message:
            message = message.format(col=text.index("EXISTS") + 1)
        assert error_of(lambda: run(ddb, text)) == (VALIDATION, message)

    def test_unknown_table(self, ddb: Any) -> None:
        for statement in ('SELECT * FROM "no_such_table"', "INSERT INTO no_such_table VALUE {'pk': 'a'}"):
            assert error_of(lambda s=statement: run(ddb, s)) == (  # type: ignore[misc]
                "ResourceNotFoundException",
                "Requested resource not found",
            )

    def test_parameter_count(self, ddb: Any, table: str) -> None:
        message = (VALIDATION, "Number of parameters in request and statement don't match.")
        assert error_of(lambda: run(ddb, f'SELECT * FROM "{table}" WHERE pk = ?')) == message
        assert error_of(lambda: run(ddb, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", {"S": "a"})) == message

    def test_statement_and_limit_constraints(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: run(ddb, "SELECT * FROM t WHERE a = '" + "x" * 8200 + "'")) == (
            VALIDATION,
            "1 validation error detected: Value at 'Statement' failed to satisfy constraint: Member must have length "
            "less than or equal to 8192",
        )
        assert error_of(lambda: run(ddb, f'SELECT * FROM "{table}"', Limit=0)) == (
            VALIDATION,
            "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value "
            "greater than or equal to 1",
        )

    def test_next_token_of_another_statement(self, ddb: Any, table: str) -> None:
        token = run(ddb, f"SELECT * FROM \"{table}\" WHERE pk = 'a'", Limit=1)["NextToken"]
        for statement in (f"SELECT * FROM \"{table}\" WHERE pk = 'b'", f'SELECT * FROM "{table}"'):
            assert error_of(lambda s=statement: run(ddb, s, NextToken=token)) == (  # type: ignore[misc]
                VALIDATION,
                "The provided NextToken is invalid for this statement",
            )
        assert error_of(lambda: run(ddb, f'SELECT * FROM "{table}"', NextToken="not-a-token")) == (
            VALIDATION,
            "The provided NextToken is invalid for this statement",
        )

    def test_exists_outside_a_transaction(self, ddb: Any, table: str) -> None:
        assert error_of(lambda: run(ddb, f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1 AND v = 1)")) == (
            VALIDATION,
            "EXISTS is supported only within ExecuteTransaction",
        )


class TestChoices:
    """What dynastore does where DynamoDB's documentation is silent (docs/partiql.md "Choices")."""

    def test_not_equal_keeps_items_without_the_attribute(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "ne1"}, "a": {"N": "1"}})
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "ne2"}})
        items = run(ddb, f"SELECT pk FROM \"{table_s}\" WHERE pk IN ['ne1', 'ne2'] AND a <> 1")["Items"]
        assert items == [{"pk": {"S": "ne2"}}]

    def test_in_partitions_in_list_order(self, ddb: Any, table: str) -> None:
        items = run(ddb, f"SELECT pk FROM \"{table}\" WHERE pk IN ['b', 'a', 'b'] AND sk = 0")["Items"]
        assert items == [{"pk": {"S": "b"}}, {"pk": {"S": "a"}}]
        assert error_of(lambda: run(ddb, f'SELECT * FROM "{table}" WHERE v = 1 ORDER BY sk')) == (
            VALIDATION,
            "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause.",
        )
        assert error_of(lambda: run(ddb, f"SELECT * FROM \"{table}\" WHERE pk = 'a' ORDER BY v")) == (
            VALIDATION,
            "Order by is supported only on the key attributes of the table or index read: v",
        )

    def test_insert_of_a_map_parameter(self, ddb: Any, table_s: str) -> None:
        item = {"pk": {"S": "mapped"}, "x": {"N": "1"}}
        assert run(ddb, f'INSERT INTO "{table_s}" VALUE ?', {"M": item}) == {"Items": []}
        assert ddb.get_item(TableName=table_s, Key={"pk": {"S": "mapped"}})["Item"] == item
        assert error_of(lambda: run(ddb, f'INSERT INTO "{table_s}" VALUE ?', {"S": "x"})) == (
            VALIDATION,
            "Unsupported value in INSERT: the item must be a tuple ({...})",
        )

    def test_reserved_words_as_names_in_double_quotes(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "words"}, "value": {"S": "v"}, "set": {"N": "1"}})
        assert error_of(lambda: run(ddb, f"SELECT value FROM \"{table_s}\" WHERE pk = 'words'")) == (
            VALIDATION,
            NOT_WELL_FORMED + "Unexpected keyword",
        )
        items = run(ddb, f'SELECT "value", "set" FROM "{table_s}" WHERE "pk" = \'words\'')["Items"]
        assert items == [{"value": {"S": "v"}, "set": {"N": "1"}}]


@pytest.fixture(scope="module")
def quoted_names(ddb: Any) -> list[str]:
    """Tables named with '-' and '.', each with a GSI named so too."""
    suffix = unique_name("")
    names = [f"my-table{suffix}", f"table.with.dots{suffix}"]
    for name in names:
        ddb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "g")],
            BillingMode="PAY_PER_REQUEST",
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by-g.x",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
        )
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})
    return names


class TestNamesThatNeedQuotes:
    """Table and index names with characters PartiQL's identifiers do not take ('-', '.') are written in double
    quotes, "table"."index" for an index."""

    def test_every_statement_takes_quoted_names(self, ddb: Any, quoted_names: list[str]) -> None:
        for name in quoted_names:
            assert run(ddb, f"INSERT INTO \"{name}\" VALUE {{'pk': 'k', 'g': 'x'}}") == {"Items": []}
            assert run(ddb, f"UPDATE \"{name}\" SET v = 1 WHERE pk = 'k'") == {"Items": []}
            item = {"pk": {"S": "k"}, "g": {"S": "x"}, "v": {"N": "1"}}
            assert run(ddb, f"SELECT * FROM \"{name}\" WHERE pk = 'k'")["Items"] == [item]
            assert run(ddb, f'SELECT * FROM "{name}"."by-g.x" WHERE g = \'x\'')["Items"] == [item]
            assert run(ddb, f"DELETE FROM \"{name}\" WHERE pk = 'k'") == {"Items": []}
            assert run(ddb, f'SELECT * FROM "{name}"')["Items"] == []

    def test_unquoted_names_are_not_well_formed(self, ddb: Any, quoted_names: list[str]) -> None:
        dashed, dotted = quoted_names
        assert error_of(lambda: run(ddb, f"SELECT * FROM {dashed}")) == (
            VALIDATION,
            NOT_WELL_FORMED + "Unexpected token after expression",
        )
        assert error_of(lambda: run(ddb, f"DELETE FROM {dashed} WHERE pk = 'k'")) == (
            VALIDATION,
            NOT_WELL_FORMED + "Unexpected token after expression",
        )
        assert error_of(lambda: run(ddb, f"SELECT * FROM {dotted}")) == (
            VALIDATION,
            "A path may contain at most 2 components in the FROM clause",
        )
        assert error_of(lambda: run(ddb, f'SELECT * FROM "{dotted}".by-g.x')) == (  # BY is a keyword
            VALIDATION,
            NOT_WELL_FORMED + "Expected identifier for simple path",
        )


class TestKeyLookup:
    """``WHERE pk = ?`` on a table without a sort key: one item, at the cost of the Query of its partition."""

    @pytest.mark.parametrize("consistent", [False, True])
    @pytest.mark.parametrize("key", ["look-big", "look-missing"])
    def test_costs_what_the_query_costs(self, ddb: Any, table_s: str, consistent: bool, key: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "look-big"}, "b": {"S": "x" * 9000}})
        select = run(
            ddb, f'SELECT pk FROM "{table_s}" WHERE pk = ?', {"S": key},
            ConsistentRead=consistent, ReturnConsumedCapacity="TOTAL",
        )  # fmt: skip
        query = ddb.query(
            TableName=table_s,
            KeyConditionExpression="pk = :k",
            ExpressionAttributeValues={":k": {"S": key}},
            ProjectionExpression="pk",
            ConsistentRead=consistent,
            ReturnConsumedCapacity="TOTAL",
        )
        assert select["Items"] == query["Items"]
        assert select["ConsumedCapacity"] == query["ConsumedCapacity"]
        assert "NextToken" not in select

    def test_limit_pages_as_the_query_does(self, ddb: Any, table_s: str) -> None:
        ddb.put_item(TableName=table_s, Item={"pk": {"S": "look-limit"}})
        first = run(ddb, f"SELECT * FROM \"{table_s}\" WHERE pk = 'look-limit'", Limit=1)
        assert first["Items"] == [{"pk": {"S": "look-limit"}}]
        assert first["LastEvaluatedKey"] == {"pk": {"S": "look-limit"}}
        last = run(ddb, f"SELECT * FROM \"{table_s}\" WHERE pk = 'look-limit'", Limit=1, NextToken=first["NextToken"])
        assert last == {"Items": []}


def test_a_key_of_another_type(ddb: Any, table_s: str) -> None:
    assert run(ddb, f'SELECT * FROM "{table_s}" WHERE pk = 1') == {"Items": []}
    assert error_of(lambda: run(ddb, f"INSERT INTO \"{table_s}\" VALUE {{'pk': 1}}")) == (
        VALIDATION,
        "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N",
    )
    for statement in (f'UPDATE "{table_s}" SET a = 1 WHERE pk = 1', f'DELETE FROM "{table_s}" WHERE pk = 1'):
        assert error_of(lambda s=statement: run(ddb, s)) == (  # type: ignore[misc]
            VALIDATION,
            "The provided key element does not match the schema",
        )


def test_conditions_of_mismatched_types_are_false_not_errors(ddb: Any, table: str) -> None:
    base = f"SELECT sk FROM \"{table}\" WHERE pk = 'a' AND "
    assert run(ddb, base + "begins_with(v, 'x')")["Items"] == []
    assert run(ddb, base + "v > 'text'")["Items"] == []
    assert run(ddb, base + "contains(v, 1)")["Items"] == []
