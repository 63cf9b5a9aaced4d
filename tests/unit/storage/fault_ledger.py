"""A ledger of acknowledged writes kept while the storage write path fails at a planned point.

``PlannedFaults`` is the fault-injecting seam (``durability.FaultPoints``): the store calls ``check(point)`` at each
point of its write path (LMDB's batch commit and checkpoint sync, the log's append, sync, rotation and cut-back,
the sync helper's answer), and it raises the planned error at the planned calls.

``run_ledger`` drives a real store and group committer the way the server does: workers increment counters
(read, add one, write: each write is computed from the state before it, as UpdateItem ADD is), each waits until
its write is durable (acknowledged) or fails, and then reads its counter back: it must equal the number of
acknowledged increments at once, after every failure too. A maintenance task retries writes while the store
refuses them. The ledger is the acknowledged count per counter: after any failure, restart or kill -9 the store
must hold exactly that (a lost acknowledged write, or an unacknowledged one applied, shows as a difference).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
import time
from pathlib import Path

from dynastore.storage import lmdb_kv, wal
from dynastore.storage.group_commit import GroupCommitter
from dynastore.storage.kv import StorageError, StorageUnavailableError, WriteTakenBackError
from dynastore.storage.lmdb_kv import LmdbKV

KEYS = [b"counter-%02d" % i for i in range(6)]
ROUNDS = 40  # acknowledged increments per counter
ROOT = str(Path(__file__).resolve().parents[3])

FAULTS: dict[str, OSError] = {
    "lmdb.commit": OSError(errno.EIO, "Input/output error (LMDB's report of a full disk)"),
    "wal.append": OSError(errno.ENOSPC, "No space left on device"),
    "wal.sync": OSError(errno.EIO, "Input/output error"),
    "sync.helper": OSError(errno.EIO, "Input/output error"),
    "wal.rotate": OSError(errno.EMFILE, "Too many open files"),
    "wal.truncate": OSError(errno.EIO, "Input/output error"),
    "lmdb.sync": OSError(errno.EIO, "Input/output error"),
}


class PlannedFaults:
    """Raise ``error`` at calls ``after + 1`` to ``after + times`` of ``point``. The log's cut-back is reached
    only after another failure, so planning it fails its first ``times`` calls and append number ``after + 1``."""

    def __init__(self, point: str, error: OSError, after: int, times: int = 1) -> None:
        self.point = point
        self.error = error
        self.after = after
        self.times = times
        self.calls: dict[str, int] = {}
        self.fired = 0

    def check(self, point: str) -> None:
        n = self.calls[point] = self.calls.get(point, 0) + 1
        first = 0 if point == "wal.truncate" else self.after  # a cut-back happens only after a failure
        if point == self.point and first < n <= first + self.times:
            self.fired += 1
            raise OSError(self.error.errno, self.error.strerror)
        if self.point == "wal.truncate" and point == "wal.append" and n == self.after + 1:
            raise OSError(errno.ENOSPC, "No space left on device")  # the failure whose cut-back then fails


class Ledger:
    def __init__(self) -> None:
        self.acked = dict.fromkeys(KEYS, 0)
        self.failed = 0  # answered with an error: taken back
        self.refused = 0  # refused up front (read-only)
        self.mismatches: list[str] = []


async def run_ledger(kv: LmdbKV, rounds: int) -> Ledger:
    loop = asyncio.get_running_loop()
    committer = GroupCommitter(kv, loop)
    ledger = Ledger()
    done = asyncio.Event()

    async def maintain() -> None:
        deadline = time.monotonic() + 60
        while not (done.is_set() and kv.writable) and time.monotonic() < deadline:  # the last failure too
            if not kv.writable:
                kv.retry_writes()
            await asyncio.sleep(0.003)

    async def read(key: bytes) -> int:
        while True:
            try:
                with kv.read() as r:
                    return int(r.get(key) or b"0")
            except StorageUnavailableError:
                await asyncio.sleep(0.003)  # the view is being rebuilt

    async def worker(key: bytes) -> None:
        attempts = 0
        while ledger.acked[key] < rounds and attempts < 20 * rounds:  # until writes resumed and all were made
            attempts += 1
            try:
                with kv.write() as w:
                    w.put(key, b"%d" % (int(w.get(key) or b"0") + 1))
                await committer.wait_durable(kv.commit_seq)
                ledger.acked[key] += 1
            except WriteTakenBackError:  # in flight when the fault happened: not applied
                ledger.failed += 1
            except StorageUnavailableError:
                ledger.refused += 1
                await asyncio.sleep(0.003)
            except StorageError:
                ledger.failed += 1
            seen = await read(key)
            if seen != ledger.acked[key]:
                ledger.mismatches.append(f"{key!r}: read {seen}, acknowledged {ledger.acked[key]}")

    maintenance = loop.create_task(maintain())
    await asyncio.gather(*(worker(key) for key in KEYS))
    done.set()
    await maintenance
    await committer.drain()
    committer.close()
    return ledger


def stored(kv: LmdbKV) -> dict[str, int]:
    with kv.read() as r:
        return {key.decode(): int(r.get(key) or b"0") for key in KEYS}


def main(path: str, point: str, after: int, times: int, rounds: int, direct: bool = True) -> None:
    """The writer process: run the ledger with the planned fault until every counter has ``rounds`` acknowledged
    increments, print it as one JSON line, then keep the store open (uncleanly) until killed. ``direct``: the
    batch's writes go straight into it (the default of a store with room), else each is a child transaction."""
    # Batches reach LMDB's file often, so its commit is on the path many times: at every seal where that commit
    # (and the log sync before it) is the point that fails, so that the fault surely happens; elsewhere after
    # 10 ms, so that a failure meets a batch holding several seals' records (the rebuilt view replays them).
    lmdb_kv.BATCH_INTERVAL = 0.0 if point in ("lmdb.commit", "wal.sync") else 0.01
    wal.CHECKPOINT_BYTES = 2048  # segments rotate and checkpoints run while the writes go on
    faults = PlannedFaults(point, FAULTS[point], after, times)
    kv = LmdbKV(path, map_size=1 << 30, faults=faults, direct_write_room=0 if direct else 1 << 62)
    ledger = asyncio.run(run_ledger(kv, rounds))
    report = {
        "acked": {key.decode(): n for key, n in ledger.acked.items()},
        "stored": stored(kv),
        "failed": ledger.failed,
        "refused": ledger.refused,
        "mismatches": ledger.mismatches,
        "fired": faults.fired,
        "writable": kv.writable,
    }
    print(json.dumps(report), flush=True)
    while True:
        time.sleep(1)


SCRIPT = (
    "import sys; sys.path[:0] = [{root!r}, {src!r}]\n"
    "from tests.unit.storage.fault_ledger import main\n"
    "main({path!r}, {point!r}, {after}, {times}, {rounds}, {direct})\n"
)


def script(path: str, point: str, after: int, times: int = 1, rounds: int = ROUNDS, direct: bool = True) -> str:
    return SCRIPT.format(
        root=ROOT,
        src=os.path.join(ROOT, "src"),
        path=path,
        point=point,
        after=after,
        times=times,
        rounds=rounds,
        direct=direct,
    )


if __name__ == "__main__":  # pragma: no cover - run by hand: python -m tests.unit.storage.fault_ledger DIR POINT N
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), 1, ROUNDS)
