"""How ``LmdbKV`` lays keys out in its two LMDB databases, and the range scans over that layout.

Long keys. LMDB keys are limited to ``env.max_key_size()`` (511 bytes in the bundled build) while
DynamoDB keys reach 2048 + 1024 bytes before encoding. Longer keys are stored as a chain of groups,
transparently and in order:

* in the main database a key of at most ``M - 1`` bytes (``M`` = max key size) is stored as is;
* every key longer than that with head ``h = key[:M-1]`` lives in a *group*: the main database holds
  one marker ``h + b"\\x00"`` (exactly ``M`` bytes, so it is told apart by its length) whose value is an
  8-byte group id, and the tail ``key[M-1:]`` is stored in the ``long`` database under ``gid + tail``;
* a tail longer than ``M - 9`` bytes nests the same way (``gid + tail[:M-9] + b"\\x00"`` → child gid).

The marker sorts right after ``h`` and before every key greater than all keys starting with ``h``, so a
range scan visits groups exactly where their keys belong. Group ids come from a counter stored in the
``long`` database under eight zero bytes; a group's marker is removed when its last key is deleted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import lmdb

from dynastore.storage.kv import StorageError

if TYPE_CHECKING:
    _Txn = lmdb.Transaction[bytes]
    _Db = lmdb._Database

__all__ = ["Layout", "delete_long", "get_long", "put_long", "scan_root", "scan_root_reverse"]

_ID_LEN = 8
_COUNTER_KEY = bytes(_ID_LEN)


class Layout:
    """The databases and the long-key thresholds of one environment."""

    __slots__ = ("main", "long", "root_max", "nest_max")

    def __init__(self, main: _Db, long: _Db, max_key_size: int) -> None:
        self.main = main
        self.long = long
        self.root_max = max_key_size - 1  # longest key stored directly in main
        self.nest_max = max_key_size - 1 - _ID_LEN  # longest tail stored directly in a group


# ---------------------------------------------------------------- long keys


def get_long(txn: _Txn, lay: Layout, key: bytes) -> bytes | None:
    gid = txn.get(key[: lay.root_max] + b"\x00")
    rest = key[lay.root_max :]
    long, cut = lay.long, lay.nest_max
    while gid is not None:
        if len(rest) <= cut:
            return txn.get(gid + rest, db=long)
        gid = txn.get(gid + rest[:cut] + b"\x00", db=long)
        rest = rest[cut:]
    return None


def _new_gid(txn: _Txn, lay: Layout) -> bytes:
    raw = txn.get(_COUNTER_KEY, db=lay.long)
    gid = (int.from_bytes(raw, "big") if raw is not None else 0) + 1
    out = gid.to_bytes(_ID_LEN, "big")
    txn.put(_COUNTER_KEY, out, db=lay.long)
    return out


def put_long(txn: _Txn, lay: Layout, key: bytes, value: bytes) -> None:
    marker = key[: lay.root_max] + b"\x00"
    gid = txn.get(marker)
    if gid is None:
        gid = _new_gid(txn, lay)
        txn.put(marker, gid)
    rest = key[lay.root_max :]
    long, cut = lay.long, lay.nest_max
    while len(rest) > cut:
        marker = gid + rest[:cut] + b"\x00"
        child = txn.get(marker, db=long)
        if child is None:
            child = _new_gid(txn, lay)
            txn.put(marker, child, db=long)
        gid, rest = child, rest[cut:]
    txn.put(gid + rest, value, db=long)


def _group_empty(txn: _Txn, lay: Layout, gid: bytes) -> bool:
    cur = txn.cursor(db=lay.long)
    return not (cur.set_range(gid) and cur.key()[:_ID_LEN] == gid)


def delete_long(txn: _Txn, lay: Layout, key: bytes) -> bool:
    long, cut = lay.long, lay.nest_max
    marker = key[: lay.root_max] + b"\x00"
    path: list[tuple[bytes, bool, bytes]] = []  # (marker key, marker is in main, child gid)
    gid = txn.get(marker)
    in_main = True
    rest = key[lay.root_max :]
    while True:
        if gid is None:
            return False
        path.append((marker, in_main, gid))
        if len(rest) <= cut:
            break
        marker, in_main = gid + rest[:cut] + b"\x00", False
        gid = txn.get(marker, db=long)
        rest = rest[cut:]
    if not txn.delete(gid + rest, db=long):
        return False
    for marker, in_main, child in reversed(path):
        if not _group_empty(txn, lay, child):
            break
        if in_main:
            txn.delete(marker)
        else:
            txn.delete(marker, db=long)
    return True


# ---------------------------------------------------------------- range scans


def _child_bounds(h: bytes, lo: bytes, hi: bytes | None) -> tuple[bytes, bytes | None] | None:
    """Bounds relative to the group of keys ``h + t`` (t non-empty); None if the group is out of range."""
    n = len(h)
    if lo[:n] == h:
        lo_rel = lo[n:]
    elif lo < h:
        lo_rel = b""
    else:
        return None
    if hi is None:
        hi_rel = None
    elif hi[:n] == h:
        hi_rel = hi[n:]
        if not hi_rel:
            return None
    elif hi > h:
        hi_rel = None
    else:
        return None
    return lo_rel, hi_rel


def scan_root(txn: _Txn, lay: Layout, lo: bytes, hi: bytes) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.root_max
    try:
        cur = txn.cursor()
        if not (cur.set_range(lo if len(lo) <= cut else lo[:cut]) if lo else cur.first()):
            return
        # Positioned at the first key >= lo unless lo was cut to a group head: only then can keys below lo follow.
        floor = lo if len(lo) > cut else b""
        for key, value in cur.iternext():
            if key >= hi:
                return
            if len(key) > cut:
                h = key[:cut]
                bounds = _child_bounds(h, lo, hi)
                if bounds is not None:
                    yield from _scan_group(txn, lay, value, h, bounds[0], bounds[1])
            elif key >= floor:
                yield key, value
    except lmdb.Error as e:
        raise StorageError(f"lmdb scan failed: {e}") from e


def _scan_group(
    txn: _Txn, lay: Layout, gid: bytes, base: bytes, lo: bytes, hi: bytes | None
) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.nest_max
    cur = txn.cursor(db=lay.long)
    if not cur.set_range(gid + (lo if len(lo) <= cut else lo[:cut])):
        return
    for key, value in cur.iternext():
        if key[:_ID_LEN] != gid:
            return
        x = key[_ID_LEN:]
        if hi is not None and x >= hi:
            return
        if len(x) > cut:
            h = x[:cut]
            bounds = _child_bounds(h, lo, hi)
            if bounds is not None:
                yield from _scan_group(txn, lay, value, base + h, bounds[0], bounds[1])
        elif x >= lo:
            yield base + x, value


def scan_root_reverse(txn: _Txn, lay: Layout, lo: bytes, hi: bytes) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.root_max
    cur = txn.cursor()
    # Position on the last entry that may hold keys < hi. A hi longer than a key can be is cut to its
    # head plus 0x01: that keeps the head itself and the head's group marker, and nothing greater than hi.
    seek = hi if len(hi) <= cut else hi[:cut] + b"\x01"
    try:
        positioned = cur.prev() if cur.set_range(seek) else cur.last()
        if not positioned:
            return
        for key, value in cur.iterprev():
            if len(key) > cut:
                h = key[:cut]
                bounds = _child_bounds(h, lo, hi)
                if bounds is None:
                    if lo > h:
                        return
                    continue
                yield from _scan_group_reverse(txn, lay, value, h, bounds[0], bounds[1])
            elif key < lo:
                return
            elif key < hi:
                yield key, value
    except lmdb.Error as e:
        raise StorageError(f"lmdb scan failed: {e}") from e


def _scan_group_reverse(
    txn: _Txn, lay: Layout, gid: bytes, base: bytes, lo: bytes, hi: bytes | None
) -> Iterator[tuple[bytes, bytes]]:
    cut = lay.nest_max
    cur = txn.cursor(db=lay.long)
    if hi is None:
        seek = (int.from_bytes(gid, "big") + 1).to_bytes(_ID_LEN, "big")
    else:
        seek = gid + (hi if len(hi) <= cut else hi[:cut] + b"\x01")
    positioned = cur.prev() if cur.set_range(seek) else cur.last()
    if not positioned:
        return
    for key, value in cur.iterprev():
        if key[:_ID_LEN] != gid:
            return
        x = key[_ID_LEN:]
        if len(x) > cut:
            h = x[:cut]
            bounds = _child_bounds(h, lo, hi)
            if bounds is None:
                if lo > h:
                    return
                continue
            yield from _scan_group_reverse(txn, lay, value, base + h, bounds[0], bounds[1])
        elif x < lo:
            return
        elif hi is None or x < hi:
            yield base + x, value
