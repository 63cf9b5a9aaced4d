"""A seeded fuzz run of PartiQL: valid statements, mutated copies of them and random parameters thrown at
ExecuteStatement, BatchExecuteStatement and ExecuteTransaction. Every answer is 200 or 400 with a typed error,
and the server keeps serving. A second run signs as users whose policy keeps them to their own partition key
(``dynamodb:LeadingKeys``): no statement reads or changes another user's item."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import BOTO_CONFIG, Send, create_table
from tests.e2e.server_process import ServerProcess
from tests.fuzz import partiql_access

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


# ---- under a LeadingKeys policy ------------------------------------------------------------------------------

REGION = "us-east-1"
ACCOUNT = "111111111111"
TENANT_TABLE = "Tenants"
TENANT_ARN = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{TENANT_TABLE}"
PARTIQL_ACTIONS = ["dynamodb:PartiQLSelect", "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate",
                   "dynamodb:PartiQLDelete"]  # fmt: skip
# Each restricted user's policy: AWS's usual set-operator form, and the single-valued operator IAM warns about.
OWN_KEY_POLICIES = {
    "alice": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:userid}"]}},
    "bob": {"StringEquals": {"dynamodb:LeadingKeys": "${aws:userid}"}},
}


def _run_cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "dynastore", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict[str, dict[str, str]]]]:
    """A server with --auth sigv4: ``builder`` may do anything, ``alice`` and ``bob`` only PartiQL on their own
    partition (the resource covers the table and its indexes)."""
    folder = tmp_path_factory.mktemp("partiql-access")
    store, policies = folder / "credentials.json", folder / "policies.json"
    keys: dict[str, dict[str, str]] = {}
    documents: dict[str, list[dict[str, Any]]] = {"builder": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    for user, condition in OWN_KEY_POLICIES.items():
        resources = [TENANT_ARN, TENANT_ARN + "/index/*"]
        documents[user] = [
            {"Effect": "Allow", "Action": PARTIQL_ACTIONS, "Resource": resources, "Condition": condition}
        ]
    for user, statements in documents.items():
        keys[user] = json.loads(_run_cli("users", "add", user, "--account", ACCOUNT, "--users-file", str(store),
                                         "--json"))  # fmt: skip
        document = folder / f"{user}.json"
        document.write_text(json.dumps({"Version": "2012-10-17", "Statement": statements}))
        _run_cli("policies", "put", "--policies-file", str(policies), "--account-id", ACCOUNT, "--user", user,
                 "--name", "main", "--file", str(document))  # fmt: skip
    server = ServerProcess("--auth", "sigv4", "--users-file", str(store), "--policies-file", str(policies),
                           env={"DYNASTORE_ACCOUNT_ID": ACCOUNT, "DYNASTORE_REGION": REGION})  # fmt: skip
    try:
        _signed(server, keys["builder"]).create_table(
            TableName=TENANT_TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": t} for n, t in (("pk", "S"), ("sk", "N"),
                                                                                        ("g", "S"))],
            GlobalSecondaryIndexes=[{"IndexName": "byG", "Projection": {"ProjectionType": "ALL"},
                                     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                   {"AttributeName": "g", "KeyType": "RANGE"}]}],
            BillingMode="PAY_PER_REQUEST",
        )  # fmt: skip
        yield server, keys
    finally:
        server.stop()


def _signed(server: ServerProcess, key: dict[str, str]) -> Any:
    return boto3.client("dynamodb", endpoint_url=server.url, region_name=REGION, config=BOTO_CONFIG,
                        aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])  # fmt: skip


def _all_items(builder: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in builder.get_paginator("scan").paginate(TableName=TENANT_TABLE, ConsistentRead=True):
        items.extend(page["Items"])
    return sorted(items, key=lambda item: (item["pk"]["S"], item["sk"]["N"]))


def _fuzz_as(server: ServerProcess, key: dict[str, str], victims: list[str], seed: int) -> Counter[str]:
    """Send the user's random statements; each answer 200 or 400 (AccessDeniedException when it names another's
    key), none showing another's item. Returns the count of outcomes (HTTP 200 / error code)."""
    client = _signed(server, key)
    generator = partiql_access.Generator(random.Random(seed), TENANT_TABLE, key["UserId"], victims)
    outcomes: Counter[str] = Counter()
    calls = {"ExecuteStatement": client.execute_statement, "BatchExecuteStatement": client.batch_execute_statement,
             "ExecuteTransaction": client.execute_transaction}  # fmt: skip
    for _ in range(300):
        operation, request = generator.request()
        for entry in request.get("Statements") or request.get("TransactStatements") or [request]:
            if generator.rng.random() < 0.1:  # a broken statement now and then: the checks meet what does not parse
                entry["Statement"] = mutate(generator.rng, entry["Statement"]) or " "
        try:
            response = calls[operation](**request)
        except ClientError as e:
            status = e.response["ResponseMetadata"]["HTTPStatusCode"]
            assert status == 400, (operation, request, e.response)
            outcomes[e.response["Error"]["Code"]] += 1
            continue
        outcomes["200"] += 1
        leaked = partiql_access.leaks(response, key["UserId"])
        assert leaked == [], (operation, request, leaked)
    return outcomes


def test_partiql_fuzz_under_a_leading_keys_policy_never_reaches_another_users_item(
    tenants: tuple[ServerProcess, dict[str, dict[str, str]]],
) -> None:
    server, keys = tenants
    builder = _signed(server, keys["builder"])
    others: list[str] = ["victim", ""]
    for user in OWN_KEY_POLICIES:
        own = keys[user]["UserId"]
        others = [k for k in others if k] + [own + "#1", own.lower(), own[:-1], own + " "]
        for item in partiql_access.victim_items(others):
            builder.put_item(TableName=TENANT_TABLE, Item=item)
        for sk in ("1", "2"):
            builder.put_item(TableName=TENANT_TABLE, Item={"pk": {"S": own}, "sk": {"N": sk}, "v": {"S": "w"}})
        before = _all_items(builder)
        outcomes = _fuzz_as(server, keys[user], others, seed=20261127 + len(others))
        after = _all_items(builder)
        changed = [item for item in after if item["pk"]["S"] != own and item not in before]
        gone = [item for item in before if item["pk"]["S"] != own and item not in after]
        assert (changed, gone) == ([], []), user
        # Both paths are exercised: statements on its own items run, the others are refused.
        assert outcomes["200"] > 25 and outcomes["AccessDeniedException"] > 100, (user, outcomes)
        # The next user's victims: this user's items, every value made SECRET.
        for item in after:
            if item["pk"]["S"] == own:
                builder.put_item(TableName=TENANT_TABLE, Item=partiql_access.as_victim(item))
        others.append(own)
