"""``dynastore streams tail TABLE`` against a real server: every shard followed, parents before children (a split
happens while it runs), each record printed once as a JSON line as it comes, and Ctrl-C stopping it cleanly."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

import boto3
import pytest

from tests.e2e.conftest import BOTO_CONFIG
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.stream_reader import all_shards, read_shard, stream_table

PAD = "x" * 150  # partitions of 2,000 bytes split after a dozen items
WAIT_SECONDS = 60  # an upper bound for the tail to catch up, never a measured time

server = server_fixture("--partition-size-limit", "2000")


class Tail:
    """A running ``dynastore streams tail``, its stdout and stderr read line by line on threads."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("DYNASTORE_", "AWS_"))} | (env or {})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dynastore", "streams", "tail", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.errors: queue.Queue[str] = queue.Queue()
        assert self.process.stdout is not None and self.process.stderr is not None
        self.readers = [
            threading.Thread(target=self._read, args=(stream, lines), daemon=True)
            for stream, lines in ((self.process.stdout, self.lines), (self.process.stderr, self.errors))
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(stream: IO[str], lines: queue.Queue[str]) -> None:
        for line in stream:
            lines.put(line)

    def records(self, count: int) -> list[dict[str, Any]]:
        return [json.loads(self.lines.get(timeout=WAIT_SECONDS)) for _ in range(count)]

    def started(self) -> str:
        """The line that says the tail has its iterators: what is changed from then on is printed."""
        return self.errors.get(timeout=WAIT_SECONDS)

    def ended(self) -> tuple[int, str]:
        """Its exit status and what it wrote on stderr that was not read yet."""
        code = self.process.wait(timeout=WAIT_SECONDS)
        for reader in self.readers:
            reader.join(timeout=WAIT_SECONDS)
        return code, "".join(self.errors.get() for _ in range(self.errors.qsize()))

    def interrupt(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        return self.ended()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for reader in self.readers:
            reader.join(timeout=WAIT_SECONDS)  # it has read to the end of the output
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def tail_of(server: ServerProcess) -> Iterator[Any]:
    started: list[Tail] = []

    def start(*args: str) -> Tail:
        started.append(Tail(*args, "--endpoint", server.url))
        return started[-1]

    yield start
    for tail in started:
        tail.kill()


def put(server: ServerProcess, table: str, keys: range) -> None:
    for i in keys:
        server.ddb.put_item(TableName=table, Item={"pk": {"S": f"k{i:03d}"}, "pad": {"S": PAD}})


def assert_lineage_order(
    printed: list[dict[str, Any]], shards: list[dict[str, Any]], server: ServerProcess, arn: str
) -> None:
    """Every record of a child shard is printed after every record of its parent."""
    shard_of = {
        r["dynamodb"]["SequenceNumber"]: s["ShardId"]
        for s in shards
        for r in read_shard(server.streams, arn, s["ShardId"], None)
    }
    position = {r["dynamodb"]["SequenceNumber"]: i for i, r in enumerate(printed)}
    lines: dict[str, list[int]] = {}
    for sequence, shard in shard_of.items():
        lines.setdefault(shard, []).append(position[sequence])
    pairs = [(s["ParentShardId"], s["ShardId"]) for s in shards if s.get("ParentShardId") in lines]
    assert pairs != []
    for parent, child in pairs:
        if child in lines:
            assert max(lines[parent]) < min(lines[child]), (parent, child)


def test_tail_follows_every_shard_across_a_split_and_stops_on_ctrl_c(server: ServerProcess, tail_of: Any) -> None:
    table, arn = stream_table(server, "NEW_IMAGE", wcu=5)
    put(server, table, range(30))  # splits before the tail starts: --from trim-horizon prints these too
    tail = tail_of(table, "--from", "trim-horizon")
    assert tail.started().startswith(f"following {arn} (")
    first = tail.records(30)
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in first) == [f"k{i:03d}" for i in range(30)]
    put(server, table, range(30, 90))  # the partitions split again while the tail reads
    shards = all_shards(server.streams, arn)
    assert len(shards) > 3 and any("ParentShardId" in s for s in shards)
    records = tail.records(60)
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in records) == [f"k{i:03d}" for i in range(30, 90)]
    assert {r["eventName"] for r in records} == {"INSERT"}
    assert records[0]["dynamodb"]["NewImage"]["pad"] == {"S": PAD}
    assert isinstance(records[0]["dynamodb"]["ApproximateCreationDateTime"], int)  # epoch seconds, as on the wire
    assert_lineage_order([*first, *records], shards, server, arn)
    put(server, table, range(90, 91))
    assert tail.records(1)[0]["dynamodb"]["Keys"]["pk"]["S"] == "k090"  # still following the open shards
    code, stderr = tail.interrupt()
    assert code == 130
    assert "Traceback" not in stderr and stderr == ""
    assert tail.lines.empty()  # each record once


def test_tail_from_latest_prints_only_what_changes_after_it_started(server: ServerProcess, tail_of: Any) -> None:
    table, arn = stream_table(server, "KEYS_ONLY")  # on demand: several shards from the start
    put(server, table, range(3))
    tail = tail_of(table)
    assert tail.started() == f"following {arn} (8 shards to read; Ctrl-C stops)\n"
    put(server, table, range(3, 12))
    keys = sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in tail.records(9))
    assert keys == [f"k{i:03d}" for i in range(3, 12)]  # from every shard, none of the earlier writes
    assert tail.interrupt() == (130, "")
    assert tail.lines.empty()


def test_tail_of_a_table_without_a_stream_is_one_line(server: ServerProcess, tail_of: Any) -> None:
    name = "no_stream_table"
    server.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    tail = tail_of(name)
    assert tail.ended() == (
        1,
        "dynastore streams tail: error: table no_stream_table has no stream (enable one with UpdateTable's "
        "StreamSpecification)\n",
    )
    missing = tail_of("no_such_table")
    assert missing.ended() == (
        1,
        "dynastore streams tail: error: ResourceNotFoundException: Requested resource not found: Table: "
        "no_such_table not found\n",
    )


TAIL_ADMIN = {"AWS_ACCESS_KEY_ID": "AKIASTREAMSTAIL00001", "AWS_SECRET_ACCESS_KEY": "streams-tail-secret"}


def test_tail_signs_its_requests_on_a_server_with_authentication() -> None:
    secured = ServerProcess(
        "--auth", "sigv4",
        env={"DYNASTORE_ADMIN_ACCESS_KEY_ID": TAIL_ADMIN["AWS_ACCESS_KEY_ID"],
             "DYNASTORE_ADMIN_SECRET_ACCESS_KEY": TAIL_ADMIN["AWS_SECRET_ACCESS_KEY"]},
    )  # fmt: skip
    tails: list[Tail] = []
    try:
        ddb = boto3.client("dynamodb", endpoint_url=secured.url, region_name="us-east-1", config=BOTO_CONFIG,
                           aws_access_key_id=TAIL_ADMIN["AWS_ACCESS_KEY_ID"],
                           aws_secret_access_key=TAIL_ADMIN["AWS_SECRET_ACCESS_KEY"])  # fmt: skip
        ddb.create_table(
            TableName="signed_tail",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        )
        ddb.put_item(TableName="signed_tail", Item={"pk": {"S": "a"}})
        unsigned = Tail("signed_tail", "--endpoint", secured.url)
        tails.append(unsigned)
        code, stderr = unsigned.ended()
        assert code == 1 and stderr.startswith("dynastore streams tail: error: UnrecognizedClientException: ")
        signed = Tail("signed_tail", "--from", "trim-horizon", "--endpoint", secured.url, env=TAIL_ADMIN)
        tails.append(signed)
        assert signed.started().endswith("shards to read; Ctrl-C stops)\n")
        assert signed.records(1)[0]["dynamodb"]["Keys"] == {"pk": {"S": "a"}}
        assert signed.interrupt() == (130, "")
    finally:
        for tail in tails:
            tail.kill()
        secured.stop()
