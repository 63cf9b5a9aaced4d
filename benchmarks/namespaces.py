"""What a request costs by the namespace it addresses (docs/design.md "Accounts and regions"), in process: the
ListTables operation (``dispatch.bind``: validation, authorization, the operation) of an authenticated caller
(``--auth sigv4``) in the default namespace, in another namespace that holds a table, and in a region that holds
no table yet; once with only the caller's own identity policy in the policies file and once with 100 policies
there; and, for the bound on what namespaces without tables keep, a request in a different region without tables
every time (more regions than are remembered). Interleaved rounds; medians and the fastest round in brackets,
microseconds a request.

Run: ``python benchmarks/namespaces.py [requests] [rounds]``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dynastore.app import build_context, request_services
from dynastore.build_kind import build_kind
from dynastore.config import Config
from dynastore.protocol import dispatch
from dynastore.security.caller import Caller
from dynastore.storage.catalog import Catalog
from dynastore.storage.memory_kv import MemoryKV
from dynastore.util.clock import ManualClock

ACCOUNT, REGION = "000000000000", "us-east-1"
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}]}
CREATE = {
    "TableName": "bench_table",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}


def caller(region: str) -> Caller:
    return Caller(ACCOUNT, region, user_name="bench", user_id="BENCH", arn=f"arn:aws:iam::{ACCOUNT}:user/bench",
                  access_key_id="AKIABENCHMARKKEY0001", authenticated=True)  # fmt: skip


def policies_file(directory: Path, count: int) -> Path:
    """A policies file holding the caller's own policy and ``count - 1`` policies of other users."""
    users: dict[str, Any] = {"bench": {"AllowAll": ALLOW_ALL}}
    for n in range(count - 1):
        statement = {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": f"arn:aws:dynamodb:*:*:table/t{n}"}
        users[f"user{n}"] = {"ReadOne": {"Version": "2012-10-17", "Statement": [statement]}}
    path = directory / f"policies-{count}.json"
    path.write_text(json.dumps({"accounts": {ACCOUNT: {"users": users}}}))
    return path


def list_tables(policies: Path) -> Callable[[str], Callable[[], object]]:
    """ListTables of an in-memory dynastore with authentication on, as a function of the caller's region; one
    table in the default namespace and one in eu-west-1."""
    config = Config(in_memory=True, auth="sigv4", capacity="report", policies_file=policies, clock=ManualClock(1e9))
    kv = MemoryKV()
    ctx = build_context(config, kv, Catalog.load(kv, config))
    operations = dispatch.bind(ctx, request_services(config))
    for region in (REGION, "eu-west-1"):
        operations["CreateTable"].run(CREATE, caller(region))
    run = operations["ListTables"].run

    def in_region(region: str) -> Callable[[], object]:
        who = caller(region)
        run({}, who)  # warm: the caller's compiled policies
        return lambda: run({}, who)

    return in_region


def in_ever_new_regions(in_region: Callable[[str], Callable[[], object]]) -> Callable[[], object]:
    """A request in another region without tables each time, cycling through more regions than are remembered."""
    calls = [in_region(f"xx-{chr(ord('a') + n // 26)}{chr(ord('a') + n % 26)}-1") for n in range(500)]
    turn = iter(range(1 << 62))
    return lambda: calls[next(turn) % len(calls)]()


def per_request(call: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - started) / count * 1e6


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    print(f"dynastore {build_kind()}; ListTables, {count} requests a round, {rounds} interleaved rounds")
    with tempfile.TemporaryDirectory() as directory:
        calls: dict[str, Callable[[], object]] = {}
        for policies in (1, 100):
            in_region = list_tables(policies_file(Path(directory), policies))
            calls[f"{policies:3} policies, default namespace "] = in_region(REGION)
            calls[f"{policies:3} policies, namespace with a table"] = in_region("eu-west-1")
            calls[f"{policies:3} policies, region with no table  "] = in_region("ap-south-2")
            calls[f"{policies:3} policies, a new such region each"] = in_ever_new_regions(in_region)
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(rounds):
            for name, call in calls.items():
                times[name].append(per_request(call, count))
    for name, samples in times.items():
        print(f"{name}: {statistics.median(samples):8.2f} us ({min(samples):.2f})")


if __name__ == "__main__":
    main()
