"""What in-process mode adds to a boto3 call: GetItem and PutItem through boto3 against

* a do-nothing endpoint (a before-send handler returning a canned response): boto3's own cost,
* an in-process dynastore (dynastore.testing.in_process),
* a real server process (``dynastore serve --in-memory`` on 127.0.0.1),

each as the best of several rounds of sequential calls (microseconds a call). Run:
``python benchmarks/in_process.py [calls] [rounds]``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from typing import Any

import boto3
from botocore.awsrequest import AWSResponse
from botocore.config import Config as BotoConfig

from dynastore.testing import in_process

TABLE = "bench_table"
KEY = {"pk": {"S": "key-1"}}
ITEM = {"pk": {"S": "key-1"}, "value": {"S": "x" * 100}}
CONFIG = BotoConfig(retries={"max_attempts": 0})
CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "a", "aws_secret_access_key": "b"}


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body


def canned(request: Any, **_: Any) -> AWSResponse:
    target = request.headers["X-Amz-Target"]
    body = b'{"Item":{"pk":{"S":"key-1"},"value":{"S":"' + b"x" * 100 + b'"}}}' if b"GetItem" in target else b"{}"
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amz-crc32": str(zlib.crc32(body))}
    return AWSResponse(request.url, 200, headers, _Raw(body))


def timed(call: Callable[[], Any], calls: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def measure(client: Any, calls: int, rounds: int) -> tuple[float, float]:
    get = timed(lambda: client.get_item(TableName=TABLE, Key=KEY), calls, rounds)
    put = timed(lambda: client.put_item(TableName=TABLE, Item=ITEM), calls, rounds)
    return get, put


def create(client: Any) -> None:
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName=TABLE, Item=ITEM)


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    results: dict[str, tuple[float, float]] = {}

    nothing = boto3.client("dynamodb", config=CONFIG, **CREDENTIALS)
    nothing.meta.events.register("before-send.dynamodb", canned)
    results["boto3 alone (canned response)"] = measure(nothing, calls, rounds)

    with in_process(capacity="report") as ds:
        client = ds.client(config=CONFIG)
        create(client)
        results["in-process dynastore"] = measure(client, calls, rounds)

    command = [sys.executable, "-m", "dynastore", "serve", "--in-memory", "--port", "0", "--capacity", "report"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        match = re.search(r"http://[\d.]+:\d+", server.stdout.readline())
        assert match is not None
        client = boto3.client("dynamodb", endpoint_url=match.group(0), config=CONFIG, **CREDENTIALS)
        create(client)
        results["server process (127.0.0.1)"] = measure(client, calls, rounds)
    finally:
        server.terminate()
        server.wait()

    base_get, base_put = results["boto3 alone (canned response)"]
    print(f"{'':32} {'GetItem us':>10} {'PutItem us':>10} {'+Get':>7} {'+Put':>7}")
    for name, (get, put) in results.items():
        print(f"{name:32} {get:10.1f} {put:10.1f} {get - base_get:7.1f} {put - base_put:7.1f}")


if __name__ == "__main__":
    main()
