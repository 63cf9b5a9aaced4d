"""DynamoDB Streams, as the engine serves it: listing and describing a table's streams, shard iterators and
reading a shard's records (docs/streams.md). Takes and returns typed values; the wire shapes are built in
api/streams.py and api/stream_records.py.

Identifiers carry what is needed to find a record again without any state of their own:

* a stream is named by its ARN (the table's ARN, ``/stream/`` and the stream's label);
* a shard id is ``shardId-<opened, milliseconds, 20 digits>-<shard number, 8 hex digits>``;
* a sequence number is the change log's sequence number plus 10**20, as a 21-digit string, so that sequence
  numbers compare in order as strings and as numbers;
* a shard iterator is the stream ARN, ``|1|`` and a base64 payload (shard number, position, when issued and a
  checksum); it expires 15 minutes after it was issued, on the server's clock.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import math
import re
import struct
import zlib
from typing import Any

from dynastore import messages
from dynastore.engine.changelog import ChangeRecord
from dynastore.engine.context import Context
from dynastore.engine.stream_shards import Shard, TableShards
from dynastore.errors import (
    ExpiredIteratorException,
    ResourceNotFoundException,
    TrimmedDataAccessException,
    ValidationException,
)
from dynastore.limits import (
    STREAM_ITERATOR_LIFETIME_SECONDS,
    STREAM_READ_MAX_BYTES,
    STREAM_RETENTION_SECONDS,
)
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import CREATING, DELETING, UPDATING, KeySchema, TableDef
from dynastore.model.values import items_equal
from dynastore.storage.itemcodec import decode_item, stored_size

__all__ = [
    "DISABLED",
    "DISABLING",
    "ENABLED",
    "ENABLING",
    "RecordsPage",
    "ShardView",
    "StreamChange",
    "StreamSummary",
    "StreamView",
    "decode_change",
    "describe_stream",
    "get_records",
    "get_shard_iterator",
    "list_streams",
    "sequence_number",
    "shard_id",
]

ENABLED, DISABLED = "ENABLED", "DISABLED"
ENABLING, DISABLING = "ENABLING", "DISABLING"
_SAME_CHANGE = 0.01  # seconds: a stream change and the table status it caused are one request apart at most
_SEQ_BASE = 10**20  # sequence numbers as 21-digit strings
_SHARD_ID = re.compile(r"shardId-(\d{20})-([0-9a-f]{8})")
_STREAM_ARN = re.compile(
    r"arn:aws:dynamodb:([a-z0-9-]+):(\d{12}):table/([a-zA-Z0-9_.-]{3,255})/stream/"
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})"
)
_ITERATOR = struct.Struct(">IqdI")  # shard number, position (read after this seq), issued at, checksum
_ITERATOR_VERSION = "|1|"


# ---- identifiers ----------------------------------------------------------------------------------------------
def shard_id(shard: Shard) -> str:
    return f"shardId-{int(shard.opened_at * 1000):020d}-{shard.number:08x}"


def sequence_number(seq: int) -> str:
    return str(_SEQ_BASE + seq)


def _parse_sequence_number(text: str) -> int | None:
    if not text.isdigit() or not text.isascii():
        return None
    seq = int(text) - _SEQ_BASE
    return seq if seq >= 0 else None


def _shard_number(text: str) -> int | None:
    match = _SHARD_ID.fullmatch(text)
    return None if match is None else int(match.group(2), 16)


def _label_time(label: str) -> float:
    moment = datetime.datetime.strptime(label, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def _encode_iterator(arn: str, shard: int, after_seq: int, issued: float) -> str:
    body = _ITERATOR.pack(shard, after_seq, issued, 0)[:-4]
    checksum = zlib.crc32(body, zlib.crc32(arn.encode()))
    payload = base64.urlsafe_b64encode(body + checksum.to_bytes(4, "big")).decode()
    return f"{arn}{_ITERATOR_VERSION}{payload}"


def _decode_iterator(text: str) -> tuple[str, int, int, float]:
    arn, sep, payload = text.rpartition(_ITERATOR_VERSION)
    try:
        raw = base64.urlsafe_b64decode(payload) if sep else b""
    except (binascii.Error, ValueError):
        raw = b""
    checksum = zlib.crc32(raw[:-4], zlib.crc32(arn.encode()))
    if len(raw) != _ITERATOR.size or checksum != int.from_bytes(raw[-4:], "big"):
        raise ValidationException(messages.INVALID_SHARD_ITERATOR, bare=True)
    shard, after_seq, issued, _ = _ITERATOR.unpack(raw)
    if after_seq < -1 or not 0.0 <= issued < math.inf:  # a checksum is no signature: never issued by this server
        raise ValidationException(messages.INVALID_SHARD_ITERATOR, bare=True)
    return arn, shard, after_seq, issued


# ---- typed results --------------------------------------------------------------------------------------------
class StreamSummary:
    __slots__ = ("arn", "table_name", "label")

    def __init__(self, arn: str, table_name: str, label: str) -> None:
        self.arn = arn
        self.table_name = table_name
        self.label = label


class ShardView:
    __slots__ = ("shard_id", "parent_shard_id", "starting", "ending")

    def __init__(self, shard_id: str, parent_shard_id: str | None, starting: str, ending: str | None) -> None:
        self.shard_id = shard_id
        self.parent_shard_id = parent_shard_id
        self.starting = starting  # sequence numbers as DynamoDB writes them
        self.ending = ending  # None while the shard is open


class StreamView:
    __slots__ = ("arn", "label", "status", "view_type", "created_at", "table_name", "key_schema", "shards",
                 "last_evaluated_shard_id")  # fmt: skip

    def __init__(
        self,
        arn: str,
        label: str,
        status: str,
        view_type: str,
        created_at: float,
        table_name: str,
        key_schema: KeySchema,
        shards: list[ShardView],
        last_evaluated_shard_id: str | None,
    ) -> None:
        self.arn = arn
        self.label = label
        self.status = status
        self.view_type = view_type
        self.created_at = created_at
        self.table_name = table_name
        self.key_schema = key_schema
        self.shards = shards
        self.last_evaluated_shard_id = last_evaluated_shard_id


class StreamChange:
    """One change as a stream reader sees it: decoded items, the images its view type shows."""

    __slots__ = ("seq", "at", "event_name", "by_service", "keys", "new_image", "old_image", "size_bytes",
                 "view_type")  # fmt: skip

    def __init__(
        self,
        seq: int,
        at: float,
        event_name: str,
        by_service: bool,
        keys: dict[str, Any],
        new_image: dict[str, Any] | None,
        old_image: dict[str, Any] | None,
        size_bytes: int,
        view_type: str,
    ) -> None:
        self.seq = seq
        self.at = at
        self.event_name = event_name
        self.by_service = by_service
        self.keys = keys
        self.new_image = new_image
        self.old_image = old_image
        self.size_bytes = size_bytes
        self.view_type = view_type


class RecordsPage:
    __slots__ = ("changes", "next_iterator")

    def __init__(self, changes: list[StreamChange], next_iterator: str | None) -> None:
        self.changes = changes
        self.next_iterator = next_iterator  # None: a closed shard read to its end


def decode_change(key_schema: KeySchema, view_type: str, record: ChangeRecord) -> StreamChange | None:
    """``record`` as a reader of a stream of ``view_type`` sees it (also what a trigger is handed); None for an
    overwrite that left the item as it was (``ChangeRecord.maybe_unchanged``: no stream shows it)."""
    shows_new = view_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")
    shows_old = view_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES")
    new = decode_item(record.new) if record.new is not None else None
    compare = record.maybe_unchanged and new is not None
    old = decode_item(record.old) if record.old is not None and (shows_old or new is None or compare) else None
    if compare and old is not None and new is not None and items_equal(old, new):
        return None
    item = new if new is not None else old
    assert item is not None
    keys = {a.name: item[a.name] for a in (key_schema.hash_key, key_schema.range_key) if a is not None}
    size = item_size(keys)
    new_image = new if shows_new else None
    old_image = old if shows_old else None
    if new_image is not None and record.new is not None:
        size += stored_size(record.new)
    if old_image is not None and record.old is not None:
        size += stored_size(record.old)
    return StreamChange(
        record.seq, record.at, record.event_name, record.by_service, keys, new_image, old_image, size, view_type
    )


# ---- finding a stream -----------------------------------------------------------------------------------------
class _Stream:
    __slots__ = ("arn", "table", "label", "status", "view_type", "shards")

    def __init__(self, arn: str, table: TableDef, label: str, status: str, view_type: str, shards: TableShards) -> None:
        self.arn = arn
        self.table = table
        self.label = label
        self.status = status
        self.view_type = view_type
        self.shards = shards

    def shard(self, number: int) -> Shard | None:
        return self.shards.shard(self.label, number)


def _streams_of(ctx: Context, table: TableDef) -> list[_Stream]:
    """The table's streams a reader may still see: the enabled one (unless the table is being deleted or is gone)
    and those ended within the retention period."""
    table_arn = ctx.catalog.table_arn(table)  # a deleted table's namespace is the reader's (its scope matched)
    shards = ctx.shards.of(table.table_id)
    now = ctx.clock.now()
    found: dict[str, _Stream] = {}
    for ended in shards.ended.values():
        if now - ended.ended_at < STREAM_RETENTION_SECONDS:
            arn = f"{table_arn}/stream/{ended.label}"
            status = DISABLING if _changing(ctx, table, ended.ended_at) else DISABLED
            found[ended.label] = _Stream(arn, table, ended.label, status, ended.view_type, shards)
    stream = table.stream
    live = table.status != DELETING
    if live and stream is not None and stream.enabled and stream.label is not None and stream.view_type is not None:
        arn = f"{table_arn}/stream/{stream.label}"
        status = ENABLING if _changing(ctx, table, _label_time(stream.label)) else ENABLED
        found[stream.label] = _Stream(arn, table, stream.label, status, stream.view_type, shards)
    return sorted(found.values(), key=lambda s: s.label)


def _changing(ctx: Context, table: TableDef, since: float) -> bool:
    """Whether the table is still CREATING or UPDATING from the request that changed its stream at ``since``: then
    the stream is ENABLING or DISABLING, as DynamoDB reports it until the table is ACTIVE again."""
    until = table.status_until
    if until is None or table.status not in (CREATING, UPDATING) or until <= ctx.clock.now():
        return False
    delay = ctx.config.create_table_delay if table.status == CREATING else ctx.config.update_table_delay
    return abs(until - delay - since) < _SAME_CHANGE


def _find(ctx: Context, arn: str, *, validate: bool = True) -> _Stream:
    match = _STREAM_ARN.fullmatch(arn)
    if match is None:
        if validate:
            raise ValidationException(messages.INVALID_STREAM_ARN, bare=True)
        raise ResourceNotFoundException(messages.STREAM_NOT_FOUND.format(arn=arn))
    region, account, name, label = match.groups()
    if (account, region) == ctx.namespace:
        for table in _tables_named(ctx, name):
            for stream in _streams_of(ctx, table):
                if stream.label == label:
                    return stream
    raise ResourceNotFoundException(messages.STREAM_NOT_FOUND.format(arn=arn))


def _tables_named(ctx: Context, name: str) -> list[TableDef]:
    """The table of that name and the deleted ones whose streams are still readable."""
    table = ctx.catalog.find(name)
    found = [] if table is None else [table]
    seen = {t.table_id for t in found}
    found.extend(t for t in _deleted(ctx) if t.name == name and t.table_id not in seen)
    return found


def _all_tables(ctx: Context) -> list[TableDef]:
    """Every table, and the deleted ones whose streams are still readable."""
    found = [t for t in (ctx.catalog.find(n) for n in ctx.catalog.list_names()) if t is not None]
    seen = {t.table_id for t in found}
    found.extend(t for t in _deleted(ctx) if t.table_id not in seen)
    return found


def _deleted(ctx: Context) -> list[TableDef]:
    """The deleted tables of the namespace whose streams are readable now (the trim forgets them a little later)."""
    now = ctx.clock.now()
    scope = ctx.catalog.scope
    return [t for t, at, of in ctx.shards.deleted_tables() if of == scope and now - at < STREAM_RETENTION_SECONDS]


# ---- the calls ------------------------------------------------------------------------------------------------
def list_streams(
    ctx: Context, table_name: str | None, limit: int, exclusive_start_arn: str | None
) -> tuple[list[StreamSummary], str | None]:
    """The streams (all tables', or ``table_name``'s) in ARN order after ``exclusive_start_arn``; the last ARN
    returned when more follow."""
    if exclusive_start_arn is not None and _STREAM_ARN.fullmatch(exclusive_start_arn) is None:
        raise ValidationException(messages.INVALID_EXCLUSIVE_START_STREAM_ARN, bare=True)
    if table_name is not None:
        tables = _tables_named(ctx, table_name)
        if not tables:
            raise ResourceNotFoundException(messages.TABLE_NOT_FOUND.format(name=table_name))
    else:
        tables = _all_tables(ctx)
    by_arn: dict[str, _Stream] = {}
    for table in tables:  # the live table first: its stream wins over a deleted one's of the same label
        for stream in _streams_of(ctx, table):
            by_arn.setdefault(stream.arn, stream)
    streams = sorted(by_arn.values(), key=lambda s: s.arn)
    if exclusive_start_arn is not None:
        streams = [s for s in streams if s.arn > exclusive_start_arn]
    page = streams[:limit]
    last = page[-1].arn if len(streams) > limit else None
    return [StreamSummary(s.arn, s.table.name, s.label) for s in page], last


def describe_stream(
    ctx: Context, arn: str, limit: int, exclusive_start_shard_id: str | None, child_of: str | None = None
) -> StreamView:
    """The stream and up to ``limit`` of its shards (parents before children) after ``exclusive_start_shard_id``;
    ``child_of``: only the children of that shard (DescribeStream's CHILD_SHARDS filter)."""
    stream = _find(ctx, arn)
    if stream.status == ENABLED:
        _open_shards(ctx, stream)
    shards = sorted(stream.shards.of_stream(stream.label), key=lambda s: s.number)
    ids = {s.number: shard_id(s) for s in shards}
    if child_of is not None:
        parent = _shard_number(child_of)
        if parent is None:
            raise ValidationException(messages.INVALID_SHARD_ID, bare=True)
        shards = [s for s in shards if s.parent == parent and ids.get(parent) == child_of]
    if exclusive_start_shard_id is not None:
        start = _shard_number(exclusive_start_shard_id)
        if start is None:
            raise ValidationException(messages.INVALID_SHARD_ID, bare=True)
        shards = [s for s in shards if s.number > start]
    page = shards[:limit]
    views = [
        ShardView(
            ids[s.number],
            ids.get(s.parent) if s.parent else None,
            sequence_number(s.first_seq),
            None if s.last_seq is None else sequence_number(s.last_seq),
        )
        for s in page
    ]
    last = views[-1].shard_id if len(shards) > limit else None
    table = stream.table
    return StreamView(stream.arn, stream.label, stream.status, stream.view_type, _label_time(stream.label),
                      table.name, table.key_schema, views, last)  # fmt: skip


def _open_shards(ctx: Context, stream: _Stream) -> None:
    """An enabled stream shows its shards before its first change: open them now (a write would otherwise)."""
    if any(s.label == stream.label for s in stream.shards.open):
        return
    ctx.capacity.state(stream.table)  # its partitions (loading them may write: not inside the transaction below)
    with ctx.kv.write() as txn:
        ctx.shards.open_stream(txn, stream.table, ctx.changelog.next_seq, ctx.clock.now())


def get_shard_iterator(ctx: Context, arn: str, shard_text: str, iterator_type: str, seq_text: str | None) -> str:
    stream = _find(ctx, arn)
    number = _shard_number(shard_text)
    shard = None if number is None else stream.shard(number)
    if shard is None or shard_id(shard) != shard_text:
        raise ResourceNotFoundException(messages.SHARD_NOT_FOUND)
    changelog = ctx.changelog
    if iterator_type in ("TRIM_HORIZON", "LATEST"):
        if seq_text is not None:
            raise ValidationException(messages.SEQUENCE_NUMBER_NOT_ALLOWED.format(type=iterator_type), bare=True)
        if iterator_type == "TRIM_HORIZON":
            after = max(shard.first_seq - 1, changelog.trimmed_through)
        else:
            after = changelog.next_seq - 1 if shard.last_seq is None else shard.last_seq
    elif iterator_type in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        if seq_text is None:
            raise ValidationException(messages.SEQUENCE_NUMBER_REQUIRED.format(type=iterator_type), bare=True)
        seq = _parse_sequence_number(seq_text)
        # An open shard holds no sequence number beyond the newest one issued so far.
        newest = changelog.next_seq - 1 if shard.last_seq is None else shard.last_seq
        if seq is None or not shard.first_seq <= seq <= newest:
            raise ValidationException(
                messages.SEQUENCE_NUMBER_INVALID.format(sequence=seq_text, shard=shard_text), bare=True
            )
        if seq <= changelog.trimmed_through:
            raise TrimmedDataAccessException(messages.DATA_TRIMMED)
        after = seq - 1 if iterator_type == "AT_SEQUENCE_NUMBER" else seq
    else:
        raise ValidationException(messages.AT_TIMESTAMP_NOT_SERVED, bare=True)
    return _encode_iterator(stream.arn, shard.number, after, ctx.clock.now())


def get_records(ctx: Context, iterator: str, limit: int) -> RecordsPage:
    """Up to ``limit`` records (and at most STREAM_READ_MAX_BYTES of them, one at least) after the iterator's
    position, and the iterator that goes on after them."""
    arn, number, after, issued = _decode_iterator(iterator)
    now = ctx.clock.now()
    if now - issued > STREAM_ITERATOR_LIFETIME_SECONDS:
        raise ExpiredIteratorException(
            messages.ITERATOR_EXPIRED.format(
                created=_http_time(issued), now=_http_time(now), tolerated=STREAM_ITERATOR_LIFETIME_SECONDS * 1000
            )
        )
    stream = _find(ctx, arn, validate=False)
    shard = stream.shard(number)
    if shard is None:
        raise ResourceNotFoundException(messages.SHARD_OF_ITERATOR_NOT_FOUND)
    changelog = ctx.changelog
    if after < changelog.trimmed_through and shard.first_seq <= changelog.trimmed_through:
        raise TrimmedDataAccessException(messages.DATA_TRIMMED)
    table_id = stream.table.table_id
    changes: list[StreamChange] = []
    size = 0
    # One record more than asked: whether the shard holds more than this page.
    read = changelog.read_shard(table_id, number, after, limit + 1)
    records = read.records
    taken = 0
    for record in records[:limit]:
        change = decode_change(stream.table.key_schema, stream.view_type, record)
        if change is not None:
            if changes and size + change.size_bytes > STREAM_READ_MAX_BYTES:
                break
            changes.append(change)
            size += change.size_bytes
        after = record.seq
        taken += 1
    if taken == len(records):
        # Every record of the shard up to ``read.through`` was taken: go on from there, so that an idle shard's
        # iterator keeps up with the log and is never taken for one that points at trimmed records.
        after = max(after, read.through)
    if shard.last_seq is not None and after >= shard.last_seq:
        return RecordsPage(changes, None)  # a closed shard read to its end
    return RecordsPage(changes, _encode_iterator(stream.arn, number, after, now))


def _http_time(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, tz=datetime.UTC).strftime("%a %b %d %H:%M:%S UTC %Y")
