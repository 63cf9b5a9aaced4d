"""A seeded fuzz run of PartiQL: valid statements, mutated copies of them and random parameters thrown at
ExecuteStatement, BatchExecuteStatement and ExecuteTransaction. Every answer is 200 or 400 with a typed error,
and the server keeps serving."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from tests.e2e.conftest import Send, create_table

AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)
SEEDS = [
    "SELECT * FROM {t} WHERE pk = ? AND sk > ?",
    "SELECT a, m.b[0], \"c\" FROM {t} WHERE pk IN ['x', 'y'] AND begins_with(s, 'p') ORDER BY sk DESC",
    "SELECT * FROM {t} WHERE a BETWEEN 1 AND 5 OR NOT (b IS MISSING) AND size(c) >= 2",
    "SELECT * FROM {t}.\"idx\" WHERE contains(ss, 'q') AND attribute_type(n, 'N')",
    "INSERT INTO {t} VALUE {{'pk': ?, 'sk': 1, 'l': [1, 'two', <<'a'>>], 'm': {{'x': NULL, 'y': TRUE}}}}",
    "UPDATE {t} SET a = a + 1 SET l = list_append(l, [2]) SET ss = set_add(ss, <<'z'>>) REMOVE m.x "
    "WHERE pk = 'x' AND sk = 1 RETURNING ALL NEW *",
    "DELETE FROM {t} WHERE pk = 'x' AND sk = ? AND a <> 3 RETURNING ALL OLD *",
    "EXISTS(SELECT * FROM {t} WHERE pk = 'x' AND sk = 1 AND a = 1)",
]
PIECES = [
    "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "IS", "MISSING", "NULL", "(", ")", "[", "]", "{", "}",
    "<<", ">>", "'", '"', "?", ",", ".", "*", "=", "<>", "<", ">=", "1e999", "-", "+", "--", "/*", "'x'", "0",
    "ORDER BY", "RETURNING", "SET", "REMOVE", "VALUE", "set_add(", "size(", ";", "\n", "\u00e9", "x" * 300,
]  # fmt: skip
VALUES = [
    {"S": "x"}, {"N": "1"}, {"N": "1e999"}, {"N": "abc"}, {"B": "AAE="}, {"BOOL": True}, {"NULL": True},
    {"SS": ["a", "a"]}, {"NS": []}, {"L": [{"S": "x"}]}, {"M": {"pk": {"S": "x"}}}, {"S": ""}, {"X": "1"}, "bare", 5,
]  # fmt: skip


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        choice = rng.random()
        if choice < 0.3:
            text = text[:at] + text[at + rng.randint(1, 6) :]
        elif choice < 0.7:
            text = text[:at] + rng.choice(PIECES) + text[at:]
        elif choice < 0.85:
            text = text[:at]
        else:
            text = text[at:] + " " + text[:at]
    return text


def statement(rng: random.Random, table: str) -> dict[str, Any]:
    text = rng.choice(SEEDS).format(t=f'"{table}"')
    if rng.random() < 0.6:
        text = mutate(rng, text)
    entry: dict[str, Any] = {"Statement": text or " "}
    if rng.random() < 0.8:
        entry["Parameters"] = [rng.choice(VALUES) for _ in range(rng.randint(0, 3))]
    return entry


def test_partiql_fuzz_run(send: Send, ddb: Any) -> None:
    table = create_table(ddb, "S", "N")
    rng = random.Random(20261124)
    statuses: Counter[int] = Counter()
    failures: list[tuple[str, Any, int, bytes]] = []
    for _ in range(600):
        roll = rng.random()
        if roll < 0.6:
            target, payload = "ExecuteStatement", statement(rng, table)
            if rng.random() < 0.2:
                payload["NextToken"] = rng.choice(["x", "eyJmIjoiMSIsInAiOjAsImsiOm51bGx9", "=" * 8])
            if rng.random() < 0.2:
                payload["Limit"] = rng.choice([0, 1, 5, -1, "x"])
        elif roll < 0.8:
            target = "BatchExecuteStatement"
            payload = {"Statements": [statement(rng, table) for _ in range(rng.randint(0, 4))]}
        else:
            target = "ExecuteTransaction"
            payload = {"TransactStatements": [statement(rng, table) for _ in range(rng.randint(0, 4))]}
            if rng.random() < 0.3:
                payload["ClientRequestToken"] = rng.choice(["t1", "t2", ""])
        headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"DynamoDB_20120810.{target}",
            "X-Amz-Date": "20260101T000000Z",
            "Authorization": AUTH,
        }
        status, body = send("POST", "/", json.dumps(payload).encode(), headers)
        statuses[status] += 1
        if status not in (200, 400) or (status == 400 and "__type" not in json.loads(body)):
            failures.append((target, payload, status, body))
    assert failures == []
    assert statuses[200] > 40 and statuses[400] > 200  # the run reaches the engine, not only the parser
    assert ddb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"
