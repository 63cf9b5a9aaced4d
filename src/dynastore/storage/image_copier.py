"""Copies one table's items from LMDB's file into a backup image, in a process of its own, so that a backup of a
large table takes neither the server's event loop nor its interpreter lock (docs/backups.md "On-demand backups").

The server holds its file (``LmdbKV.hold_file``: commits stay out of it), starts this program, and releases the
file once it says ``ready``: its read transaction, begun before that, is an image of exactly the commits made
before the hold. Then it writes the image (storage/backup_files.py: temporary name, fsync, rename), syncing each
megabyte as it goes: on a journaling file system (ext4's ordered mode) a sync of the server's write-ahead log also
writes out other files' pending data, so the image never has more than that waiting in front of the server's
commits. It ends with ``done <items> <bytes>``.
It runs at the lowest CPU priority and works half the time at most (``DUTY``: a 1M-item image takes about 13 s
instead of 6 s, and the server's requests keep their throughput), and it stops when the server is gone (a kill -9:
the temporary file it leaves is removed at the server's next start).

``python -m dynastore.storage.image_copier DATA_DIR BACKUPS_DIR NAME TABLE_PREFIX_HEX`` with the image's header
(JSON) on stdin. Exit status 1 with the reason on stderr when the image cannot be written.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import lmdb
import orjson

from dynastore.storage import keyspace
from dynastore.storage.backup_files import BackupFiles
from dynastore.storage.kv import StorageError
from dynastore.storage.lmdb_layout import Layout
from dynastore.storage.lmdb_txn import LmdbReadTxn

__all__ = ["READY", "main"]

READY = "ready"
SYNC_EVERY_BYTES = 1 << 20  # written bytes between two syncs of the image (see the module docstring)
PARENT_CHECK_ITEMS = 10_000  # items between two looks at whether the server is still there
DUTY = 0.5  # the share of the time the copier works (it rests the rest)
NICENESS = 19  # the lowest priority: the copier takes the CPU the server leaves


def main(argv: list[str]) -> int:
    data_dir, backups_dir, name, prefix_hex = argv
    header = orjson.loads(sys.stdin.buffer.read())
    parent = os.getppid()
    os.nice(NICENESS)
    try:
        env = lmdb.open(data_dir, readonly=True, lock=True, max_dbs=2, subdir=True)
        lay = Layout(env.open_db(b"main", create=False), env.open_db(b"long", create=False), env.max_key_size())
        txn = env.begin(db=lay.main)
    except lmdb.Error as e:
        print(f"cannot read the store: {e}", file=sys.stderr)
        return 1
    print(READY, flush=True)
    prefix = bytes.fromhex(prefix_hex)
    writer = BackupFiles(Path(backups_dir)).write_image(name, header)
    try:
        synced = 0
        busy_since = time.monotonic()
        for count, (_, value) in enumerate(LmdbReadTxn(txn, lay).iter_range(prefix, keyspace.prefix_end(prefix)), 1):
            writer.add(value)
            if writer.written_bytes - synced >= SYNC_EVERY_BYTES:
                writer.sync()
                synced = writer.written_bytes
            if count % PARENT_CHECK_ITEMS == 0:
                if os.getppid() != parent:
                    raise StorageError("the server is gone")
                print(f"progress {count}", flush=True)
                busy_since = _pause(busy_since)
        txn.abort()
        writer.finish()
        writer.seal()
    except (StorageError, OSError) as e:
        writer.discard()
        print(str(e), file=sys.stderr)
        return 1
    print(f"done {writer.item_count} {writer.size_bytes}", flush=True)
    return 0


def _pause(busy_since: float) -> float:
    """Rest as long as the last stretch of work took times ``(1 - DUTY) / DUTY``: the copier works at most a
    ``DUTY`` share of the time, leaving the rest of the machine (a second core, the disk) to the server."""
    now = time.monotonic()
    time.sleep((now - busy_since) * (1 - DUTY) / DUTY)
    return time.monotonic()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
