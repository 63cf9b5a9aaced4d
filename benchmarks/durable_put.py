"""What durability adds to a PutItem: ``Protocol.handle`` for PutItems of distinct keys, each answered the way
the server answers a write (once ``response.commit_seq`` is durable: group commit's ``when_durable``), on uvloop's
loop as in the server, in three phases: an in-memory dynastore; a durable one (a data directory: the write-ahead
log and its sync helper process), one put at a time, so that each pays a loop turn, a seal, a log record and a
sync of its own; and the durable one with one sync for every ``puts`` puts (a put's own durable work, what a busy
server pays a write when one turn and one sync serve many).

Instructions, which a busy machine does not change (callgrind; the sync helper is another process, not counted)::

    valgrind --tool=callgrind --dump-before=getppid --callgrind-out-file=cg.out \\
        python benchmarks/durable_put.py --instructions 200
    python benchmarks/durable_put.py --count 200 cg.out.*

Without arguments: CPU microseconds a put (this thread's time, noisy on a busy machine),
``python benchmarks/durable_put.py [puts] [rounds]``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import uvloop
from callgrind_phases import instruction_modes, mark_phase, phase_counts

from dynastore.app import Dynastore
from dynastore.config import Config

TABLE = "bench_table"
HEADERS = {  # without --auth sigv4 the signature is not checked, only that the request has one
    "content-type": "application/x-amz-json-1.0",
    "host": "localhost",
    "x-amz-date": "20260101T000000Z",
    "authorization": "AWS4-HMAC-SHA256 Credential=a/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0",
}
PHASES = ("in-memory PutItem", "durable PutItem", "durable PutItem, one sync for all")


def request(operation: str, body: dict[str, object]) -> tuple[str, dict[str, str], bytes, str]:
    headers = {**HEADERS, "x-amz-target": f"DynamoDB_20120810.{operation}"}
    return "POST", headers, json.dumps(body).encode(), "/"


def put_request(number: int) -> tuple[str, dict[str, str], bytes, str]:
    item = {"pk": {"S": f"key-{number}"}, "value": {"S": "x" * 100}}
    return request("PutItem", {"TableName": TABLE, "Item": item})


Put = Callable[[int, bool], Awaitable[None]]
Phase = Callable[[Put, int], Awaitable[None]]


def putter(app: Dynastore) -> Put:
    """A coroutine function that puts item ``number`` and, if ``wait``, returns once the put is durable, as the
    server answers it (otherwise at once, and the next put that waits waits for both). Run on ``app``'s loop."""
    assert app.committer is not None
    handle, committer = app.protocol.handle, app.committer

    async def put(number: int, wait: bool) -> None:
        response = handle(*put_request(number))
        assert response.status == 200, response.body
        seq = response.commit_seq
        if wait and seq and seq > committer.durable_seq:
            done: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
            committer.when_durable(seq, done.set_result)
            assert await done is None

    return put


@contextmanager
def started(config: Config) -> Iterator[tuple[asyncio.AbstractEventLoop, Dynastore]]:
    """A dynastore running on a loop of its own: uvloop's, as the server's."""
    loop = uvloop.new_event_loop()
    app = Dynastore(config)
    app.start(loop)
    try:
        yield loop, app
    finally:
        loop.run_until_complete(app.stop())
        loop.close()


CREATE: dict[str, object] = {
    "TableName": TABLE,
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}


def run_phases(puts: int, each: Phase) -> None:
    """``each(put, puts)`` on the in-memory store, the durable one, and the durable one with one sync for all
    ``puts``, each store warmed first (caches filled, the table's state made, the sync helper started)."""
    with (
        tempfile.TemporaryDirectory() as directory,
        started(Config(in_memory=True)) as memory,
        started(Config(in_memory=False, data_dir=Path(directory))) as disk,
    ):
        stores = [(loop, putter(app)) for loop, app in (memory, disk)]
        for (loop, put), (_, app) in zip(stores, (memory, disk), strict=True):
            loop.run_until_complete(_call(app.protocol.handle, request("CreateTable", CREATE)))
            loop.run_until_complete(_warm(put))
        for loop, put in [*stores, (stores[1][0], one_sync_for(stores[1][1], puts))]:
            loop.run_until_complete(each(put, puts))


async def _call(handle: Callable[..., object], args: tuple[str, dict[str, str], bytes, str]) -> object:
    return handle(*args)


async def _warm(put: Put) -> None:
    for number in range(50):
        await put(1_000_000 + number, True)


def one_sync_for(put: Put, puts: int) -> Put:
    """``put`` waiting only for the last of every ``puts``: what each put costs when one loop turn, one seal and
    one sync serve them all (a busy server's case), so the rest of the durable put's cost is per turn and sync."""
    return lambda number, _: put(number, number % puts == puts - 1)


def instruction_phases(puts: int) -> None:
    """Each phase between callgrind_phases' marks, at which callgrind writes its counts."""
    small_map()

    async def each(put: Put, count: int) -> None:
        mark_phase()
        for number in range(count):
            await put(number, True)

    run_phases(puts, each)
    mark_phase()
    print(f"{puts} puts a phase: " + ", ".join(PHASES))


def small_map() -> None:
    """Valgrind cannot map LMDB's default terabyte of address space: a gigabyte is plenty here. Writes still go
    straight into the open batch, as with the default map (storage/lmdb_kv.py ``DIRECT_WRITE_ROOM``)."""
    from dynastore.storage import lmdb_kv, lmdb_startup

    lmdb_kv.DIRECT_WRITE_ROOM = 256 << 20
    opened = lmdb_startup.open_environment
    lmdb_kv.open_environment = lambda path, _, *rest: opened(path, 1 << 30, *rest)  # type: ignore[attr-defined]


def count_instructions(puts: int, files: list[str]) -> None:
    """Thousands of instructions a put in each phase, from callgrind's dumps (the first is the start-up)."""
    counts = phase_counts(files, PHASES, puts)
    for phase, count in counts.items():
        print(f"{phase:24} {count:8.1f}k instructions")
    added = counts["durable PutItem"] - counts["in-memory PutItem"]
    print(f"durability adds {added:.1f}k ({added / counts['in-memory PutItem']:.0%})")


def cpu_times(puts: int, rounds: int) -> None:
    samples: dict[int, list[float]] = {0: [], 1: [], 2: []}
    phase = [0]

    async def each(put: Put, count: int) -> None:
        for round_ in range(rounds):
            start = time.thread_time()
            for number in range(count):
                await put(round_ * count + number, True)
            samples[phase[0]].append((time.thread_time() - start) / count * 1e6)
        phase[0] += 1

    run_phases(puts, each)
    for index, name in enumerate(PHASES):
        print(f"{name:24} {statistics.median(samples[index]):8.1f} us CPU (this thread; median of {rounds})")


if __name__ == "__main__":
    if not instruction_modes(instruction_phases, count_instructions, 300):
        cpu_times(int(sys.argv[1]) if len(sys.argv) > 1 else 1000, int(sys.argv[2]) if len(sys.argv) > 2 else 5)
