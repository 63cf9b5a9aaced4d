"""The shard order of ``dynastore streams tail``: a child shard is read only once its parent is read to its end,
shards that closed before a ``latest`` tail started are skipped, and records print as the wire carries them."""

from __future__ import annotations

import datetime
import json
from typing import Any

from dynastore.admin.streams_cli import ShardFollower, record_json


def shard(shard_id: str, parent: str | None = None, closed: bool = False) -> dict[str, Any]:
    numbers = {"StartingSequenceNumber": "1"} | ({"EndingSequenceNumber": "9"} if closed else {})
    return {"ShardId": shard_id, "SequenceNumberRange": numbers} | ({"ParentShardId": parent} if parent else {})


def test_children_wait_for_their_parent_to_be_read_to_its_end() -> None:
    follower = ShardFollower("trim-horizon")
    shards = [shard("a", closed=True), shard("b", "a"), shard("c", "a")]
    assert follower.add_shards(shards) == [("a", "TRIM_HORIZON")]
    follower.iterators["a"] = "iterator of a"
    assert follower.add_shards(shards) == []  # a is being read: b and c wait
    follower.finish("a")
    assert follower.add_shards(shards) == [("b", "TRIM_HORIZON"), ("c", "TRIM_HORIZON")]


def test_a_latest_tail_starts_at_the_open_shards_and_reads_later_ones_from_their_start() -> None:
    follower = ShardFollower("latest")
    assert follower.add_shards([shard("a", closed=True), shard("b", "a")]) == [("b", "LATEST")]
    follower.iterators["b"] = "iterator of b"
    follower.finish("b")  # b split while the tail ran: its children hold only new records
    later = [shard("a", closed=True), shard("b", "a", closed=True), shard("d", "b"), shard("e", "b")]
    assert follower.add_shards(later) == [("d", "TRIM_HORIZON"), ("e", "TRIM_HORIZON")]


def test_a_child_whose_parent_is_gone_is_read_at_once() -> None:
    assert ShardFollower("trim-horizon").add_shards([shard("b", "trimmed")]) == [("b", "TRIM_HORIZON")]


def test_records_print_as_the_wire_carries_them() -> None:
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    record = {"dynamodb": {"ApproximateCreationDateTime": when, "Keys": {"b": {"B": b"\x00\x01"}}}}
    assert json.loads(record_json(record)) == {
        "dynamodb": {"ApproximateCreationDateTime": int(when.timestamp()), "Keys": {"b": {"B": "AAE="}}}
    }
