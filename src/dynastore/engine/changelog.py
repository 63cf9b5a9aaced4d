"""The change log: the item changes its consumers want, in commit order, durable (docs/design.md "The change log
and its consumers").

Consumers (``Consumer``: GSI propagation and streams in engine/log_consumers.py, triggers, anything a host
registers) say which tables they follow and what they need of their changes; the log keeps, per table, the most
any of them needs (``plan``, cached per table definition) and the write path asks it to log each write
(``log_write``). A write appends one record (``keyspace.change_key(seq)``) in its own storage transaction, so
the log holds a change exactly when the store holds it, whatever crashes; a transaction of several items stores
its changes as one record, a group (``group``), each change keeping its own sequence number. The record says
what happened to the item (the event, its storage key, when, whether the service did it), the stored old and
new values when a consumer needs images, and, for a table with GSIs, the GSI entry changes the write implies.
Consumers read it with ``read`` / ``read_shard`` and keep their checkpoints with ``save_checkpoint``; ``trim``
deletes the oldest records no consumer holds any more.

* GSI propagation: a record with GSI changes is also marked pending (``keyspace.gsi_pending_key(seq)``); the
  propagation consumer (engine/gsi_propagation.py) applies pending records and removes their marks, and tells
  the log how far it got (``applied_up_to``). The log never trims a marked record.
* Streams: a record written while the table's stream is enabled belongs to a shard (engine/stream_shards.py),
  named in its header; ``read_shard`` reads a shard's records in order through an index kept in memory
  (engine/shard_index.py), so a streamed write stores one key, its record.

Sequence numbers only grow, across restarts and trims: the next one is found from the newest record and from
the high-water mark the trim saves.

The watermarks GSI reads compare and the propagation lag are GSI propagation's (engine/gsi_propagation.py), told
of each marked record by ``marked``.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Container, Iterator
from typing import Final, Protocol

import orjson

from dynastore.engine.shard_index import ShardIndex
from dynastore.model.namespace import Origin
from dynastore.model.table_schema import TableDef
from dynastore.model.values import Item, items_equal
from dynastore.storage import keyspace
from dynastore.storage.itemcodec import decode_item
from dynastore.storage.kv import KV, ReadTxn, WriteTxn
from dynastore.util.clock import Clock

__all__ = [
    "IMAGES",
    "INDEX_CHANGES",
    "INSERT",
    "KEYS_ONLY",
    "MODIFY",
    "NOT_FOLLOWED",
    "NO_EVENT",
    "REMOVE",
    "ChangeLog",
    "ChangeGroup",
    "ChangeRecord",
    "Consumer",
    "GsiChange",
    "LogPlan",
    "Placer",
    "ShardRead",
    "Versioner",
    "decode_record",
    "decode_records",
    "encode_group",
    "encode_record",
    "group_members",
    "is_group",
    "last_seq_of",
    "newest_seq",
    "event_of",
    "read_sized",
    "seq_of",
]

GsiChange = tuple[bytes, bytes | None]  # (entry key, stored entry or None to delete it)

# What happened to the item. NO_EVENT: its data did not change (only a record's GSI changes matter, if any).
# Final: compiled code reads them from C statics (they are read on every logged write).
NO_EVENT: Final = 0
INSERT: Final = 1
MODIFY: Final = 2
REMOVE: Final = 3
EVENT_NAMES = ("", "INSERT", "MODIFY", "REMOVE")

_BY_SERVICE: Final = 0x80  # flag in the event byte: the service made the change (TTL), not a client
# Flag in the event byte: a consumer other than GSI propagation follows the record, so applying its GSI changes
# does not remove it (trimming does). A record in a stream shard is kept whether or not it has the flag (records
# of earlier versions do not).
_KEPT: Final = 0x40
# Flag in the event byte: no ``S`` key indexes the record. Every record written now has it; a stream record of an
# earlier version lacks it and has such a key (engine/shard_index.py), which trimming deletes with the record.
_NO_SHARD_KEY: Final = 0x20
_MAYBE_UNCHANGED: Final = 0x10  # flag in the event byte: ``ChangeRecord.maybe_unchanged``
# The first byte of a group record (no event is 14, and a group has no flags): the changes of one write
# transaction of several items (BatchWriteItem, TransactWriteItems) under one key, the sequence number of its first
# change; the others follow it (``ChangeGroup``). Each change is encoded as a record of its own is.
_GROUP: Final = 0x0E
_GROUP_HEAD: Final = struct.Struct(">BH")  # _GROUP, how many changes
_EVENT_BITS: Final = 0x0F
_ABSENT: Final = 0xFFFFFFFF
_HEAD: Final = struct.Struct(">BdII")  # event byte, time (server clock), table id, shard number (0: in no stream)
_TABLE_AND_SHARD: Final = struct.Struct(">II")  # the end of _HEAD: what indexing a record reads of it
_TABLE_AND_SHARD_AT: Final = _HEAD.size - _TABLE_AND_SHARD.size


class ChangeRecord:
    """One change of one item, decoded (``old`` / ``new``: the stored values, itemcodec, or None)."""

    __slots__ = (
        "seq", "at", "table_id", "shard", "event", "by_service", "key", "old", "new", "gsi", "kept", "maybe_unchanged"
    )  # fmt: skip

    def __init__(
        self,
        seq: int,
        at: float,
        table_id: int,
        shard: int,
        event: int,
        by_service: bool,
        key: bytes,
        old: bytes | None,
        new: bytes | None,
        gsi: list[GsiChange],
        kept: bool = False,
        maybe_unchanged: bool = False,
    ) -> None:
        self.seq = seq
        self.at = at
        self.table_id = table_id
        self.shard = shard
        self.event = event
        self.by_service = by_service
        self.key = key
        self.old = old
        self.new = new
        self.gsi = gsi
        self.kept = kept or shard != 0  # kept once its GSI changes are applied, until trimmed
        # A MODIFY whose images may be the same item: whether the write changed the item's data is its reader's
        # to tell (the stored bytes differ; attributes in another order, or a number spelled otherwise, do not
        # make another item). A stream reader that finds no change drops the record, as DynamoDB logs none.
        self.maybe_unchanged = maybe_unchanged

    @property
    def event_name(self) -> str:
        return EVENT_NAMES[self.event]


def event_of(old: bytes | None, new: bytes | None, changed: bool) -> int:
    """INSERT, MODIFY or REMOVE; NO_EVENT when the item's data did not change (``changed`` is False)."""
    if old is None:
        return NO_EVENT if new is None else INSERT
    if new is None:
        return REMOVE
    return MODIFY if changed else NO_EVENT


# ---- consumers ------------------------------------------------------------------------------------------------
# What a consumer needs of the changes of a table, in increasing order: the log keeps the most any consumer needs.
NOT_FOLLOWED: Final = 0
INDEX_CHANGES: Final = 1  # only the GSI entry changes a write implies (GSI propagation)
KEYS_ONLY: Final = 2  # which item changed and how (INSERT, MODIFY, REMOVE), when, and who made it
IMAGES: Final = 3  # and the item as stored before and after the change


class Consumer(Protocol):
    """A reader of the change log (docs/design.md "The change log and its consumers").

    Registered with ``ChangeLog.register`` by the composition root (or by a test), it says which tables it follows
    and what it needs of their changes (``need``), and until when it needs a record (``holds``: trimming stops at
    the first record a consumer holds). It reads with ``ChangeLog.read`` (or ``read_shard``) and keeps its
    position with ``ChangeLog.save_checkpoint`` under ``checkpoint_key`` (``keyspace.consumer_record_key(name)``
    unless it has kept it elsewhere before). ``need`` is asked once per table definition and set of consumers
    (the answer is cached), ``holds`` by the trimming in the background, never on the write path. A structural
    type: a consumer implements these members, it does not inherit them (compiled classes are closed).
    """

    @property
    def name(self) -> str:
        """Unique among the registered consumers."""
        ...

    @property
    def checkpoint_key(self) -> bytes:
        """Where its checkpoint is kept: a reserved catalog record of its own."""
        ...

    def need(self, table: TableDef) -> int:
        """NOT_FOLLOWED, INDEX_CHANGES, KEYS_ONLY or IMAGES: what it needs of ``table``'s changes."""
        ...

    def holds(self, record: ChangeRecord, now: float) -> bool:
        """Whether ``record`` must still be kept for this consumer (not read yet, or within its retention)."""
        ...


class Placer(Protocol):
    """What a consumer whose records are indexed (streams, into shards) adds: where each record goes."""

    def prepare(self, table: TableDef) -> None:
        """Before a write transaction on ``table`` opens: bring up to date what ``place`` reads (may write)."""
        ...

    def place(self, txn: WriteTxn, table: TableDef, key: bytes, seq: int, now: float) -> int:
        """Where the change of the item at ``key`` goes (a shard number, at least 1)."""
        ...


class Versioner(Protocol):
    """What a consumer that stamps something in the write's own transaction adds (global tables: the item's
    version, global_tables/replicator.py): called for every logged item change of a table it follows."""

    def stamp(self, txn: WriteTxn, table: TableDef, key: bytes, event: int, origin: Origin | None) -> None:
        """Stamp the change ``event`` (INSERT, MODIFY or REMOVE) of the item at ``key`` made by ``origin``."""
        ...


class LogPlan:
    """What the log does with a write to one table, derived from the consumers that follow it."""

    __slots__ = ("need", "events", "images", "kept", "placer", "versioner")

    def __init__(self, need: int, kept: bool, placer: Placer | None, versioner: Versioner | None = None) -> None:
        self.need = need  # the most any consumer needs (NOT_FOLLOWED: the write is not logged)
        self.events = need >= KEYS_ONLY  # item changes are logged (else only GSI changes)
        self.images = need >= IMAGES  # with the stored old and new item
        self.kept = kept  # a consumer other than GSI propagation follows: applying GSI changes keeps the record
        self.placer = placer  # the consumer placing its records (streams' shards), if it follows the table
        self.versioner = versioner  # the consumer stamping each change (global tables), if it follows the table


_HEAD_AND_KEY_LENGTH: Final = struct.Struct(">BdIIH")  # _HEAD, then the key's length
_LENGTH: Final = struct.Struct(">I")
_ABSENT_LENGTH: Final = _LENGTH.pack(_ABSENT)
_TWO_LENGTHS: Final = struct.Struct(">II")
_MEMBER_LENGTH_HEAD_AND_KEY_LENGTH: Final = struct.Struct(">IBdIIH")  # a group member's length, then as above
_NOTHING: Final = b""


def _length_of(value: bytes | None) -> bytes:
    return _ABSENT_LENGTH if value is None else _LENGTH.pack(len(value))


def encode_record(
    at: float,
    table_id: int,
    shard: int,
    event: int,
    by_service: bool,
    key: bytes,
    old: bytes | None,
    new: bytes | None,
    gsi: list[GsiChange],
    kept: bool = False,
    maybe_unchanged: bool = False,
) -> bytes:
    """One record as stored: the images are the items' stored bytes, copied once into the record."""
    parts: list[bytes] = []
    _add_record(parts, False, _flags(event, by_service, kept, maybe_unchanged), at, table_id, shard, key, old, new, gsi)
    return b"".join(parts)


def _flags(event: int, by_service: bool, kept: bool, maybe_unchanged: bool) -> int:
    """A record's first byte: its event and its flags."""
    flags = event | _NO_SHARD_KEY | (_BY_SERVICE if by_service else 0) | (_KEPT if kept else 0)
    return flags | _MAYBE_UNCHANGED if maybe_unchanged else flags


def _add_record(
    parts: list[bytes],
    as_member: bool,
    flags: int,
    at: float,
    table_id: int,
    shard: int,
    key: bytes,
    old: bytes | None,
    new: bytes | None,
    gsi: list[GsiChange],
) -> None:
    """Add the pieces of one record (its first byte ``flags``) to ``parts``; ``as_member``: as a member of a
    group record, its length first (``encode_group``'s layout), so that a group's changes are joined once, in
    the group, not each on its own and then again."""
    if as_member:
        length = _HEAD_AND_KEY_LENGTH.size + len(key) + 8 + (len(old) if old else 0) + (len(new) if new else 0)
        for entry_key, value in gsi:
            length += 6 + len(entry_key) + (len(value) if value else 0)
        parts.append(_MEMBER_LENGTH_HEAD_AND_KEY_LENGTH.pack(length, flags, at, table_id, shard, len(key)))
    else:
        parts.append(_HEAD_AND_KEY_LENGTH.pack(flags, at, table_id, shard, len(key)))
    parts.append(key)
    if old is None and new is not None:  # a new item, the streamed put's case: the two lengths packed at once
        parts.append(_TWO_LENGTHS.pack(_ABSENT, len(new)))
        parts.append(new)
    else:
        parts.append(_length_of(old))
        parts.append(old or _NOTHING)
        parts.append(_length_of(new))
        parts.append(new or _NOTHING)
    for entry_key, value in gsi:
        parts.append(len(entry_key).to_bytes(2, "big"))
        parts.append(entry_key)
        parts.append(_length_of(value))
        parts.append(value or _NOTHING)


def read_sized(view: memoryview, pos: int) -> tuple[bytes | None, int]:
    length = int.from_bytes(view[pos : pos + 4], "big")
    pos += 4
    if length == _ABSENT:
        return None, pos
    return bytes(view[pos : pos + length]), pos + length


def decode_record(seq: int, raw: bytes) -> ChangeRecord:
    view = memoryview(raw)
    flags, at, table_id, shard = _HEAD.unpack_from(view, 0)
    pos = _HEAD.size
    klen = int.from_bytes(view[pos : pos + 2], "big")
    key = bytes(view[pos + 2 : pos + 2 + klen])
    pos += 2 + klen
    old, pos = read_sized(view, pos)
    new, pos = read_sized(view, pos)
    gsi: list[GsiChange] = []
    end = len(raw)
    while pos < end:
        elen = int.from_bytes(view[pos : pos + 2], "big")
        entry_key = bytes(view[pos + 2 : pos + 2 + elen])
        value, pos = read_sized(view, pos + 2 + elen)
        gsi.append((entry_key, value))
    by_service, kept, maybe_unchanged = bool(flags & _BY_SERVICE), bool(flags & _KEPT), bool(flags & _MAYBE_UNCHANGED)
    event = flags & _EVENT_BITS
    return ChangeRecord(seq, at, table_id, shard, event, by_service, key, old, new, gsi, kept, maybe_unchanged)


def is_group(raw: bytes) -> bool:
    """Whether a stored record is a group record (the changes of one write transaction)."""
    return raw[0] == _GROUP


def encode_group(members: list[bytes]) -> bytes:
    """A group record of the encoded records ``members`` (``encode_record``), in sequence order."""
    parts = [_GROUP_HEAD.pack(_GROUP, len(members))]
    for member in members:
        parts.append(_LENGTH.pack(len(member)))
        parts.append(member)
    return b"".join(parts)


def group_members(raw: bytes) -> list[bytes]:
    """The encoded records of a group record, in sequence order (the first has the group key's sequence number)."""
    return [raw[start:end] for start, end in _member_spans(raw)]


def _member_spans(raw: bytes) -> list[tuple[int, int]]:
    """Where each change of a group record starts and ends in it."""
    pos = _GROUP_HEAD.size
    spans: list[tuple[int, int]] = []
    for _ in range(_GROUP_HEAD.unpack_from(raw, 0)[1]):
        start = pos + 4
        pos = start + _LENGTH.unpack_from(raw, pos)[0]
        spans.append((start, pos))
    return spans


def decode_records(seq: int, raw: bytes) -> list[ChangeRecord]:
    """The changes a stored record holds: itself, or a group's, numbered from ``seq`` (its key's)."""
    if not is_group(raw):
        return [decode_record(seq, raw)]
    return [decode_record(seq + offset, member) for offset, member in enumerate(group_members(raw))]


def last_seq_of(seq: int, raw: bytes) -> int:
    """The sequence number of the last change a stored record under ``seq`` holds."""
    return seq + _GROUP_HEAD.unpack_from(raw, 0)[1] - 1 if is_group(raw) else seq


def seq_of(key: bytes) -> int:
    return int.from_bytes(key[1:9], "big")


def _changed(old: Item | None, old_raw: bytes | None, new: Item | None, new_raw: bytes | None) -> bool:
    """Whether a write changed the item's data (DynamoDB logs no stream record for one that did not). ``old``: the
    stored item decoded, or None when the write path did not need it (then it is decoded here, and only when
    the stored bytes differ)."""
    if old_raw == new_raw:
        return False
    if old_raw is None or new is None:
        return True
    return not items_equal(old if old is not None else decode_item(old_raw), new)


# At most this many records of the log are indexed by one shard read (a few milliseconds of the loop). Not Final:
# tests lower it.
INDEX_RECORDS_PER_READ = 20_000


class ShardRead:
    """What ``ChangeLog.read_shard`` read: the records; ``through``: every record of the shard with a sequence
    number up to it is among them or was before the read's start (the position to read on from once ``records``
    are consumed); ``complete``: the shard index had reached the log's end (False after a restart while a large
    log is being indexed: a read that found nothing may find more at once)."""

    __slots__ = ("records", "through", "complete")

    def __init__(self, records: list[ChangeRecord], through: int, complete: bool) -> None:
        self.records = records
        self.through = through
        self.complete = complete


class ChangeLog:
    """The change log of one dynastore. Used from the event-loop thread only (like the KV)."""

    def __init__(self, kv: KV, clock: Clock) -> None:
        self._kv = kv
        self._clock = clock
        self._next_seq, self.trimmed_through = _next_seq(kv)  # trimmed_through: newest seq trimmed (-1: none)
        # Told the sequence number of each record marked pending for GSI propagation, once it is in the write's
        # transaction (set by the composition root: engine/gsi_propagation.py keeps the watermarks).
        self.marked: Callable[[int], None] | None = None
        self._consumers: list[Consumer] = []
        self._placers: dict[str, Placer] = {}  # consumer name -> how its records are placed
        self._versioners: dict[str, Versioner] = {}  # consumer name -> what it stamps in each write
        self._plans: dict[int, tuple[TableDef, LogPlan]] = {}  # table id -> (definition, its plan)
        self._shard_index = ShardIndex()  # which records each stream shard holds (filled as shards are read)
        # The record of the group open (``group``) in pieces (``_add_record``'s), None when none is: joined and
        # stored as one record when it ends.
        self._group: list[bytes] | None = None
        self._group_size = 0  # how many changes the open group holds
        self._group_marked = False  # a change of the open group has GSI changes: the group is marked pending

    # ---- consumers ------------------------------------------------------------------------------------------
    def register(self, consumer: Consumer, placer: Placer | None = None, versioner: Versioner | None = None) -> None:
        """Follow the log with ``consumer`` from the next write on; its name must be unique. With ``placer`` the
        records of the tables it follows are placed (one such consumer at most: the shard is one field); with
        ``versioner`` each change of those tables is stamped in its write's transaction (one such consumer
        at most)."""
        if any(c.name == consumer.name for c in self._consumers):
            raise ValueError(f"a change log consumer named {consumer.name!r} is registered already")
        if placer is not None:
            if self._placers:
                raise ValueError("the records of the change log are placed by one consumer only")
            self._placers[consumer.name] = placer
        if versioner is not None:
            if self._versioners:
                raise ValueError("the changes of the change log are stamped by one consumer only")
            self._versioners[consumer.name] = versioner
        self._consumers.append(consumer)
        self._plans.clear()

    def unregister(self, consumer: Consumer) -> None:
        """Stop following: its records are no longer held (nor logged, unless another consumer wants them)."""
        self._consumers.remove(consumer)
        self._placers.pop(consumer.name, None)
        self._versioners.pop(consumer.name, None)
        self._plans.clear()

    @property
    def consumers(self) -> tuple[Consumer, ...]:
        return tuple(self._consumers)

    def plan(self, table: TableDef) -> LogPlan:
        """What is logged of a write to ``table``: asked on every write, computed once per table definition (a
        table's definition is replaced whenever it changes) and set of consumers."""
        cached = self._plans.get(table.table_id)
        if cached is not None and cached[0] is table:
            return cached[1]
        plan = self._plan(table)
        self._plans[table.table_id] = (table, plan)
        return plan

    def _plan(self, table: TableDef) -> LogPlan:
        need, kept, placer, versioner = NOT_FOLLOWED, False, None, None
        for consumer in self._consumers:
            wanted = consumer.need(table)
            need = max(need, wanted)
            kept = kept or wanted >= KEYS_ONLY
            if wanted >= KEYS_ONLY:
                placer = placer or self._placers.get(consumer.name)
                versioner = versioner or self._versioners.get(consumer.name)
        return LogPlan(need, kept, placer, versioner)

    # ---- checkpoints ----------------------------------------------------------------------------------------
    def load_checkpoint(self, consumer: Consumer) -> bytes | None:
        """The checkpoint ``consumer`` saved last (None: none yet); its content is the consumer's."""
        with self._kv.read() as txn:
            return txn.get(consumer.checkpoint_key)

    def save_checkpoint(self, consumer: Consumer, value: bytes) -> None:
        """Keep ``consumer``'s position durably, in a storage transaction of its own: after a crash it reads
        again from the last position saved (at least once)."""
        with self._kv.write() as txn:
            txn.put(consumer.checkpoint_key, value)

    # ---- writing --------------------------------------------------------------------------------------------
    def group(self, txn: WriteTxn) -> ChangeGroup:
        """``with changelog.group(txn):`` around the writes of one transaction of several items: their changes
        are stored as one record (one key, one write-ahead log entry, instead of one per item); an error leaving
        the block drops them, as it takes the transaction back. Inside a group already open, it does nothing."""
        return ChangeGroup(self, txn)

    def _open_group(self) -> bool:
        if self._group is not None:
            return False
        self._group = [_NOTHING]  # the group record's head goes first, once its size is known
        self._group_size = 0
        self._group_marked = False
        return True

    def _close_group(self, txn: WriteTxn, keep: bool) -> None:
        parts, self._group = self._group, None
        size = self._group_size
        if parts is None or not keep or not size:
            return
        if size == 1:  # stored as the change alone: without its length as a member
            parts[1] = parts[1][_LENGTH.size :]
        else:
            parts[0] = _GROUP_HEAD.pack(_GROUP, size)
        base = self._next_seq - size  # the group's changes took the last sequence numbers, in a row
        txn.append(keyspace.change_key(base), b"".join(parts))
        if self._group_marked:
            txn.put(keyspace.gsi_pending_key(base), b"")
            marked = self.marked
            if marked is not None:
                marked(base)

    def log_write(
        self,
        txn: WriteTxn,
        table: TableDef,
        plan: LogPlan,
        key: bytes,
        change: tuple[Item | None, bytes | None, Item | None, bytes | None],
        gsi: list[GsiChange],
        by_service: bool,
        origin: Origin | None = None,
    ) -> None:
        """Log a write to ``table`` in its transaction ``txn`` as its consumers need it (``plan``, the table's
        ``plan(table)``, asked before the transaction opened): the item change (nothing when its data did not
        change) with the stored old and new item when a consumer needs images, the GSI entry changes for
        propagation; nothing at all when neither is wanted. The plan's versioner, if any, stamps every item
        write, one that changed nothing included (``origin``: who made it), and such a write is logged too (as
        NO_EVENT: no stream shows it). ``change``: the old item (None when the write path did not decode it), its
        stored bytes, the new item and its stored bytes; the images logged are those bytes, never re-encoded."""
        old, old_raw, new, new_raw = change
        event = NO_EVENT
        maybe_unchanged = False
        if plan.events:
            if old is None and plan.images and old_raw is not None and new_raw is not None and old_raw != new_raw:
                # Telling whether the overwrite changed the item would mean decoding the stored item here (most of
                # what a stream cost an overwrite); the record carries both images, so its reader tells instead.
                event, maybe_unchanged = MODIFY, True
            else:
                event = event_of(old_raw, new_raw, _changed(old, old_raw, new, new_raw))
        if plan.need < INDEX_CHANGES:
            gsi = []
        versioner = plan.versioner
        if event == NO_EVENT and not gsi and versioner is None:
            return
        shard = 0
        kept = event != NO_EVENT and plan.kept
        now = self._clock.now()  # one reading: the record's time is the one its shard was placed at
        if event != NO_EVENT and plan.placer is not None:
            shard = plan.placer.place(txn, table, key, self._next_seq, now)
        if versioner is not None:
            # A write that changed nothing (a delete of an item not here yet, an item written as it was) still
            # happened at its time: stamped and logged (in no stream shard), so that it wins over older writes
            # of other regions where it must.
            versioner.stamp(txn, table, key, event or (REMOVE if new_raw is None else MODIFY), origin)
            kept = plan.kept
        images = event != NO_EVENT and plan.images
        self.append(
            txn,
            at=now,
            table_id=table.table_id,
            shard=shard,
            event=event,
            by_service=by_service,
            key=key,
            old=old_raw if images else None,
            new=new_raw if images else None,
            gsi=gsi,
            kept=kept,
            maybe_unchanged=maybe_unchanged,
        )

    def append(
        self,
        txn: WriteTxn,
        *,
        at: float,
        table_id: int,
        shard: int,
        event: int,
        by_service: bool,
        key: bytes,
        old: bytes | None,
        new: bytes | None,
        gsi: list[GsiChange],
        kept: bool = False,
        maybe_unchanged: bool = False,
    ) -> int:
        """Append one change in ``txn`` (the write's own transaction), made at time ``at``; returns its sequence
        number."""
        seq = self._next_seq
        self._next_seq = seq + 1
        group = self._group
        if group is not None:
            _add_record(
                group, True, _flags(event, by_service, kept, maybe_unchanged), at, table_id, shard, key, old, new, gsi
            )
            self._group_size += 1
            if gsi:
                self._group_marked = True
            return seq
        record = encode_record(at, table_id, shard, event, by_service, key, old, new, gsi, kept, maybe_unchanged)
        txn.append(keyspace.change_key(seq), record)
        if gsi:
            txn.put(keyspace.gsi_pending_key(seq), b"")
            marked = self.marked
            if marked is not None:
                marked(seq)
        return seq

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def indexed_records(self) -> int:
        """How many records the shard index holds (8 bytes of memory each)."""
        return len(self._shard_index)

    # ---- reading ------------------------------------------------------------------------------------------
    def read(self, after_seq: int, limit: int, table_ids: Container[int] | None = None) -> list[ChangeRecord]:
        """Up to ``limit`` records with a sequence number above ``after_seq``, in order (of the tables
        ``table_ids`` only, when given)."""
        out: list[ChangeRecord] = []
        with self._kv.read() as txn:
            for key, raw in _stored_from(txn, after_seq + 1):
                seq = seq_of(key)
                for record in decode_records(seq, raw):
                    if record.seq > after_seq and (table_ids is None or record.table_id in table_ids):
                        out.append(record)
                        if len(out) >= limit:
                            return out
        return out

    def read_shard(self, table_id: int, shard: int, after_seq: int, limit: int) -> ShardRead:
        """Up to ``limit`` records of a stream shard with a sequence number above ``after_seq``, in order, and how
        far the shard was read (``ShardRead.through``)."""
        index = self._shard_index
        out: list[ChangeRecord] = []
        with self._kv.read() as txn:
            complete = self._index_new_records(txn)
            seqs = index.after(table_id, shard, after_seq, limit)
            group = _GroupRead()
            for seq in seqs:
                raw = group.change(txn, seq)
                if raw is not None:
                    out.append(decode_record(seq, raw))
        through = seqs[-1] if len(seqs) >= limit else max(after_seq, index.through)
        return ShardRead(out, through, complete)

    def _index_new_records(self, txn: ReadTxn) -> bool:
        """Bring the shard index up to the log's end, or by INDEX_RECORDS_PER_READ records when it is further
        (after a restart: a large log is indexed over several reads rather than in one stop of the loop); True
        when it reached the end."""
        index = self._shard_index
        through = index.through
        unpack = _TABLE_AND_SHARD.unpack_from
        lo = keyspace.change_key(through + 1)
        hi = keyspace.prefix_end(keyspace.change_prefix())
        budget = INDEX_RECORDS_PER_READ
        read = 0
        for key, raw in itertools.islice(txn.iter_range(lo, hi), budget):
            through = seq_of(key)
            if is_group(raw):
                for start, _ in _member_spans(raw):  # each change's header, read in place
                    table_id, shard = unpack(raw, start + _TABLE_AND_SHARD_AT)
                    if shard:
                        index.add(table_id, shard, through)
                    through += 1
                through -= 1
            else:
                table_id, shard = unpack(raw, _TABLE_AND_SHARD_AT)
                if shard:
                    index.add(table_id, shard, through)
            read += 1
        if read >= budget:
            index.through = through  # perhaps short of the end: the next read goes on from here
            return False
        # Every change logged so far is committed (one thread writes): nothing up to the log's end is missing.
        index.through = max(through, self._next_seq - 1)
        return True

    # ---- trimming -----------------------------------------------------------------------------------------
    def trim(self, now: float, max_records: int) -> bool:
        """Delete up to ``max_records`` of the oldest records no consumer holds any more (past the slowest
        consumer's position and every retention period) and whose GSI changes are applied; True while more may
        be due. Stops at the first record held, so every record up to ``trimmed_through`` is gone. The next
        sequence number is saved, so sequence numbers never go back even when the log empties."""
        prefix = keyspace.change_prefix()
        consumers = self._consumers
        trimmed = 0
        with self._kv.write() as txn:
            for key, raw in txn.iter_range(prefix, keyspace.prefix_end(prefix)):
                if trimmed >= max_records:
                    break
                seq = seq_of(key)
                last = _last_unheld(seq, raw, consumers, now)  # a group goes when none of its changes is held
                if last < last_seq_of(seq, raw):
                    break
                if txn.get(keyspace.gsi_pending_key(seq)) is not None:
                    break  # its GSI changes come first
                txn.delete(key)
                if not is_group(raw) and not raw[0] & _NO_SHARD_KEY:  # an earlier version's record: its index key
                    table_id, shard = _TABLE_AND_SHARD.unpack_from(raw, _TABLE_AND_SHARD_AT)
                    if shard:
                        txn.delete(keyspace.shard_record_key(table_id, shard, seq))
                trimmed += 1
                self.trimmed_through = last
            if trimmed:
                self._shard_index.forget_through(self.trimmed_through)
                txn.put(
                    keyspace.meta_key(keyspace.CHANGELOG_RECORD),
                    orjson.dumps({"kind": "changelog", "next": self._next_seq, "trimmed": self.trimmed_through}),
                )
        return trimmed >= max_records


def newest_seq(kv: KV, prefix: bytes) -> int:
    """The seq of the newest key under ``prefix`` (the change log or its GSI marks), or -1; in the change log, of
    the newest change (the last of a group)."""
    with kv.read() as txn:
        last = next(iter(txn.iter_range(prefix, keyspace.prefix_end(prefix), reverse=True)), None)
    if last is None:
        return -1
    key, raw = last
    return last_seq_of(seq_of(key), raw) if prefix == keyspace.change_prefix() else seq_of(key)


def _last_unheld(seq: int, raw: bytes, consumers: list[Consumer], now: float) -> int:
    """The sequence number of the last change of the stored record ``seq`` before the first one a consumer holds
    (``seq - 1`` when its first is held). Decodes its changes one at a time: the log's oldest record is usually
    held, and a group of 25 decoded whole on every trimming pass would cost more than the trimming."""
    changes = group_members(raw) if is_group(raw) else [raw]
    for offset, change in enumerate(changes):
        record = decode_record(seq + offset, change)
        if any(consumer.holds(record, now) for consumer in consumers):
            return seq + offset - 1
    return seq + len(changes) - 1


def _record_before(txn: ReadTxn, seq: int) -> tuple[bytes, bytes] | None:
    """The stored record (key, value) before the change ``seq``'s own key: a group that may hold ``seq``."""
    prefix = keyspace.change_prefix()
    return next(iter(txn.iter_range(prefix, keyspace.change_key(seq), reverse=True)), None)


def _stored_from(txn: ReadTxn, seq: int) -> Iterator[tuple[bytes, bytes]]:
    """The stored records from the one holding the change ``seq`` (a group's first change may come before it)."""
    start = keyspace.change_key(seq)
    before = _record_before(txn, seq)
    if before is not None and last_seq_of(seq_of(before[0]), before[1]) >= seq:
        start = before[0]
    return txn.iter_range(start, keyspace.prefix_end(keyspace.change_prefix()))


class _GroupRead:
    """Finds changes by sequence number for one read, keeping the changes of the last group found (the changes of a
    group are read in a row)."""

    def __init__(self) -> None:
        self.first = -1  # the sequence number of the group's first change
        self.members: list[bytes] = []

    def change(self, txn: ReadTxn, seq: int) -> bytes | None:
        """The encoded change ``seq``, None when it was trimmed (or taken back)."""
        offset = seq - self.first
        if 0 <= offset < len(self.members):
            return self.members[offset]
        raw = txn.get(keyspace.change_key(seq))
        first = seq
        if raw is None:  # a change after a group's first, or gone
            before = _record_before(txn, seq)
            if before is None:
                return None
            first, raw = seq_of(before[0]), before[1]
        if not is_group(raw):
            return raw if first == seq else None
        members = group_members(raw)
        if seq - first >= len(members):
            return None
        self.first, self.members = first, members
        return members[seq - first]


class ChangeGroup:
    """The block of ``ChangeLog.group``."""

    def __init__(self, log: ChangeLog, txn: WriteTxn) -> None:
        self._log = log
        self._txn = txn
        self._opened = False

    def __enter__(self) -> None:
        self._opened = self._log._open_group()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if self._opened:
            self._log._close_group(self._txn, exc_type is None)


def _next_seq(kv: KV) -> tuple[int, int]:
    """The next sequence number and the newest one trimmed (-1: none), from the store."""
    saved, trimmed = 0, -1
    with kv.read() as txn:
        raw = txn.get(keyspace.meta_key(keyspace.CHANGELOG_RECORD))
    if raw is not None:
        rec = orjson.loads(raw)
        saved, trimmed = int(rec["next"]), int(rec.get("trimmed", -1))
    return max(saved, newest_seq(kv, keyspace.change_prefix()) + 1), trimmed
