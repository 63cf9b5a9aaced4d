"""Triggers through a real server: a command trigger gets the table's stream in batches on stdin and appends them
to a file. Batching (by the manual clock), retries with bisection and the on-failure file, filter criteria, the
admin view, and the checkpoint across kill -9 (every record delivered at least once, none lost)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.conftest import ADMIN, make_client
from tests.e2e.server_process import ServerProcess

TABLE = "orders"

# The trigger's command: appends each batch it accepts as one JSON line (keys and sequence numbers); fails (exit 1)
# on a batch holding a record marked "bad"; on a record marked "slow" it writes its pid and then waits, unless the
# file <out>.go exists (so a test can kill the server while that batch is in flight).
HANDLER = """
import json, os, sys, time
out = sys.argv[1]
records = json.load(sys.stdin)["Records"]
if any("bad" in r["dynamodb"].get("NewImage", {}) for r in records):
    print("a bad record", file=sys.stderr)
    sys.exit(1)
line = {"keys": [r["dynamodb"]["Keys"]["pk"]["S"] for r in records],
        "seqs": [r["dynamodb"]["SequenceNumber"] for r in records],
        "events": [r["eventName"] for r in records]}
with open(out, "a") as f:
    f.write(json.dumps(line) + "\\n")
if any("slow" in r["dynamodb"].get("NewImage", {}) for r in records) and not os.path.exists(out + ".go"):
    with open(out + ".pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
"""


def trigger(tmp_path: Path, **params: Any) -> str:
    handler = tmp_path / "handler.py"
    handler.write_text(HANDLER)
    definition = {"Name": "audit", "Table": TABLE, "Command": [sys.executable, str(handler), str(tmp_path / "out")]}
    return json.dumps({**definition, **params})


def batches(tmp_path: Path) -> list[dict[str, Any]]:
    out = tmp_path / "out"
    return [orjson.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def wait_for(what: Callable[[], bool], seconds: float = 30) -> None:
    """Poll until ``what`` holds (the trigger works in the background); fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, "the trigger did not get there in time"
        time.sleep(0.05)


def admin(server: ServerProcess, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else orjson.dumps(body)
    request = urllib.request.Request(f"{server.url}/dynastore/{path}", data=data, headers=ADMIN)
    with urllib.request.urlopen(request, timeout=10) as response:
        return orjson.loads(response.read())


def checkpoint_of(server: ServerProcess) -> str | None:
    checkpoint: str | None = admin(server, "triggers")["triggers"][0]["shards"][0]["checkpoint"]
    return checkpoint


def create(ddb: Any) -> None:
    ddb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},  # one partition: one shard
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )


def put(ddb: Any, key: str, **marks: str) -> None:
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": key}, **{k: {"S": v} for k, v in marks.items()}})


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Callable[..., tuple[ServerProcess, Any]]]:
    servers: list[ServerProcess] = []

    def start(*args: str, data_dir: Path | None = None) -> tuple[ServerProcess, Any]:
        server = ServerProcess("--capacity", "report", *args, data_dir=data_dir)
        servers.append(server)
        return server, make_client(server.url)

    yield start
    # Every server is closed, also after one of them fails to stop (a process left running would outlive the test);
    # one that had to be killed fails the test: a server must exit on SIGTERM.
    hung = [server for server in servers if not server.close()]
    assert not hung, "\n".join(f"did not exit on SIGTERM: {s.process.args!r}\n{s.last_words}" for s in hung)


def test_records_come_in_batches_of_the_batch_size_and_the_window_sends_the_rest(
    tmp_path: Path, started: Callable[..., tuple[ServerProcess, Any]]
) -> None:
    spec = trigger(tmp_path, BatchSize=3, MaximumBatchingWindowInSeconds=60)
    server, ddb = started("--manual-clock", "--trigger", spec)
    create(ddb)
    for i in range(7):
        put(ddb, f"k{i}")
    wait_for(lambda: len(batches(tmp_path)) == 2)
    assert [b["keys"] for b in batches(tmp_path)] == [["k0", "k1", "k2"], ["k3", "k4", "k5"]]
    admin(server, "clock", {"advance": 60})  # the window of the last record has passed
    wait_for(lambda: len(batches(tmp_path)) == 3)
    assert batches(tmp_path)[2]["keys"] == ["k6"]
    seqs = [s for b in batches(tmp_path) for s in b["seqs"]]
    assert seqs == sorted(seqs) and all(len(s) == 21 for s in seqs)
    wait_for(lambda: checkpoint_of(server) == seqs[-1])  # checkpointed once the command has exited
    (view,) = admin(server, "triggers")["triggers"]
    (shard,) = view["shards"]
    assert view["name"] == "audit" and view["kind"] == "command"
    assert shard["checkpoint"] == seqs[-1] and shard["in_flight"] is None and shard["records_delivered"] == 7


def test_a_failing_record_is_isolated_by_bisection_and_written_to_the_failure_file(
    tmp_path: Path, started: Callable[..., tuple[ServerProcess, Any]]
) -> None:
    failed = tmp_path / "failed.jsonl"
    spec = trigger(
        tmp_path,
        BatchSize=4,
        MaximumBatchingWindowInSeconds=60,
        BisectBatchOnFunctionError=True,
        MaximumRetryAttempts=1,
        RetryDelaySeconds=0,
        DestinationConfig={"OnFailure": {"Destination": str(failed)}},
    )
    server, ddb = started("--manual-clock", "--trigger", spec)
    create(ddb)
    put(ddb, "a")
    put(ddb, "b")
    put(ddb, "c", bad="1")
    put(ddb, "d")
    wait_for(failed.exists)
    wait_for(lambda: [k for b in batches(tmp_path) for k in b["keys"]] == ["a", "b", "d"])
    assert [b["keys"] for b in batches(tmp_path)] == [["a", "b"], ["d"]]
    (line,) = failed.read_text().splitlines()
    record = orjson.loads(line)
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 2  # the first try and one retry
    info = record["DDBStreamBatchInfo"]
    assert info["batchSize"] == 1 and info["startSequenceNumber"] == info["endSequenceNumber"]
    assert info["streamArn"].startswith(f"arn:aws:dynamodb:us-east-1:000000000000:table/{TABLE}/stream/")
    assert record["errorMessage"] == "exit status 1: a bad record"
    put(ddb, "e")
    admin(server, "clock", {"advance": 60})
    wait_for(lambda: len(batches(tmp_path)) == 3)
    assert batches(tmp_path)[2]["keys"] == ["e"]  # the shard went on
    wait_for(lambda: checkpoint_of(server) == batches(tmp_path)[2]["seqs"][0])
    (shard,) = admin(server, "triggers")["triggers"][0]["shards"]
    assert shard["failures"] == 1 and shard["last_error"] == "exit status 1: a bad record"


def test_filter_criteria_pass_only_matching_records(
    tmp_path: Path, started: Callable[..., tuple[ServerProcess, Any]]
) -> None:
    pattern = {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"kind": {"S": [{"prefix": "paid"}]}}}}
    spec = trigger(tmp_path, FilterCriteria={"Filters": [{"Pattern": json.dumps(pattern)}]})
    server, ddb = started("--trigger", spec)
    create(ddb)
    put(ddb, "a", kind="paid-card")
    put(ddb, "b", kind="open")
    put(ddb, "a", kind="paid-cash")  # a MODIFY
    put(ddb, "c", kind="paid")
    ddb.delete_item(TableName=TABLE, Key={"pk": {"S": "c"}})
    put(ddb, "last", kind="paid")
    wait_for(lambda: "last" in [k for b in batches(tmp_path) for k in b["keys"]])
    delivered = [k for b in batches(tmp_path) for k in b["keys"]]
    assert delivered == ["a", "c", "last"]
    assert {e for b in batches(tmp_path) for e in b["events"]} == {"INSERT"}


def test_the_checkpoint_survives_kill_9_and_a_batch_in_flight_is_delivered_again(
    tmp_path: Path, started: Callable[..., tuple[ServerProcess, Any]]
) -> None:
    data = tmp_path / "data"
    spec = trigger(tmp_path, BatchSize=5, Timeout=300)
    server, ddb = started("--trigger", spec, data_dir=data)
    create(ddb)
    first = [f"a{i}" for i in range(12)]
    for key in first:
        put(ddb, key)
    wait_for(lambda: sorted(k for b in batches(tmp_path) for k in b["keys"]) == sorted(first))
    last = batches(tmp_path)[-1]["seqs"][-1]
    wait_for(lambda: checkpoint_of(server) == last)  # every batch so far checkpointed
    checkpoint = checkpoint_of(server)
    put(ddb, "slow", slow="1")  # acknowledged: durable, and so is every commit before it (the checkpoint)
    wait_for(lambda: (tmp_path / "out.pid").exists())  # delivered, and the command still works on it
    server.kill()  # SIGKILL: no clean shutdown
    os.kill(int((tmp_path / "out.pid").read_text()), signal.SIGKILL)  # the orphaned handler of the dead server
    (tmp_path / "out.go").write_text("")
    delivered_before = len(batches(tmp_path))

    server, ddb = started("--trigger", spec, data_dir=data)
    second = [f"b{i}" for i in range(6)]
    for key in second:
        put(ddb, key)
    wait_for(lambda: set(second) <= {k for b in batches(tmp_path) for k in b["keys"]})
    after = batches(tmp_path)[delivered_before:]
    again = [k for b in after for k in b["keys"]]
    assert "slow" in again  # delivered but not checkpointed: delivered again
    every = [k for b in batches(tmp_path) for k in b["keys"]]
    assert set(first + ["slow"] + second) == set(every)  # none lost
    assert not set(again) & set(first)  # the checkpointed ones were not
    assert all(s > checkpoint for b in after for s in b["seqs"])
