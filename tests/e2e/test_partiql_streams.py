"""PartiQL writes reach a table's stream as the JSON API's do: INSERT, UPDATE and DELETE (alone, in a batch, in a
transaction) write INSERT, MODIFY and REMOVE records with the same images."""

from __future__ import annotations

from typing import Any

from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.stream_reader import stream_records, stream_table

server = server_fixture("--manual-clock")


def test_statements_write_stream_records(server: ServerProcess) -> None:
    name, arn = stream_table(server)
    ddb = server.ddb
    ddb.execute_statement(Statement=f"INSERT INTO \"{name}\" VALUE {{'pk': 'a', 'v': '1'}}")
    ddb.execute_statement(Statement=f"UPDATE \"{name}\" SET v = '2' WHERE pk = 'a'")
    ddb.execute_statement(Statement=f"UPDATE \"{name}\" SET v = '2' WHERE pk = 'a'")  # changes nothing: no record
    ddb.batch_execute_statement(Statements=[{"Statement": f"INSERT INTO \"{name}\" VALUE {{'pk': 'b'}}"}])
    ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"DELETE FROM \"{name}\" WHERE pk = 'a'"},
            {"Statement": f"UPDATE \"{name}\" SET w = 'x' WHERE pk = 'b'"},
        ]
    )
    records: list[dict[str, Any]] = stream_records(server, arn)
    by_key: dict[str, list[dict[str, Any]]] = {}
    for record in records:  # each key's records in order (keys may sit in different shards)
        by_key.setdefault(record["dynamodb"]["Keys"]["pk"]["S"], []).append(record)
    assert {key: [r["eventName"] for r in rs] for key, rs in by_key.items()} == {
        "a": ["INSERT", "MODIFY", "REMOVE"],
        "b": ["INSERT", "MODIFY"],
    }
    modify, remove = by_key["a"][1:]
    assert modify["dynamodb"]["OldImage"] == {"pk": {"S": "a"}, "v": {"S": "1"}}
    assert modify["dynamodb"]["NewImage"] == {"pk": {"S": "a"}, "v": {"S": "2"}}
    assert remove["dynamodb"]["OldImage"] == {"pk": {"S": "a"}, "v": {"S": "2"}}
