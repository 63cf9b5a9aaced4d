"""What making one log record durable costs, three ways, on the disk under a directory (interleaved rounds,
medians, microseconds a record: wall time, and the CPU time this process spent, user and system):

1. ``append``: ``write`` at the end of the file, then ``fdatasync`` (what the write-ahead log does: the server
   appends, the sync helper syncs). The file grows, so each sync also commits the file's new size.
2. ``over zeros``: the same over a file written with zeros and synced beforehand: the size does not change.
3. ``direct``: ``pwrite`` of whole 4 KiB blocks with ``O_DIRECT | O_DSYNC`` over the same kind of file: no page
   cache, no writeback, the device told to keep each write (the record's block is written again until full).

A busy server syncs once for several puts (docs/performance.md): the sync's CPU is what this measures.

Run: ``python benchmarks/log_sync.py [directory] [records] [rounds]`` (defaults: the current directory, 3000, 5).
"""

from __future__ import annotations

import mmap
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

RECORD = 1600  # bytes: about what one loop turn of a busy server's puts writes between two syncs
BLOCK = 4096

Sample = tuple[float, float, float]  # wall, user, system: microseconds a record


def _measured(records: int, write_one: Callable[[int], None]) -> Sample:
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for number in range(records):
        write_one(number)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
    scale = 1e6 / records
    return wall * scale, (after.ru_utime - before.ru_utime) * scale, (after.ru_stime - before.ru_stime) * scale


def _zeroed(path: str, size: int) -> None:
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        os.write(fd, bytes(size))
        os.fsync(fd)
    finally:
        os.close(fd)


def _written_and_synced(fd: int, records: int) -> Sample:
    """``records`` records written where the file's offset is, each followed by ``fdatasync``; closes ``fd``."""
    record = b"x" * RECORD

    def write_one(_: int) -> None:
        os.write(fd, record)
        os.fdatasync(fd)

    try:
        return _measured(records, write_one)
    finally:
        os.close(fd)


def append(path: str, records: int) -> Sample:
    return _written_and_synced(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600), records)


def over_zeros(path: str, records: int) -> Sample:
    _zeroed(path, RECORD * records)
    return _written_and_synced(os.open(path, os.O_WRONLY), records)


def direct(path: str, records: int) -> Sample:
    _zeroed(path, RECORD * records + BLOCK)
    fd = os.open(path, os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
    block = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT needs
    block.write(b"x" * RECORD)

    def write_one(number: int) -> None:
        os.pwrite(fd, block, number * RECORD // BLOCK * BLOCK)

    try:
        return _measured(records, write_one)
    finally:
        os.close(fd)
        block.close()


WAYS: dict[str, Callable[[str, int], Sample]] = {"append": append, "over zeros": over_zeros, "direct": direct}


def main() -> None:
    directory = sys.argv[1] if len(sys.argv) > 1 else "."
    records = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    samples: dict[str, list[Sample]] = {name: [] for name in WAYS}
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        path = os.path.join(scratch, "log")
        for _ in range(rounds):
            for name, way in WAYS.items():
                samples[name].append(way(path, records))
                os.unlink(path)
    print(f"{records} records of {RECORD} B a round, {rounds} rounds interleaved; medians, microseconds a record")
    for name, rows in samples.items():
        wall, user, system = (statistics.median(row[i] for row in rows) for i in range(3))
        print(f"{name:10}  wall {wall:6.1f}  user {user:5.1f}  system {system:6.1f}")


if __name__ == "__main__":
    main()
