"""BatchExecuteStatement and ExecuteTransaction end to end through boto3: per-statement results and errors,
all-or-nothing transactions with EXISTS checks and CancellationReasons, client request tokens, capacity."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import create_table, error_of

VALIDATION = "ValidationException"


@pytest.fixture()
def table(ddb: Any) -> str:
    """pk S + sk N holding (a, 1, v=1) and (a, 2, v=2)."""
    name = create_table(ddb, "S", "N")
    for sk in (1, 2):
        ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"N": str(sk)}, "v": {"N": str(sk)}})
    return name


def get(ddb: Any, table: str, sk: int, pk: str = "a") -> Any:
    return ddb.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"N": str(sk)}}, ConsistentRead=True).get("Item")


def statements(*texts: str | tuple[str, list[Any]]) -> list[dict[str, Any]]:
    out = []
    for text in texts:
        if isinstance(text, tuple):
            out.append({"Statement": text[0], "Parameters": text[1]})
        else:
            out.append({"Statement": text})
    return out


class TestBatch:
    def test_reads_by_key(self, ddb: Any, table: str) -> None:
        response = ddb.batch_execute_statement(
            Statements=statements(
                f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1",
                (f'SELECT v FROM "{table}" WHERE pk = ? AND sk = ?', [{"S": "a"}, {"N": "2"}]),
                f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 3",
                f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 2 AND v = 5",
                f"SELECT * FROM \"{table}\" WHERE pk = 'a'",
                "SELEC nothing",
            ),
            ReturnConsumedCapacity="TOTAL",
        )
        assert response["Responses"] == [
            {"TableName": table, "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "1"}}},
            {"TableName": table, "Item": {"v": {"N": "2"}}},
            {"TableName": table},
            {"TableName": table},
            {
                "Error": {
                    "Code": "ValidationError",
                    "Message": "Select statements within BatchExecuteStatement must specify the primary key in the "
                    "where clause.",
                }
            },
            {
                "Error": {
                    "Code": "ValidationError",
                    "Message": "Statement wasn't well formed, can't be processed: Expected data manipulation",
                }
            },
        ]
        assert response["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0}]

    def test_writes_each_on_its_own(self, ddb: Any, table: str) -> None:
        response = ddb.batch_execute_statement(
            Statements=[
                {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'b', 'sk': 1}}"},
                {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'a', 'sk': 1}}"},
                {"Statement": f"UPDATE \"{table}\" SET v = 10 WHERE pk = 'a' AND sk = 2"},
                {
                    "Statement": f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 1 AND v = 99",
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                },
                {"Statement": "INSERT INTO \"no_such_table\" VALUE {'pk': 'b'}"},
                {"Statement": f'UPDATE "{table}" SET v = 1 WHERE pk = ?', "Parameters": [{"S": "a"}, {"S": "b"}]},
            ]
        )
        assert response["Responses"] == [
            {"TableName": table},
            {"Error": {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}},
            {"TableName": table},
            {
                "Error": {
                    "Code": "ConditionalCheckFailed",
                    "Message": "The conditional request failed",
                    "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "1"}},
                }
            },
            {"Error": {"Code": "ResourceNotFound", "Message": "Requested resource not found"}},
            {
                "Error": {
                    "Code": "ValidationError",
                    "Message": "Number of parameters in request and statement don't match.",
                }
            },
        ]
        assert get(ddb, table, 1, "b") == {"pk": {"S": "b"}, "sk": {"N": "1"}}
        assert get(ddb, table, 2)["v"] == {"N": "10"}
        assert get(ddb, table, 1) is not None

    def test_reads_and_writes_do_not_mix(self, ddb: Any, table: str) -> None:
        assert error_of(
            lambda: ddb.batch_execute_statement(
                Statements=statements(
                    f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1",
                    f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 1",
                )
            )
        ) == (VALIDATION, "BatchExecuteStatement does not support both read and write operations in the same request.")
        assert get(ddb, table, 1) is not None

    def test_at_most_25_statements(self, ddb: Any, table: str) -> None:
        code, message = error_of(
            lambda: ddb.batch_execute_statement(
                Statements=statements(*[f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = {i}" for i in range(26)])
            )
        )
        assert code == VALIDATION
        assert message == (
            "1 validation error detected: Value at 'Statements' failed to satisfy constraint: Member must have length "
            "less than or equal to 25"
        )


class TestTransaction:
    def test_writes_all_or_nothing(self, ddb: Any, table: str) -> None:
        ddb.execute_transaction(
            TransactStatements=statements(
                f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1 AND v = 1)",
                (f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'sk': 5}}", [{"S": "a"}]),
                f"UPDATE \"{table}\" SET v = v + 1 WHERE pk = 'a' AND sk = 2",
            )
        )
        assert get(ddb, table, 5) == {"pk": {"S": "a"}, "sk": {"N": "5"}}
        assert get(ddb, table, 2)["v"] == {"N": "3"}
        with pytest.raises(ClientError) as info:
            ddb.execute_transaction(
                TransactStatements=statements(
                    f"DELETE FROM \"{table}\" WHERE pk = 'a' AND sk = 2",
                    f"INSERT INTO \"{table}\" VALUE {{'pk': 'a', 'sk': 5}}",
                    f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1 AND v = 7)",
                    f"UPDATE \"{table}\" SET v = 1 WHERE pk = 'a' AND sk = 9",
                )
            )
        error = info.value.response
        assert error["Error"]["Code"] == "TransactionCanceledException"
        assert error["Error"]["Message"] == (
            "Transaction cancelled, please refer cancellation reasons for specific reasons "
            "[None, DuplicateItem, ConditionalCheckFailed, ConditionalCheckFailed]"
        )
        assert error["CancellationReasons"] == [
            {"Code": "None"},
            {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"},
            {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
            {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
        ]
        assert get(ddb, table, 2) is not None  # the delete was not kept

    def test_return_values_on_condition_check_failure(self, ddb: Any, table: str) -> None:
        with pytest.raises(ClientError) as info:
            ddb.execute_transaction(
                TransactStatements=[
                    {
                        "Statement": f"UPDATE \"{table}\" SET v = 0 WHERE pk = 'a' AND sk = 1 AND v = 5",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                ]
            )
        assert info.value.response["CancellationReasons"] == [
            {
                "Code": "ConditionalCheckFailed",
                "Message": "The conditional request failed",
                "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "1"}},
            }
        ]

    def test_reads(self, ddb: Any, table: str) -> None:
        response = ddb.execute_transaction(
            TransactStatements=statements(
                f"SELECT v FROM \"{table}\" WHERE pk = 'a' AND sk = 1",
                f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 3",
                f"SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 2 AND v IS MISSING",
            ),
            ReturnConsumedCapacity="TOTAL",
        )
        assert response["Responses"] == [{"Item": {"v": {"N": "1"}}}, {}, {}]
        assert response["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 6.0}]

    def test_capacity_of_writes(self, ddb: Any, table: str) -> None:
        response = ddb.execute_transaction(
            TransactStatements=statements(
                f"UPDATE \"{table}\" SET w = 1 WHERE pk = 'a' AND sk = 1",
                f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 2 AND v = 2)",
            ),
            ReturnConsumedCapacity="TOTAL",
        )
        assert response["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 4.0}]

    @pytest.mark.parametrize(
        ("texts", "message"),
        [
            (
                ["SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1", "DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1"],
                "ExecuteTransaction API does not support both read and write operations in the same request.",
            ),
            (
                ['SELECT * FROM "{t}" WHERE'],
                "Validation failed in TransactStatements[0]: Statement wasn't well formed, can't be processed: "
                "Unexpected term",
            ),
            (
                ["SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1", "SELECT * FROM \"{t}\" WHERE pk = 'a'"],
                "Validation failed in TransactStatements[1]: Select statements within ExecuteTransaction must specify "
                "the primary key in the where clause.",
            ),
            (
                ['SELECT * FROM "{t}"."idx" WHERE pk = \'a\' AND sk = 1'],
                "Validation failed in TransactStatements[0]: Reads on indices are not supported within transactions.",
            ),
            (
                [
                    "EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1)",
                    "DELETE FROM \"{t}\" WHERE pk = 'b' AND sk = 1",
                ],
                "Validation failed in TransactStatements[0]: EXISTS() must contain a single item read with additional "
                "condition",
            ),
            (
                ["DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1", "UPDATE \"{t}\" SET v = 1 WHERE pk = 'a' AND sk = 1"],
                "Transaction request cannot include multiple operations on one item",
            ),
            (
                ["DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *"],
                "Validation failed in TransactStatements[0]: RETURNING is not supported within ExecuteTransaction",
            ),
        ],
    )
    def test_refused(self, ddb: Any, table: str, texts: list[str], message: str) -> None:
        transact = statements(*[text.format(t=table) for text in texts])
        assert error_of(lambda: ddb.execute_transaction(TransactStatements=transact)) == (VALIDATION, message)
        assert get(ddb, table, 1) is not None

    def test_client_request_token(self, ddb: Any, table: str) -> None:
        transact = statements(f"UPDATE \"{table}\" SET v = v + 1 WHERE pk = 'a' AND sk = 1")
        ddb.execute_transaction(TransactStatements=transact, ClientRequestToken="token-1")
        ddb.execute_transaction(TransactStatements=transact, ClientRequestToken="token-1")
        assert get(ddb, table, 1)["v"] == {"N": "2"}  # the repeat ran nothing
        other = statements(f"UPDATE \"{table}\" SET v = 0 WHERE pk = 'a' AND sk = 1")
        assert error_of(lambda: ddb.execute_transaction(TransactStatements=other, ClientRequestToken="token-1")) == (
            "IdempotentParameterMismatchException",
            "Specified idempotent token was used with different request parameters within the idempotency window",
        )

    def test_unknown_table(self, ddb: Any) -> None:
        transact = statements("DELETE FROM \"no_such_table\" WHERE pk = 'a'")
        assert error_of(lambda: ddb.execute_transaction(TransactStatements=transact)) == (
            "ResourceNotFoundException",
            "Requested resource not found",
        )


def test_exists_in_a_batch_and_the_answer_of_a_write_transaction(ddb: Any, table: str) -> None:
    response = ddb.batch_execute_statement(
        Statements=statements(f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = 'a' AND sk = 1 AND v = 1)")
    )
    assert response["Responses"] == [
        {"Error": {"Code": "ValidationError", "Message": "EXISTS is supported only within ExecuteTransaction"}}
    ]
    answer = ddb.execute_transaction(
        TransactStatements=statements(f"UPDATE \"{table}\" SET w = 1 WHERE pk = 'a' AND sk = 1")
    )
    answer.pop("ResponseMetadata")
    assert answer == {}
