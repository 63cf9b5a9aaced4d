"""The AWS CLI's PartiQL commands against a real server (``aws dynamodb execute-statement`` and friends), and
the exact request body the CLI sends, through the raw HTTP path (so the request is covered where no ``aws`` is
installed)."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.e2e.conftest import Send, aws, create_table

AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)


@pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is not installed (docs/partiql.md)")
def test_cli_commands(endpoint: str, ddb: Any, signed_as: dict[str, str] | None) -> None:
    table = create_table(ddb, "S")
    code, out, _ = aws(
        endpoint, "execute-statement", "--statement", f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'n': 1}}",
        "--parameters", '[{"S": "k"}]', signed_as=signed_as,
    )  # fmt: skip
    assert (code, json.loads(out)) == (0, {"Items": []})
    code, out, _ = aws(
        endpoint, "execute-statement", "--statement", f"SELECT * FROM \"{table}\" WHERE pk = 'k'", signed_as=signed_as
    )
    assert (code, json.loads(out)) == (0, {"Items": [{"pk": {"S": "k"}, "n": {"N": "1"}}]})
    statements = json.dumps([{"Statement": f'UPDATE "{table}" SET n = n + 1 WHERE pk = ?', "Parameters": [{"S": "k"}]}])
    code, _, _ = aws(endpoint, "execute-transaction", "--transact-statements", statements, signed_as=signed_as)
    assert code == 0
    statements = json.dumps([{"Statement": f'SELECT n FROM "{table}" WHERE pk = ?', "Parameters": [{"S": "k"}]}])
    code, out, _ = aws(endpoint, "batch-execute-statement", "--statements", statements, signed_as=signed_as)
    assert (code, json.loads(out)) == (0, {"Responses": [{"TableName": table, "Item": {"n": {"N": "2"}}}]})
    code, _, err = aws(
        endpoint, "execute-statement", "--statement", f'SELECT * FROM "{table}" WHERE', signed_as=signed_as
    )
    assert code == 254 or code == 255
    assert "ValidationException" in err and "Statement wasn't well formed, can't be processed: Unexpected term" in err


def test_the_request_the_cli_sends(send: Send, ddb: Any) -> None:
    """``aws dynamodb execute-statement --statement S --parameters P`` sends this body (botocore's JSON protocol,
    members in the order given, no client-side validation beyond the service model's)."""
    table = create_table(ddb, "S")
    ddb.put_item(TableName=table, Item={"pk": {"S": "k"}, "n": {"N": "7"}})
    body = json.dumps({"Statement": f'SELECT n FROM "{table}" WHERE pk = ?', "Parameters": [{"S": "k"}]}).encode()
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ExecuteStatement",
        "X-Amz-Date": "20260101T000000Z",
        "Authorization": AUTH,
    }
    status, answer = send("POST", "/", body, headers)
    assert (status, json.loads(answer)) == (200, {"Items": [{"n": {"N": "7"}}]})
