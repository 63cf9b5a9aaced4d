"""``dynastore streams tail TABLE``: follow every shard of a table's stream, parents before children, and print
its records as JSON lines as they come. A client of the DynamoDB Streams API through boto3 (installed separately:
it is no dependency of the server), signed as the other commands sign (``--access-key-id`` or the AWS_*
variables; any key for a server without authentication).

An on-demand table's stream has a shard per partition, and a split closes a shard and opens two children: reading
``Shards[0]`` alone misses most records. A child is read once its parent has been read to its end (or its parent is
gone), so each item's changes come out in order.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dynastore.admin import api_clients
from dynastore.admin.api_clients import add_client_options
from dynastore.admin.partitions_cli import endpoint_url, plural

__all__ = ["ShardFollower", "add_streams_command", "record_json", "run"]

POLL_SECONDS = 0.5  # between two rounds that found nothing new
DESCRIBE_EVERY = 4  # rounds: how often new shards (a split's children) are looked for


def add_streams_command(commands: Any, endpoint: str) -> None:
    cmd = commands.add_parser(
        "streams", help="read a table's DynamoDB stream on a running server", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    actions = cmd.add_subparsers(dest="streams_command", required=True)
    tail = actions.add_parser(
        "tail",
        help="print the stream's records as JSON lines as they come, every shard in lineage order (Ctrl-C stops)",
    )
    tail.add_argument("table", help="table name")
    tail.add_argument(
        "--from",
        dest="start",
        choices=("latest", "trim-horizon"),
        default="latest",
        help="latest: only changes made from now on; trim-horizon: every record the stream still keeps first",
    )
    add_client_options(tail, endpoint)


def record_json(record: dict[str, Any]) -> str:
    """A record as the wire carries it: epoch seconds for times, base64 for binary values."""

    def wire(value: Any) -> Any:
        if isinstance(value, datetime.datetime):
            return int(value.timestamp())
        if isinstance(value, (bytes, bytearray)):
            return base64.b64encode(value).decode()
        if isinstance(value, set):
            return sorted(wire(v) for v in value)
        raise TypeError(f"not JSON: {type(value).__name__}")

    return json.dumps(record, default=wire, separators=(",", ":"))


@dataclass
class ShardFollower:
    """Which shards to read and where each stands: a shard is read once its parent is finished (read to its end)
    or unknown (trimmed, or closed before the tail started); a finished shard is never read again."""

    start: str  # "latest" or "trim-horizon": where the shards open when the tail starts are read from
    iterators: dict[str, str | None] = field(default_factory=dict)  # shard id -> next iterator (None: to get)
    finished: set[str] = field(default_factory=set)
    known: set[str] = field(default_factory=set)
    started: bool = False

    def add_shards(self, shards: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """New shards of a DescribeStream, in its order (parents first): (shard id, iterator type) of each to
        start reading now; shards closed before a `latest` tail started count as finished."""
        first = not self.started
        self.started = True
        for shard in shards:
            shard_id = shard["ShardId"]
            if shard_id in self.known:
                continue
            self.known.add(shard_id)
            closed = "EndingSequenceNumber" in shard["SequenceNumberRange"]
            if first and self.start == "latest" and closed:
                self.finished.add(shard_id)
            else:
                self.iterators[shard_id] = None
        return self.ready(shards, first)

    def ready(self, shards: list[dict[str, Any]], first: bool) -> list[tuple[str, str]]:
        out = []
        for shard in shards:
            shard_id, parent = shard["ShardId"], shard.get("ParentShardId")
            if shard_id not in self.iterators or self.iterators[shard_id] is not None:
                continue
            if parent in self.known and parent not in self.finished:
                continue  # its parent's records come first
            kind = "LATEST" if first and self.start == "latest" else "TRIM_HORIZON"
            out.append((shard_id, kind))
        return out

    def finish(self, shard_id: str) -> None:
        self.iterators.pop(shard_id, None)
        self.finished.add(shard_id)


def _all_shards(client: Any, arn: str) -> list[dict[str, Any]]:
    shards: list[dict[str, Any]] = []
    start: dict[str, Any] = {}
    while True:
        description = client.describe_stream(StreamArn=arn, **start)["StreamDescription"]
        shards.extend(description["Shards"])
        last = description.get("LastEvaluatedShardId")
        if last is None:
            return shards
        start = {"ExclusiveStartShardId": last}


def follow(
    client: Any, arn: str, start: str, emit: Callable[[dict[str, Any]], None], started: Callable[[int], None]
) -> None:
    """Read the stream until interrupted (or until it ends: every shard closed and read); ``started`` is told how
    many shards are being read once their iterators are in hand (a change made after it is printed)."""
    follower = ShardFollower(start)
    rounds = 0
    announced = False
    while True:
        if rounds % DESCRIBE_EVERY == 0 or not follower.iterators:
            shards = _all_shards(client, arn)
            for shard_id, kind in follower.add_shards(shards):
                iterator = client.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType=kind)
                follower.iterators[shard_id] = iterator["ShardIterator"]
            if not announced:
                started(sum(1 for it in follower.iterators.values() if it is not None))
                announced = True
            if _all_read(follower, shards) and _stream_ended(client, arn):
                return
        rounds += 1
        if not _read_round(client, follower, emit):
            time.sleep(POLL_SECONDS)
        elif any(it is None for it in follower.iterators.values()):
            rounds = 0  # a shard just finished: start its children at once


def _read_round(client: Any, follower: ShardFollower, emit: Callable[[dict[str, Any]], None]) -> bool:
    """One GetRecords on each shard being read; True if anything came or a shard finished."""
    progressed = False
    for shard_id, iterator in list(follower.iterators.items()):
        if iterator is None:
            continue
        page = client.get_records(ShardIterator=iterator)
        for record in page["Records"]:
            emit(record)
        progressed = progressed or bool(page["Records"])
        following = page.get("NextShardIterator")
        if following is None:
            follower.finish(shard_id)
            progressed = True
        else:
            follower.iterators[shard_id] = following
    return progressed


def _all_read(follower: ShardFollower, shards: list[dict[str, Any]]) -> bool:
    return bool(shards) and not follower.iterators and all(s["ShardId"] in follower.finished for s in shards)


def _stream_ended(client: Any, arn: str) -> bool:
    status: str = client.describe_stream(StreamArn=arn)["StreamDescription"]["StreamStatus"]
    return status == "DISABLED"


def _clients(args: argparse.Namespace) -> tuple[Any, Any]:
    return api_clients.client(args, "dynamodb"), api_clients.client(args, "dynamodbstreams")


def run(args: argparse.Namespace) -> int:
    try:
        import boto3  # noqa: F401
    except ImportError:
        return _fail("needs boto3, the AWS SDK for Python (pip install boto3)")
    from botocore.exceptions import BotoCoreError, ClientError

    base = endpoint_url(args.endpoint)
    try:
        ddb, streams = _clients(args)
        arn = ddb.describe_table(TableName=args.table)["Table"].get("LatestStreamArn")
        if arn is None:
            return _fail(f"table {args.table} has no stream (enable one with UpdateTable's StreamSpecification)")
        follow(streams, arn, args.start, _print_record, lambda shards: _started(arn, shards))
    except KeyboardInterrupt:
        return 130  # Ctrl-C: what was read is printed; stop without a traceback
    except ClientError as e:
        error = e.response.get("Error", {})
        return _fail(f"{error.get('Code', 'error')}: {error.get('Message', '')}")
    except BotoCoreError as e:
        return _fail(f"cannot reach {base}: {e}: is `dynastore serve` running there?")
    except BrokenPipeError:  # the reader (head, a closed pipe) wants no more: nothing left to flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


def _started(arn: str, shards: int) -> None:
    """On stderr, so that stdout holds only records: from here on every change is printed."""
    print(f"following {arn} ({plural(shards, 'shard')} to read; Ctrl-C stops)", file=sys.stderr, flush=True)


def _print_record(record: dict[str, Any]) -> None:
    print(record_json(record), flush=True)


def _fail(text: str) -> int:
    print(f"dynastore streams tail: error: {text}", file=sys.stderr)
    return 1
