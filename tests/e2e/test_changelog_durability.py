"""kill -9 while clients write to a table with a stream: every acknowledged change is in the change log after the
restart, once, in order, and the sequence numbers go on from there."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any

from dynastore.app import Dynastore
from dynastore.config import Config
from dynastore.engine.changelog import INDEX_RECORDS_PER_READ, ChangeRecord
from dynastore.storage.itemcodec import decode_item
from tests.e2e.conftest import make_client
from tests.e2e.server_process import ServerProcess
from tests.e2e.stream_reader import all_shards, stream_table

TABLE = "durable_stream"


def _create(ddb: Any) -> None:
    ddb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    ddb.get_waiter("table_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})


def _logged(data_dir: Path) -> tuple[list[ChangeRecord], int]:
    """The table's change records, shard by shard (parents first), and the next sequence number."""
    app = Dynastore(Config(data_dir=data_dir))
    try:
        ctx = app.engine
        table = ctx.catalog.get_active(TABLE)
        records: list[ChangeRecord] = []
        for shard in sorted(ctx.shards.of(table.table_id).shards, key=lambda s: s.number):
            records.extend(ctx.changelog.read_shard(table.table_id, shard.number, -1, 100_000).records)
        return records, ctx.changelog.next_seq
    finally:
        app.close()


def test_every_acknowledged_change_survives_kill_9_once_and_in_order(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)
    ddb = make_client(server.url)
    _create(ddb)

    def write(i: int) -> str:
        key = {"pk": {"S": f"k{i % 40}"}}
        ddb.put_item(TableName=TABLE, Item={**key, "v": {"N": str(i)}})
        return f"k{i % 40}={i}"

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        acknowledged = list(pool.map(write, range(400)))
    server.kill()

    records, next_seq = _logged(tmp_path)
    seqs = [r.seq for r in records]
    assert len(set(seqs)) == len(seqs)  # nothing twice
    assert next_seq > max(seqs)
    chains: dict[str, list[ChangeRecord]] = {}
    for record in sorted(records, key=lambda r: r.seq):
        assert record.new is not None
        chains.setdefault(decode_item(record.new)["pk"]["S"], []).append(record)
    logged = {f"{key}={decode_item(r.new)['v']['N']}" for key, chain in chains.items() for r in chain if r.new}
    assert set(acknowledged) <= logged  # every acknowledged change is there
    for chain in chains.values():
        # In order: each change's old image is the previous change's new image, the first is an INSERT.
        assert chain[0].event_name == "INSERT" and chain[0].old is None
        for before, change in zip(chain, chain[1:], strict=False):
            assert change.event_name == "MODIFY" and change.old == before.new
    assert len(chains) == 40

    # A restarted server goes on with new sequence numbers.
    again = ServerProcess(data_dir=tmp_path)
    try:
        make_client(again.url).put_item(TableName=TABLE, Item={"pk": {"S": "after"}})
    finally:
        again.stop()
    after, _ = _logged(tmp_path)
    newest = max(after, key=lambda r: r.seq)
    assert newest.seq > max(seqs) and newest.new is not None and decode_item(newest.new)["pk"]["S"] == "after"


def test_a_restarted_server_reads_a_log_longer_than_one_read_indexes(tmp_path: Path) -> None:
    """After a restart the shard index is rebuilt from the records' headers, at most INDEX_RECORDS_PER_READ of them
    per read: a consumer polling GetRecords gets every record of a longer log, once and in order, though some
    pages come back short or empty while the index catches up."""
    count = INDEX_RECORDS_PER_READ + 1_000
    server = ServerProcess("--capacity", "report", data_dir=tmp_path)
    try:
        table, arn = stream_table(server, "KEYS_ONLY")
        keys = [f"k{i:06d}" for i in range(count)]
        batches = [keys[i : i + 25] for i in range(0, count, 25)]

        def write(batch: list[str]) -> None:
            requests = [{"PutRequest": {"Item": {"pk": {"S": key}}}} for key in batch]
            left = server.ddb.batch_write_item(RequestItems={table: requests})["UnprocessedItems"]
            assert left == {}

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(write, batches))
    finally:
        server.kill()

    again = ServerProcess("--capacity", "report", data_dir=tmp_path)
    try:
        streams = again.streams
        read: list[dict[str, Any]] = []
        for shard in all_shards(streams, arn):
            read.extend(_poll_to_the_end(streams, arn, shard["ShardId"]))
    finally:
        again.stop()
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in read) == keys  # every one, once
    assert all(r["eventName"] == "INSERT" for r in read)


def _poll_to_the_end(streams: Any, arn: str, shard_id: str) -> list[dict[str, Any]]:
    """A shard's records from its start, polled to a closed shard's end or until three pages in a row of an open
    one come back empty."""
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON")
    position: str | None = iterator["ShardIterator"]
    records: list[dict[str, Any]] = []
    empty = 0
    while position is not None and empty < 3:
        page = streams.get_records(ShardIterator=position, Limit=1000)
        records.extend(page["Records"])
        empty = 0 if page["Records"] else empty + 1
        position = page.get("NextShardIterator")
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert seqs == sorted(seqs)  # a shard's records in order
    return records
