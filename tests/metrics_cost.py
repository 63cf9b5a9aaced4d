"""The per-request cost of the metrics in process: ``Protocol.handle`` of an in-memory dynastore with metrics on and
off, PutItem and GetItem, interleaved rounds; prints the median microseconds per request of each.

    python -m tests.metrics_cost [--rounds 7] [--requests 20000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import orjson

from dynastore.app import Dynastore
from dynastore.config import Config

HEADERS = {
    "content-type": "application/x-amz-json-1.0",
    "authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host, Signature=ab",
    "x-amz-date": "20260101T000000Z",
}
TABLE = {
    "TableName": "bench",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}


def _request(operation: str, body: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    return {**HEADERS, "x-amz-target": f"DynamoDB_20120810.{operation}"}, orjson.dumps(body)


def _time(app: Dynastore, requests: list[tuple[dict[str, str], bytes]]) -> float:
    handle = app.protocol.handle
    started = time.perf_counter()
    for headers, body in requests:
        handle("POST", headers, body)
    return (time.perf_counter() - started) / len(requests) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=20_000)
    args = parser.parse_args()
    apps = {"off": Dynastore(Config(in_memory=True, metrics=False)), "on": Dynastore(Config(in_memory=True))}
    value = "v" * 150
    puts = [
        _request("PutItem", {"TableName": "bench", "Item": {"pk": {"S": f"k{i}"}, "v": {"S": value}}})
        for i in range(args.requests)
    ]
    gets = [_request("GetItem", {"TableName": "bench", "Key": {"pk": {"S": f"k{i}"}}}) for i in range(args.requests)]
    for app in apps.values():
        app.protocol.handle("POST", *_request("CreateTable", TABLE))
    results: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for name in ("put", "get"):
            for state in ("off", "on") if _ % 2 == 0 else ("on", "off"):
                results.setdefault((name, state), []).append(_time(apps[state], puts if name == "put" else gets))
    for (name, state), samples in sorted(results.items()):
        low, mid, high = min(samples), statistics.median(samples), max(samples)
        print(f"{name} metrics {state}: median {mid:.2f} us (min {low:.2f}, max {high:.2f})")
    for app in apps.values():
        app.close()


if __name__ == "__main__":
    main()
