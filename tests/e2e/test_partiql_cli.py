"""The AWS CLI's PartiQL commands against a real server (``aws dynamodb execute-statement`` and friends), and
the exact request body the CLI sends, through the raw HTTP path (so the request is covered where no ``aws`` is
installed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from tests.e2e.conftest import Send, create_table

AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc"
)


def aws(endpoint: str, signed_as: dict[str, str] | None, *args: str) -> tuple[int, str, str]:
    key = signed_as or {"aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": key["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": key["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_PAGER": "",
    }
    done = subprocess.run(
        ["aws", "dynamodb", *args, "--endpoint-url", endpoint, "--output", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is not installed (docs/partiql.md)")
def test_cli_commands(endpoint: str, ddb: Any, signed_as: dict[str, str] | None) -> None:
    table = create_table(ddb, "S")
    code, out, _ = aws(
        endpoint, signed_as, "execute-statement", "--statement", f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'n': 1}}",
        "--parameters", '[{"S": "k"}]',
    )  # fmt: skip
    assert (code, json.loads(out)) == (0, {"Items": []})
    code, out, _ = aws(
        endpoint, signed_as, "execute-statement", "--statement", f"SELECT * FROM \"{table}\" WHERE pk = 'k'"
    )
    assert (code, json.loads(out)) == (0, {"Items": [{"pk": {"S": "k"}, "n": {"N": "1"}}]})
    statements = json.dumps([{"Statement": f'UPDATE "{table}" SET n = n + 1 WHERE pk = ?', "Parameters": [{"S": "k"}]}])
    code, _, _ = aws(endpoint, signed_as, "execute-transaction", "--transact-statements", statements)
    assert code == 0
    statements = json.dumps([{"Statement": f'SELECT n FROM "{table}" WHERE pk = ?', "Parameters": [{"S": "k"}]}])
    code, out, _ = aws(endpoint, signed_as, "batch-execute-statement", "--statements", statements)
    assert (code, json.loads(out)) == (0, {"Responses": [{"TableName": table, "Item": {"n": {"N": "2"}}}]})
    code, _, err = aws(endpoint, signed_as, "execute-statement", "--statement", f'SELECT * FROM "{table}" WHERE')
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
