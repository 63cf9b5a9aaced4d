"""DynamoDB Streams requests for the fuzz run: ListStreams, DescribeStream, GetShardIterator and GetRecords on the
stream of a fuzz table, with the sequence numbers, shard ids and iterators the run has seen, and ones at and past
every bound (the model's 21 to 40 digits, the server's 64-bit positions, non-ASCII digits), and iterators changed,
cut, or forged with a checksum that holds over positions and times the server never issues."""

from __future__ import annotations

import base64
import random
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz import values
from tests.fuzz.tables import Table

TARGET = "DynamoDBStreams_20120810"
Body = dict[str, Any]
_KEEP = 50  # sequence numbers and iterators remembered (the newest)


@dataclass(slots=True)
class Known:
    """What the run has learned of the fuzz tables' stream from the answers it got."""

    arn: str = ""
    shards: list[str] = field(default_factory=list)
    sequence_numbers: list[str] = field(default_factory=list)
    iterators: list[str] = field(default_factory=list)

    def learn(self, operation: str, answer: Any) -> None:
        """Take in a 200 answer to ``operation``."""
        if not isinstance(answer, dict):
            return
        if operation.endswith(".DescribeStream"):
            for shard in answer.get("StreamDescription", {}).get("Shards", []):
                if shard["ShardId"] not in self.shards:
                    self.shards.append(shard["ShardId"])
                self._remember(self.sequence_numbers, shard["SequenceNumberRange"].get("StartingSequenceNumber"))
        elif operation.endswith(".GetShardIterator"):
            self._remember(self.iterators, answer.get("ShardIterator"))
        elif operation.endswith(".GetRecords"):
            self._remember(self.iterators, answer.get("NextShardIterator"))
            for record in answer.get("Records", [])[-3:]:
                self._remember(self.sequence_numbers, record["dynamodb"]["SequenceNumber"])

    @staticmethod
    def _remember(into: list[str], value: Any) -> None:
        if isinstance(value, str):
            into.append(value)
            del into[:-_KEEP]


def _arn(rng: random.Random, known: Known) -> Any:
    roll = rng.random()
    if roll < 0.85 and known.arn:
        return known.arn
    if roll < 0.9 and known.arn:
        return known.arn[:-1] + rng.choice("0123456789")  # another label: no such stream
    return rng.choice(("", "arn", "arn:aws:dynamodb:us-east-1:000000000000:table/x/stream/label", None, 7))


def _shard(rng: random.Random, known: Known) -> Any:
    if known.shards and rng.random() < 0.8:
        return rng.choice(known.shards)
    number = rng.choice((0, 1, 2**32 - 1, rng.randrange(2**32)))
    return rng.choice(
        (
            f"shardId-{rng.choice((0, 10**19, 10**20 - 1)):020d}-{number:08x}",
            f"shardId-{'9' * 21}-00000001",
            "shardId-" + "1" * 20 + "-" + "g" * 8,
            "x" * rng.choice((0, 27, 28, 65, 66)),
        )
    )


def sequence_number(rng: random.Random, known: Known) -> Any:
    """A sequence number the stream holds, one next to it, or one at and past every bound."""
    if known.sequence_numbers and rng.random() < 0.4:
        seen = int(rng.choice(known.sequence_numbers))
        return str(seen + rng.choice((-1, 0, 0, 1, 1000)))
    base = 10**20  # the server's first sequence number
    return rng.choice(
        (
            str(base),
            str(base + 2**63 - 1),
            str(base + 2**63),
            str(base + 2**64),
            str(rng.randrange(base, 10**40)),
            "0" * 21,
            "9" * 21,
            "1" + "0" * 39,
            "9" * 40,
            "9" * 41,
            "1" * 20,
            "1" * 20 + "a",
            "-" + "1" * 20,
            " " + "1" * 20,
            "\u0661" * 21,  # Arabic-Indic digits: digits to str.isdigit, not to the server
            "",
            None,
            values.long_value(rng),
        )
    )


def _forged(rng: random.Random, known: Known) -> str:
    """An iterator of the stream whose checksum holds, over a position and a time picked at and past the bounds."""
    shard = rng.choice((0, 1, 2, 2**32 - 1))
    after = rng.choice((-(2**63), -2, -1, 0, 1, 2**62, 2**63 - 1))
    issued = rng.choice((0.0, -1.0, -1e300, 1e300, float("inf"), float("-inf"), float("nan"), 1.8e9))
    body = struct.pack(">Iqd", shard, after, issued)
    checksum = zlib.crc32(body, zlib.crc32(known.arn.encode()))
    return known.arn + "|1|" + base64.urlsafe_b64encode(body + checksum.to_bytes(4, "big")).decode()


def iterator(rng: random.Random, known: Known) -> Any:
    """An iterator the server issued, changed, cut, forged, or not one at all."""
    roll = rng.random()
    if known.iterators and roll < 0.5:
        return rng.choice(known.iterators)
    if known.iterators and roll < 0.7:
        text = rng.choice(known.iterators)
        at = rng.randrange(len(text))
        return rng.choice((text[:at], text[:at] + rng.choice("A/_-=|1x\u00e9") + text[at + 1 :], text + "A"))
    if known.arn and roll < 0.85:
        return _forged(rng, known)
    return rng.choice(("", "x", "|1|", (known.arn or "arn") + "|1|!!!!", "A" * 2049, None, 7))


def list_streams(rng: random.Random, tables: tuple[Table, ...], known: Known) -> Body:
    body: Body = {}
    if rng.random() < 0.5:
        body["TableName"] = rng.choice(tables).name
    if rng.random() < 0.3:
        body["Limit"] = values.long_value(rng, 1, 100)
    if rng.random() < 0.2:
        body["ExclusiveStartStreamArn"] = _arn(rng, known)
    return body


def describe_stream(rng: random.Random, tables: tuple[Table, ...], known: Known) -> Body:
    body: Body = {"StreamArn": _arn(rng, known)}
    if rng.random() < 0.3:
        body["Limit"] = values.long_value(rng, 1, 100)
    if rng.random() < 0.3:
        body["ExclusiveStartShardId"] = _shard(rng, known)
    if rng.random() < 0.1:
        body["ShardFilter"] = {"Type": rng.choice(("CHILD_SHARDS", "BOGUS")), "ShardId": _shard(rng, known)}
    return body


def get_shard_iterator(rng: random.Random, tables: tuple[Table, ...], known: Known) -> Body:
    kind = rng.choice(("TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "AT_TIMESTAMP", "X"))
    body: Body = {"StreamArn": _arn(rng, known), "ShardId": _shard(rng, known), "ShardIteratorType": kind}
    if kind.endswith("SEQUENCE_NUMBER") or rng.random() < 0.1:
        body["SequenceNumber"] = sequence_number(rng, known)
    return body


def get_records(rng: random.Random, tables: tuple[Table, ...], known: Known) -> Body:
    body: Body = {"ShardIterator": iterator(rng, known)}
    if rng.random() < 0.3:
        body["Limit"] = values.long_value(rng, 1, 1000)
    return body


BUILDERS = {
    f"{TARGET}.ListStreams": list_streams,
    f"{TARGET}.DescribeStream": describe_stream,
    f"{TARGET}.GetShardIterator": get_shard_iterator,
    f"{TARGET}.GetRecords": get_records,
}
