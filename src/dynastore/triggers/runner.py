"""One trigger at work: a consumer of the change log (engine/changelog.py) reading its table's stream shards,
delivering batches and keeping its checkpoint through the log, as every consumer does.

It follows its table while the table's stream is enabled and needs what the stream keeps (the images); it holds
no record of the log: like a Lambda event source mapping it reads within the stream's retention period.

``step()`` is one round: for every shard the trigger may read (not finished, its parent finished or gone: lineage
order), it delivers the shard's next batch, or retries the batch that failed, and awaits the outcome; shards of
the trigger advance side by side, one batch in flight each. Everything time-based reads the injectable clock
(the batching window, retry delays, record ages), so a test drives a runner round by round with a ManualClock.

On a failed delivery (Lambda's semantics for stream event sources): with BisectBatchOnFunctionError the batch is
split in two and the halves are retried in order (a split does not count as a retry); a batch that cannot be split
is retried after a delay doubling from RetryDelaySeconds, until MaximumRetryAttempts retries failed or its oldest
record is older than MaximumRecordAgeInSeconds (or the stream's retention period); it is then discarded: one JSON
line describing it goes to the on-failure file, and the shard goes on past it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from dynastore.engine.changelog import IMAGES, NOT_FOLLOWED, ChangeRecord
from dynastore.engine.context import Context
from dynastore.engine.stream_shards import Shard
from dynastore.limits import STREAM_RETENTION_SECONDS, TRIGGER_BATCH_SIZE_MAX, TRIGGER_RETRY_DELAY_MAX
from dynastore.model.table_schema import TableDef
from dynastore.storage import keyspace
from dynastore.triggers.checkpoints import Checkpoint
from dynastore.triggers.delivery import Deliver, DeliveryFailed
from dynastore.triggers.records import sequence_number, shard_id, stream_arn, stream_record
from dynastore.triggers.spec import LATEST, TriggerSpec

__all__ = ["Piece", "ShardState", "TriggerRunner"]

RETRIES_EXHAUSTED = "RetryAttemptsExhausted"
RECORD_TOO_OLD = "RecordAgeExceeded"


class Pending:
    """A record read for delivery: its sequence number, arrival time and stream record."""

    __slots__ = ("seq", "at", "record")

    def __init__(self, seq: int, at: float, record: dict[str, Any]) -> None:
        self.seq = seq
        self.at = at
        self.record = record


class Piece:
    """A batch, or a half of one after a bisection; ``retries`` failed retries so far, ``invocations`` deliveries."""

    __slots__ = ("records", "retries", "invocations")

    def __init__(self, records: list[Pending], retries: int = 0, invocations: int = 0) -> None:
        self.records = records
        self.retries = retries
        self.invocations = invocations


class ShardState:
    """What the runner holds for one shard between rounds (memory only; the checkpoint is the durable part)."""

    __slots__ = ("pieces", "next_try", "retries", "last_error", "failures", "batches", "records")

    def __init__(self) -> None:
        self.pieces: deque[Piece] = deque()  # the batch in flight, in order (more than one after a bisection)
        self.next_try = 0.0  # a retry waits until the clock reaches this
        self.retries = 0  # failed deliveries retried, all batches
        self.last_error: str | None = None
        self.failures = 0  # batches discarded (written to the on-failure destination)
        self.batches = 0  # batches delivered
        self.records = 0  # records delivered


class TriggerRunner:
    """One trigger, and the change log consumer it is (engine/changelog.py ``Consumer``)."""

    def __init__(self, spec: TriggerSpec, ctx: Context, deliver: Deliver) -> None:
        self.name = f"trigger:{spec.name}"
        self.spec = spec
        self._ctx = ctx
        self._deliver = deliver
        saved = ctx.changelog.load_checkpoint(self)
        self.checkpoint: Checkpoint | None = None if saved is None else Checkpoint.from_record(saved)
        self.shards: dict[int, ShardState] = {}
        self._ids: dict[int, str] = {}
        self._table: TableDef | None = None
        self.last_error: str | None = None

    # ---- as a change log consumer -----------------------------------------------------------------------------
    def need(self, table: TableDef) -> int:
        stream = table.stream
        return IMAGES if table.name == self.spec.table and stream is not None and stream.enabled else NOT_FOLLOWED

    def holds(self, record: ChangeRecord, now: float) -> bool:
        return False  # it reads within the stream's retention period, which the stream holds

    @property
    def checkpoint_key(self) -> bytes:
        return keyspace.trigger_record_key(self.spec.name)  # where triggers' checkpoints have always been

    # ---- one round ------------------------------------------------------------------------------------------
    async def step(self) -> bool:
        """Deliver (or retry) one batch per readable shard; True when anything moved (more may be ready)."""
        table = self._ctx.catalog.find(self.spec.table)
        stream = None if table is None else table.stream
        if table is None or stream is None or stream.label is None:
            return False
        self._table = table
        checkpoint = self._follow(table, stream.label)
        all_shards = self._ctx.shards.of(table.table_id).of_stream(stream.label)
        known = {s.number for s in all_shards}
        ready = [
            s
            for s in all_shards
            if s.number not in checkpoint.finished and (s.parent not in known or s.parent in checkpoint.finished)
        ]
        if not ready:
            return False
        moved = await asyncio.gather(*(self._advance(table, stream.view_type or "KEYS_ONLY", s) for s in ready))
        return any(moved)

    def _follow(self, table: TableDef, label: str) -> Checkpoint:
        """The checkpoint of the table's current stream; a new one (at the starting position) for a new stream."""
        checkpoint = self.checkpoint
        if checkpoint is not None and checkpoint.table_id == table.table_id and checkpoint.label == label:
            return checkpoint
        checkpoint = self.checkpoint = Checkpoint(table.table_id, label, {}, set())
        self.shards.clear()
        if self.spec.starting_position == LATEST:
            latest = self._ctx.changelog.next_seq - 1
            for shard in self._ctx.shards.of(table.table_id).of_stream(label):
                if shard.is_open:
                    checkpoint.done[shard.number] = latest
                else:
                    checkpoint.finished.add(shard.number)
        self._ctx.changelog.save_checkpoint(self, checkpoint.to_record())
        return checkpoint

    async def _advance(self, table: TableDef, view_type: str, shard: Shard) -> bool:
        checkpoint = self.checkpoint
        assert checkpoint is not None
        state = self.shards.setdefault(shard.number, ShardState())
        now = self._ctx.clock.now()
        if not state.pieces:
            after = checkpoint.done.get(shard.number, shard.first_seq - 1)
            batch, last_read, full, complete = self._read(table, view_type, shard, after)
            if last_read is None:
                if not complete:
                    return True  # the shard index is catching up with a large log (after a restart): read again
                if shard.is_open:
                    return False
                checkpoint.finished.add(shard.number)  # closed and read to its end: its children may start
                self._save(table)
                return True
            if not batch:  # every record read was filtered out: skipped, and checkpointed
                checkpoint.done[shard.number] = last_read
                self._save(table)
                return True
            window = self.spec.batching_window
            if not full and shard.is_open and window > 0 and now < batch[0].at + window:
                return False  # gather more records, until the window since the first one has passed
            state.pieces.append(Piece(batch))
        if now < state.next_try:
            return False
        return await self._deliver_piece(table, shard, state, now)

    def _read(
        self, table: TableDef, view_type: str, shard: Shard, after: int
    ) -> tuple[list[Pending], int | None, bool, bool]:
        """The next batch of the shard (records passing the filters), the last sequence number read, whether the
        batch is full, and whether the last read saw the whole log (``ShardRead.complete``)."""
        spec = self.spec
        namespace = self._ctx.catalog.namespace_of_table(table)
        source = stream_arn(namespace.region, namespace.account_id, table, shard.label)
        batch: list[Pending] = []
        last: int | None = None
        scanned = 0
        changelog = self._ctx.changelog
        complete = True
        while len(batch) < spec.batch_size and scanned < TRIGGER_BATCH_SIZE_MAX:
            want = spec.batch_size - len(batch)
            read = changelog.read_shard(table.table_id, shard.number, after, want)
            for change in read.records:
                after = last = change.seq
                record = self._record(change, table, view_type, source)
                if record is not None and (spec.filters is None or spec.filters.passes(record)):
                    batch.append(Pending(change.seq, change.at, record))
            scanned += len(read.records)
            complete = read.complete
            if len(read.records) < want:
                break
        return batch, last, len(batch) >= spec.batch_size, complete

    def _record(self, change: ChangeRecord, table: TableDef, view_type: str, source: str) -> dict[str, Any] | None:
        return stream_record(change, table, view_type, self._ctx.catalog.namespace_of_table(table).region, source)

    # ---- delivery and its outcome -------------------------------------------------------------------------------
    async def _deliver_piece(self, table: TableDef, shard: Shard, state: ShardState, now: float) -> bool:
        piece = state.pieces[0]
        max_age = self.spec.max_record_age if self.spec.max_record_age >= 0 else STREAM_RETENTION_SECONDS
        expired = [p for p in piece.records if now - p.at > max_age]
        if expired:
            piece.records = piece.records[len(expired) :]
            await self._discard(table, shard, state, Piece(expired, piece.retries, piece.invocations), RECORD_TOO_OLD)
            if not piece.records:
                state.pieces.popleft()
                return True
        piece.invocations += 1
        body = orjson.dumps({"Records": [p.record for p in piece.records]})
        try:
            await self._deliver(body)
        except DeliveryFailed as e:
            state.last_error = self.last_error = str(e)
            await self._failed(table, shard, state, piece, now)
            return True
        state.pieces.popleft()
        state.batches += 1
        state.records += len(piece.records)
        self._done_through(table, shard, piece.records[-1].seq)
        return True

    async def _failed(self, table: TableDef, shard: Shard, state: ShardState, piece: Piece, now: float) -> None:
        spec = self.spec
        if spec.bisect and len(piece.records) > 1:
            half = len(piece.records) // 2
            state.pieces.popleft()
            # the halves keep the batch's retries: splitting is not a retry
            state.pieces.appendleft(Piece(piece.records[half:], piece.retries))
            state.pieces.appendleft(Piece(piece.records[:half], piece.retries))
            return
        if spec.max_retries >= 0 and piece.retries >= spec.max_retries:
            state.pieces.popleft()
            await self._discard(table, shard, state, piece, RETRIES_EXHAUSTED)
            return
        piece.retries += 1
        state.retries += 1
        state.next_try = now + min(spec.retry_delay * 2 ** (piece.retries - 1), TRIGGER_RETRY_DELAY_MAX)

    async def _discard(self, table: TableDef, shard: Shard, state: ShardState, piece: Piece, condition: str) -> None:
        """Give up on ``piece``: describe it in the on-failure file (first: at least once), then go on past it."""
        state.failures += 1
        destination = self.spec.on_failure
        if destination is not None:
            line = orjson.dumps(self._failure_record(table, shard, state, piece, condition)) + b"\n"
            await asyncio.to_thread(_append, destination, line)
        self._done_through(table, shard, piece.records[-1].seq)

    def _failure_record(
        self, table: TableDef, shard: Shard, state: ShardState, piece: Piece, condition: str
    ) -> dict[str, Any]:
        """Lambda's record of a discarded stream batch, as far as it applies (no function ARN, no request id of an
        invocation service): the shard, the sequence number range, the batch size, approximate arrival times."""
        namespace = self._ctx.catalog.namespace_of_table(table)
        first, last = piece.records[0], piece.records[-1]
        out: dict[str, Any] = {
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": f"dynastore:trigger:{self.spec.name}",
                "condition": condition,
                "approximateInvokeCount": piece.invocations,
            },
            "version": "1.0",
            "timestamp": _iso(self._ctx.clock.now()),
            "DDBStreamBatchInfo": {
                "shardId": shard_id(shard),
                "startSequenceNumber": sequence_number(first.seq),
                "endSequenceNumber": sequence_number(last.seq),
                "approximateArrivalOfFirstRecord": _iso(first.at),
                "approximateArrivalOfLastRecord": _iso(last.at),
                "batchSize": len(piece.records),
                "streamArn": stream_arn(namespace.region, namespace.account_id, table, shard.label),
            },
        }
        if piece.invocations:
            out["responseContext"] = {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"}
            out["errorMessage"] = state.last_error
        return out

    def _done_through(self, table: TableDef, shard: Shard, seq: int) -> None:
        checkpoint = self.checkpoint
        assert checkpoint is not None
        checkpoint.done[shard.number] = seq
        self._save(table)

    def _save(self, table: TableDef) -> None:
        """Write the checkpoint, forgetting shards the stream no longer lists (past the retention period)."""
        checkpoint = self.checkpoint
        assert checkpoint is not None
        known = {s.number for s in self._ctx.shards.of(table.table_id).of_stream(checkpoint.label)}
        checkpoint.done = {n: seq for n, seq in checkpoint.done.items() if n in known}
        checkpoint.finished &= known
        self._ctx.changelog.save_checkpoint(self, checkpoint.to_record())

    # ---- inspection -------------------------------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        spec = self.spec
        checkpoint = self.checkpoint
        table = self._table
        shards: list[dict[str, Any]] = []
        if checkpoint is not None and table is not None:
            listed = self._ctx.shards.of(checkpoint.table_id).of_stream(checkpoint.label)
            by_number = {s.number: s for s in listed}
            for shard in listed:
                shards.append(self._shard_view(table, shard, by_number.get(shard.parent), checkpoint))
        return {
            "name": spec.name,
            "table": spec.table,
            "kind": spec.kind,
            "batch_size": spec.batch_size,
            "starting_position": spec.starting_position,
            "stream": None if checkpoint is None else checkpoint.label,
            "shards": shards,
            "last_error": self.last_error,
        }

    def _shard_view(
        self, table: TableDef, shard: Shard, parent: Shard | None, checkpoint: Checkpoint
    ) -> dict[str, Any]:
        state = self.shards.get(shard.number) or ShardState()
        done = checkpoint.done.get(shard.number)
        in_flight = None
        if state.pieces:
            records = [p for piece in state.pieces for p in piece.records]
            in_flight = {
                "records": len(records),
                "first_sequence_number": sequence_number(records[0].seq),
                "last_sequence_number": sequence_number(records[-1].seq),
                "pieces": len(state.pieces),
                "retries": state.pieces[0].retries,
            }
        return {
            "shard_id": shard_id(shard),
            "parent_shard_id": None if parent is None else shard_id(parent),
            "open": shard.is_open,
            "finished": shard.number in checkpoint.finished,
            "checkpoint": None if done is None else sequence_number(done),
            "in_flight": in_flight,
            "retries": state.retries,
            "last_error": state.last_error,
            "failures": state.failures,
            "batches_delivered": state.batches,
            "records_delivered": state.records,
        }


def _append(path: Path, line: bytes) -> None:
    with path.open("ab") as f:
        f.write(line)


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
