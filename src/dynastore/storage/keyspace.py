"""The layout of every key in the store: one tag per kind of record, and the reserved catalog record names.

The KV is one ordered byte-key space. Every key starts with a tag saying what lives under it; no tag equals
or is a prefix of another (``tests/unit/storage/test_keyspace.py``), so a range scan over one tag never
meets another kind of record. Integers are big-endian, ``enc`` is the order-preserving, self-delimiting
value encoding of ``keycodec`` and ``phash`` is ``partition_hash`` below.

==================  =============================================================  ============================
tag                 key                                                             written by
==================  =============================================================  ============================
``I`` item          ``I | table_id:4 | phash(hash_enc):4 | hash_enc | range_enc``  engine/writes.py
``X`` index entry   ``X | index_id:4 | phash(idx_hash_enc):4 | idx_hash_enc |``    engine/indexes.py
                    ``idx_range_enc | hash_enc | range_enc``
``C`` catalog       ``C | name (UTF-8)``: a table's name, or a reserved name below  storage/catalog.py and others
``H`` change log    ``H | sequence:8``                                              engine/changelog.py
``Q`` GSI pending   ``Q | sequence:8`` (the change record's GSI changes unapplied)  engine/changelog.py
``S`` shard record  ``S | table_id:4 | shard:4 | sequence:8``                       earlier versions (below)
``L`` collection    ``L | table_id:4 | hash_enc``                                   engine/indexes.py
``V`` item version  ``V | table_id:4 | phash(hash_enc):4 | hash_enc | range_enc``  global_tables/versions.py
``T 00`` token      ``T 00 | client request token (UTF-8)``                         engine/transactions.py
``T 01`` expiry     ``T 01 | expires_at_ms:8 | client request token (UTF-8)``       engine/transactions.py
==================  =============================================================  ============================

``S`` keys indexed stream records by shard in earlier versions; the index is now kept in memory
(engine/shard_index.py) and the keys left are deleted as their records are trimmed, so the tag stays reserved.

Catalog record names starting with ``#`` are reserved: ``#`` cannot appear in a table name, so they never
collide with a table's record. ``Catalog.load`` reads every ``C`` record and skips kinds it does not own.

Namespaces (an account and a region, storage/catalog.py): every key above belongs to the default namespace (the
config's account and region) or is shared by all, since table and index ids come from one sequence. What another
namespace needs apart is keyed by its *scope* ``<account>/<region>``: its tables' catalog records are named
``@<scope>/<table name>`` (``@`` cannot appear in a table name either), and its client request tokens are
``T 00 | FF <scope> FF | token`` (FF never occurs in UTF-8, so no token of the default namespace starts so).

``phash`` spreads a table's partition keys over the 2^32 hash space, giving DynamoDB-like Scan order; a Scan
segment, and a partition for throttling, is a contiguous range of that space.

The LMDB engine stores these keys in its ``main`` database, and keys too long for LMDB as chains in its
``long`` database (``storage/lmdb_layout.py``); that is below this layout and invisible to it.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Final

__all__ = [
    "ALL_TAGS",
    "BACKFILL_CURSOR_PREFIX",
    "CHANGELOG_RECORD",
    "DELETED_STREAMS_RECORD",
    "CHANGE_TAG",
    "GSI_PENDING_TAG",
    "SHARDS_RECORD_PREFIX",
    "SHARD_RECORD_TAG",
    "CAPACITY_RECORD_PREFIX",
    "COLLECTION_TAG",
    "INDEX_TAG",
    "ITEM_TAG",
    "KEY_HEAD_BYTES",
    "MAX_SEGMENTS",
    "META_TAG",
    "PURGE_RECORD",
    "RESERVED_NAME_MARK",
    "RESERVED_RECORD_NAMES",
    "RESERVED_RECORD_PREFIXES",
    "SEQUENCE_RECORD",
    "TOKEN_EXPIRY_PREFIX",
    "TOKEN_PREFIX",
    "VERSION_TAG",
    "TRIGGER_RECORD_PREFIX",
    "TRANSFER_ACTIVE_PREFIX",
    "TRANSFER_RECORD_PREFIX",
    "backfill_cursor_key",
    "change_key",
    "change_prefix",
    "gsi_pending_key",
    "gsi_pending_prefix",
    "shard_record_key",
    "shard_record_prefix",
    "shard_records_of_table",
    "shards_record_key",
    "capacity_record_key",
    "collection_key",
    "collection_prefix",
    "hash_key_prefix",
    "index_hash_key_prefix",
    "index_key",
    "index_prefix",
    "index_segment_bounds",
    "item_key",
    "meta_key",
    "meta_prefix",
    "namespaced_record_name",
    "token_scope",
    "partition_hash",
    "prefix_end",
    "segment_bounds",
    "table_prefix",
    "consumer_record_key",
    "trigger_record_key",
    "version_key",
    "version_prefix",
]

# ---------------------------------------------------------------- tags

# Items: I | table_id:4 | phash:4 | enc(partition key) | enc(sort key, absent without one). Value: itemcodec.
ITEM_TAG: Final = b"I"
# Index entries (LSI and GSI): X | index_id:4 | phash:4 | enc(index keys) | enc(table keys). Value: the
# projected item (itemcodec). The table keys make an entry unique and give equal index keys a stable order.
INDEX_TAG: Final = b"X"
# Catalog records: C | name. Value: an orjson record with a "kind" (table definitions and the reserved names).
META_TAG: Final = b"C"
# The change log: H | sequence:8. Value: one item change with its GSI entry changes, in commit order
# (engine/changelog.py).
CHANGE_TAG: Final = b"H"
# GSI changes still to apply: Q | sequence:8, marking the change log record of that sequence number. Value:
# empty (a backlog record of an earlier version, holding its changes itself, is applied the same way).
GSI_PENDING_TAG: Final = b"Q"
# Stream shards' records: S | table_id:4 | shard:4 | sequence:8. Value: empty; the record is the change log's.
SHARD_RECORD_TAG: Final = b"S"
_SHARD_RECORD_KEY: Final = struct.Struct(">1sIIQ")
# Item collections: L | table_id:4 | enc(partition key). Value: size:8, the bytes of one partition key's items
# and LSI entries (tables with LSIs only; the 10 GB item-collection limit).
COLLECTION_TAG: Final = b"L"
# Item versions of global tables: V | the item key after its tag (table_id:4 | phash:4 | enc(keys)). Value:
# orjson [stamp, region, deleted] (global_tables/versions.py); a deleted item's version is its tombstone.
VERSION_TAG: Final = b"V"
# Client request tokens of TransactWriteItems: T 00 | token. Value: the request's fingerprint and outcome, so a
# retry is answered idempotently even after a crash (engine/transactions.py).
TOKEN_PREFIX: Final = b"T\x00"
# Token expiry index: T 01 | expires_at_ms:8 | token. Value: empty; swept in expiry order.
TOKEN_EXPIRY_PREFIX: Final = b"T\x01"

ALL_TAGS: Final = (
    ITEM_TAG,
    INDEX_TAG,
    META_TAG,
    CHANGE_TAG,
    GSI_PENDING_TAG,
    SHARD_RECORD_TAG,
    COLLECTION_TAG,
    VERSION_TAG,
    TOKEN_PREFIX,
    TOKEN_EXPIRY_PREFIX,
)

# Bytes before the partition key's encoding in an item key and in an index entry: tag, id:4, phash:4.
KEY_HEAD_BYTES: Final = 9

# ---------------------------------------------------------------- reserved catalog record names

# "#" cannot appear in a table name (TableName is [a-zA-Z0-9_.-]+), so names starting with it are never a table's.
RESERVED_NAME_MARK: Final = "#"
# {"kind": "seq", "next": N}: the id sequence shared by tables and indexes (ids are never reused).
SEQUENCE_RECORD: Final = "#seq"
# {"kind": "purge", "ids": [...]}: key ranges of deleted tables, indexes and collections still to be emptied.
PURGE_RECORD: Final = "#purge"
# "#capacity:<table_id>" -> {"kind": "capacity", ...}: a table's persisted burst and adaptive-capacity state.
CAPACITY_RECORD_PREFIX: Final = "#capacity:"
# "#backfill:<index_id>" -> {"kind": "backfill", "next": hex key}: where a new GSI's backfill continues.
BACKFILL_CURSOR_PREFIX: Final = "#backfill:"

# {"kind": "changelog", "next": N}: the change log's next sequence number, saved when records are trimmed.
CHANGELOG_RECORD: Final = "#changelog"
# "#shards:<table_id>" -> {"kind": "shards", ...}: a table's stream shards and their lineage
# (engine/stream_shards.py).
SHARDS_RECORD_PREFIX: Final = "#shards:"
# "#trigger:<name>" -> {"kind": "trigger", ...}: a trigger's checkpoint, per shard of the stream it follows the
# sequence number of the last record delivered (or skipped) and which shards it finished (triggers/checkpoints.py).
TRIGGER_RECORD_PREFIX: Final = "#trigger:"
# "#consumer:<name>" -> the checkpoint of a change log consumer, in the consumer's own format (engine/changelog.py;
# a trigger's is under TRIGGER_RECORD_PREFIX, where it has always been).
CONSUMER_RECORD_PREFIX: Final = "#consumer:"
# {"kind": "deleted-streams", "tables": [[table record, deleted at], ...]}: deleted tables whose streams are
# still readable (engine/stream_shards.py).
DELETED_STREAMS_RECORD: Final = "#deleted-streams"
# "#transfer:export:<export arn>" / "#transfer:import:<import arn>" -> {"kind": "export" | "import", ...}: an
# export's or an import's description and progress (engine/transfer_jobs.py).
TRANSFER_RECORD_PREFIX: Final = "#transfer:"
# "#transfer-active:<arn>" -> {"kind": "transfer-active", "job": ...}: the export or import still runs (or was
# running when the server stopped: it is then ended at start).
TRANSFER_ACTIVE_PREFIX: Final = "#transfer-active:"

RESERVED_RECORD_NAMES: Final = (SEQUENCE_RECORD, PURGE_RECORD, CHANGELOG_RECORD, DELETED_STREAMS_RECORD)
RESERVED_RECORD_PREFIXES: Final = (
    CAPACITY_RECORD_PREFIX,
    BACKFILL_CURSOR_PREFIX,
    SHARDS_RECORD_PREFIX,
    TRIGGER_RECORD_PREFIX,
    CONSUMER_RECORD_PREFIX,
    TRANSFER_RECORD_PREFIX,
    TRANSFER_ACTIVE_PREFIX,
)

# ---------------------------------------------------------------- partition hash

MAX_SEGMENTS = 1_000_000
_HASH_SPACE = 1 << 32
# A new hash object is copied from this one: cheaper than calling the type with a keyword argument each time.
_PHASH_START: Final = hashlib.blake2b(digest_size=4)

# Partition hashes are remembered: a request hashes its partition key more than once (admission, the item key,
# a Query's start key) and workloads come back to the same keys. Cleared when full.
_HASHES: Final[dict[bytes, bytes]] = {}
_HASHES_MAX: Final = 4096


def partition_hash(encoded_hash_key: bytes) -> bytes:
    """4 well-spread bytes (BLAKE2b) of an encoded partition key: its place in the table's hash space."""
    digest = _HASHES.get(encoded_hash_key)
    if digest is None:
        state = _PHASH_START.copy()
        state.update(encoded_hash_key)
        digest = state.digest()
        if len(_HASHES) >= _HASHES_MAX:
            _HASHES.clear()
        _HASHES[encoded_hash_key] = digest
    return digest


# ---------------------------------------------------------------- items and index entries


# The item and index prefixes of the tables and indexes in use, made once: every item or entry key starts with
# one, and ``int.to_bytes`` is a method call by name (several hundred instructions) where a dictionary look-up is
# a few dozen. Cleared when full, as _HASHES.
_ITEM_PREFIXES: Final[dict[int, bytes]] = {}
_INDEX_PREFIXES: Final[dict[int, bytes]] = {}
_PREFIXES_MAX: Final = 4096


def _tagged_id(prefixes: dict[int, bytes], tag: bytes, number: int) -> bytes:
    prefix = prefixes.get(number)
    if prefix is None:
        if len(prefixes) >= _PREFIXES_MAX:
            prefixes.clear()
        prefix = prefixes[number] = tag + number.to_bytes(4, "big")
    return prefix


def table_prefix(table_id: int) -> bytes:
    return _tagged_id(_ITEM_PREFIXES, ITEM_TAG, table_id)


def item_key(table_id: int, hash_enc: bytes, range_enc: bytes | None) -> bytes:
    head = hash_key_prefix(table_id, hash_enc)
    return head + range_enc if range_enc else head


def hash_key_prefix(table_id: int, hash_enc: bytes) -> bytes:
    """Prefix of every item with this partition key (a Query's range, in sort-key order)."""
    return _tagged_id(_ITEM_PREFIXES, ITEM_TAG, table_id) + partition_hash(hash_enc) + hash_enc


def version_key(item_key: bytes) -> bytes:
    """Where the version of the item stored at ``item_key`` is kept (global tables)."""
    return VERSION_TAG + item_key[1:]


def version_prefix(table_id: int) -> bytes:
    return VERSION_TAG + table_id.to_bytes(4, "big")


def index_prefix(index_id: int) -> bytes:
    return _tagged_id(_INDEX_PREFIXES, INDEX_TAG, index_id)


def index_key(
    index_id: int,
    idx_hash_enc: bytes,
    idx_range_enc: bytes | None,
    hash_enc: bytes,
    range_enc: bytes | None,
) -> bytes:
    """An index entry: index key first (Query order), then the table key (unique, stable order)."""
    return b"".join(
        (
            _tagged_id(_INDEX_PREFIXES, INDEX_TAG, index_id),
            partition_hash(idx_hash_enc),
            idx_hash_enc,
            idx_range_enc or b"",
            hash_enc,
            range_enc or b"",
        )
    )


def index_hash_key_prefix(index_id: int, idx_hash_enc: bytes) -> bytes:
    return _tagged_id(_INDEX_PREFIXES, INDEX_TAG, index_id) + partition_hash(idx_hash_enc) + idx_hash_enc


# ---------------------------------------------------------------- other records


def change_prefix() -> bytes:
    return CHANGE_TAG


def change_key(seq: int) -> bytes:
    """A change log record: sequence numbers are big-endian, so records iterate in the order they were written."""
    return CHANGE_TAG + seq.to_bytes(8, "big")


def gsi_pending_prefix() -> bytes:
    return GSI_PENDING_TAG


def gsi_pending_key(seq: int) -> bytes:
    return GSI_PENDING_TAG + seq.to_bytes(8, "big")


def shard_record_prefix(table_id: int, shard: int) -> bytes:
    return SHARD_RECORD_TAG + table_id.to_bytes(4, "big") + shard.to_bytes(4, "big")


def shard_record_key(table_id: int, shard: int, seq: int) -> bytes:
    return _SHARD_RECORD_KEY.pack(SHARD_RECORD_TAG, table_id, shard, seq)  # shard_record_prefix, then seq


def shard_records_of_table(table_id: int) -> bytes:
    return SHARD_RECORD_TAG + table_id.to_bytes(4, "big")


def shards_record_key(table_id: int) -> bytes:
    return meta_key(f"{SHARDS_RECORD_PREFIX}{table_id}")


def collection_prefix(table_id: int) -> bytes:
    return COLLECTION_TAG + table_id.to_bytes(4, "big")


def collection_key(table_id: int, hash_enc: bytes) -> bytes:
    """The size record of one item collection (tables with LSIs): all items and LSI entries of a partition key."""
    return COLLECTION_TAG + table_id.to_bytes(4, "big") + hash_enc


def meta_prefix() -> bytes:
    return META_TAG


def meta_key(name: str) -> bytes:
    """A catalog record key (table metadata and the reserved records)."""
    return META_TAG + name.encode("utf-8")


def namespaced_record_name(scope: str, name: str) -> str:
    """The catalog record name of table ``name`` of the namespace ``scope`` (``<account>/<region>``): it starts
    with ``@``, which no table name holds, and is no reserved name (those start with ``#``)."""
    return f"@{scope}/{name}"


def token_scope(scope: str) -> bytes:
    """What precedes a client request token in its keys: nothing in the default namespace (``scope`` empty)."""
    return b"\xff" + scope.encode() + b"\xff" if scope else b""


def capacity_record_key(table_id: int) -> bytes:
    return meta_key(f"{CAPACITY_RECORD_PREFIX}{table_id}")


def backfill_cursor_key(index_id: int) -> bytes:
    return meta_key(f"{BACKFILL_CURSOR_PREFIX}{index_id}")


def trigger_record_key(name: str) -> bytes:
    return meta_key(f"{TRIGGER_RECORD_PREFIX}{name}")


def consumer_record_key(name: str) -> bytes:
    return meta_key(f"{CONSUMER_RECORD_PREFIX}{name}")


# ---------------------------------------------------------------- ranges


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix`` (exclusive upper bound)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        raise ValueError("no key follows a prefix made only of FF bytes")
    return stripped[:-1] + bytes((stripped[-1] + 1,))


def _segment_bounds(prefix: bytes, segment: int, total_segments: int) -> tuple[bytes, bytes]:
    if not 1 <= total_segments <= MAX_SEGMENTS:
        raise ValueError(f"total_segments must be in 1..{MAX_SEGMENTS}")
    if not 0 <= segment < total_segments:
        raise ValueError("segment must be in 0..total_segments-1")
    start = (segment * _HASH_SPACE) // total_segments
    end = ((segment + 1) * _HASH_SPACE) // total_segments
    lo = prefix + start.to_bytes(4, "big")
    hi = prefix + end.to_bytes(4, "big") if end < _HASH_SPACE else prefix_end(prefix)
    return lo, hi


def segment_bounds(table_id: int, segment: int, total_segments: int) -> tuple[bytes, bytes]:
    """``[lo, hi)`` of Scan segment ``segment``: the hash space cut into contiguous, disjoint ranges."""
    return _segment_bounds(table_prefix(table_id), segment, total_segments)


def index_segment_bounds(index_id: int, segment: int, total_segments: int) -> tuple[bytes, bytes]:
    return _segment_bounds(index_prefix(index_id), segment, total_segments)
