"""GroupCommitter: one flush in flight, waiters answered in batches, errors reach every waiter."""

from __future__ import annotations

import asyncio
import logging
import select
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast

import pytest

from dynastore.storage.group_commit import GroupCommitter
from dynastore.storage.kv import KV, DurabilityError, LossListener
from dynastore.storage.lmdb_kv import LmdbKV
from dynastore.storage.local_log import HelperSync
from dynastore.storage.memory_kv import MemoryKV
from dynastore.storage.syncer import SyncProcess


class FakeKV:
    """Only what GroupCommitter uses; each flush blocks until the test opens the gate once."""

    def __init__(self) -> None:
        self.commit_seq = 0
        self.durable_seq = 0
        self.flush_calls = 0
        self.gate = threading.Semaphore(0)
        self.fail: BaseException | None = None
        self._running = 0
        self.max_running = 0
        self._lock = threading.Lock()

    def commit(self) -> int:
        self.commit_seq += 1
        return self.commit_seq

    def enable_batching(self, on_open: Callable[[], None]) -> None:
        pass

    def watch_losses(self, listener: LossListener) -> None:
        self.listener = listener

    def recover(self, error: BaseException) -> None:
        """As the engines do: what is not durable is taken back and reported."""
        self.recovered = error
        if self.commit_seq > self.durable_seq:
            self.listener(self.durable_seq, self.commit_seq)

    def seal(self) -> None:
        pass

    def background_sync(self) -> None:
        return None

    def flush(self) -> int:
        seq = self.commit_seq
        with self._lock:
            self.flush_calls += 1
            self._running += 1
            self.max_running = max(self.max_running, self._running)
        try:
            assert self.gate.acquire(timeout=10)
            if self.fail is not None:
                raise self.fail
            self.durable_seq = max(self.durable_seq, seq)
            return seq
        finally:
            with self._lock:
                self._running -= 1


async def until(cond: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.001)


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def make(fake: FakeKV) -> GroupCommitter:
    return GroupCommitter(cast(KV, fake), asyncio.get_running_loop())


def test_already_durable_calls_back_at_once() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        got: list[BaseException | None] = []
        gc.when_durable(0, got.append)
        assert got == [None]
        await gc.wait_durable(0)
        assert fake.flush_calls == 0

    run(body)


def test_batches_waiters_behind_one_flush() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        fired: list[int] = []

        def waiter(seq: int) -> Callable[[BaseException | None], None]:
            def cb(error: BaseException | None) -> None:
                assert error is None
                assert threading.current_thread() is threading.main_thread()  # on the loop thread
                fired.append(seq)

            return cb

        s1 = fake.commit()
        gc.when_durable(s1, waiter(s1))
        await until(lambda: fake.flush_calls == 1)
        for _ in range(50):  # arrive while the first flush runs
            s = fake.commit()
            gc.when_durable(s, waiter(s))
        await asyncio.sleep(0.01)
        assert fake.flush_calls == 1 and fired == []
        fake.gate.release()
        await until(lambda: fired == [1])
        await until(lambda: fake.flush_calls == 2)  # the next flush starts at once
        fake.gate.release()
        await until(lambda: len(fired) == 51)
        assert fired == list(range(1, 52))
        assert fake.max_running == 1
        assert gc.flushes == 2 and gc.durable_seq == 51
        await asyncio.sleep(0.01)
        assert fake.flush_calls == 2  # nothing waiting: no idle flushing

    run(body)


def test_a_waiter_for_an_older_commit_than_the_last_waiters_is_answered_by_the_flush_that_covers_it() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        fired: list[str] = []
        s1 = fake.commit()
        gc.when_durable(s1, lambda error: fired.append("first"))
        await until(lambda: fake.flush_calls == 1)  # this flush covers s1 only
        s2 = fake.commit()
        gc.when_durable(s2, lambda error: fired.append("second"))
        gc.when_durable(s1, lambda error: fired.append("first, asked late"))  # older than the last waiter's
        fake.gate.release()
        await until(lambda: len(fired) == 2)
        assert fired == ["first", "first, asked late"]  # not held behind the waiter for s2
        await until(lambda: fake.flush_calls == 2)
        fake.gate.release()
        await until(lambda: len(fired) == 3)
        assert fired[2] == "second"

    run(body)


def test_a_flush_error_fails_the_commits_taken_back_and_later_ones_become_durable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        got: list[BaseException | None] = []
        fake.fail = OSError(5, "EIO")
        lost = [fake.commit(), fake.commit()]
        for seq in lost:
            gc.when_durable(seq, got.append)
        fake.gate.release()
        await until(lambda: len(got) == 2)
        assert fake.recovered is fake.fail  # the engine was told to take back what the flush did not cover
        assert all(isinstance(e, DurabilityError) and e.__cause__ is fake.fail for e in got)
        assert gc.failed is fake.fail and all(gc.lost(seq) for seq in lost)
        late: list[BaseException | None] = []
        gc.when_durable(lost[1], late.append)  # a commit taken back is never reported durable
        assert isinstance(late[0], DurabilityError)
        fake.fail = None
        seq = fake.commit()  # the engine accepts writes again: they are made durable as before
        fake.gate.release()
        await gc.wait_durable(seq)
        assert fake.durable_seq == seq and not gc.lost(seq)
        assert fake.flush_calls == 2

    with caplog.at_level(logging.ERROR, logger="dynastore.storage.group_commit"):
        run(body)
    assert "flush failed" in caplog.text


def test_wait_durable_raises_durability_error() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        fake.fail = OSError("disk gone")
        task = asyncio.ensure_future(gc.wait_durable(fake.commit()))
        await until(lambda: fake.flush_calls == 1)
        fake.gate.release()
        with pytest.raises(DurabilityError) as info:
            await task
        assert isinstance(info.value.__cause__, OSError)

    logging.getLogger("dynastore.storage.group_commit").disabled = True
    try:
        run(body)
    finally:
        logging.getLogger("dynastore.storage.group_commit").disabled = False


def test_raising_callback_does_not_disturb_others(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        got: list[BaseException | None] = []

        def bad(error: BaseException | None) -> None:
            raise RuntimeError("handler bug")

        s = fake.commit()
        gc.when_durable(s, bad)
        gc.when_durable(s, got.append)
        fake.gate.release()
        await until(lambda: got == [None])

    run(body)
    assert "durability callback raised" in caplog.text


def test_uncommitted_seq_is_refused() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        with pytest.raises(ValueError):
            gc.when_durable(1, lambda error: None)

    run(body)


def test_drain_flushes_everything_committed() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        for _ in range(5):
            fake.commit()
        task = asyncio.ensure_future(gc.drain())
        await until(lambda: fake.flush_calls == 1)
        fake.gate.release()
        await task
        assert fake.durable_seq == 5
        await gc.drain()  # nothing left: returns without flushing
        assert fake.flush_calls == 1

    run(body)


def test_memory_kv_needs_no_flush() -> None:
    async def body() -> None:
        kv = MemoryKV()
        gc = GroupCommitter(kv, asyncio.get_running_loop())
        with kv.write() as w:
            w.put(b"a", b"b")
        got: list[BaseException | None] = []
        gc.when_durable(kv.commit_seq, got.append)
        assert got == [None] and gc.flushes == 0

    run(body)


def test_many_requests_share_few_fsyncs_on_lmdb(tmp_path: Path) -> None:
    async def body() -> None:
        kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
        gc = GroupCommitter(kv, asyncio.get_running_loop())

        async def request(i: int) -> None:
            await asyncio.sleep(0)
            with kv.write() as w:
                w.put(b"k%05d" % i, b"v")
            await gc.wait_durable(kv.commit_seq)

        await asyncio.gather(*(request(i) for i in range(2000)))
        await gc.drain()
        assert kv.durable_seq == kv.commit_seq == 2000
        assert gc.flushes < 200, gc.flushes
        kv.close()

    run(body)


def test_poll_answers_a_finished_sync_before_its_callback() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        got: list[BaseException | None] = []
        gc.when_durable(fake.commit(), got.append)
        await until(lambda: fake.flush_calls == 1)
        gc.poll()
        assert got == []  # not synced yet
        fake.durable_seq = 1  # the worker has synced but its completion has not reached the loop
        gc.poll()
        assert got == [None]
        gc.when_durable(fake.commit(), got.append)
        await until(lambda: fake.flush_calls == 2)  # the next flush did not wait for the first one's callback
        fake.gate.release()
        fake.gate.release()
        await until(lambda: got == [None, None])

    run(body)


def test_a_loop_turns_writes_share_one_sealed_batch_and_flush(tmp_path: Path) -> None:
    async def body() -> None:
        kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
        gc = GroupCommitter(kv, asyncio.get_running_loop())
        for i in range(10):  # one loop turn
            with kv.write() as w:
                w.put(b"k%d" % i, b"v")
        assert kv.commit_seq == 10 and kv.durable_seq == 0
        assert kv.flush() == 0  # nothing sealed yet: a flush now covers none of them
        waits = [asyncio.ensure_future(gc.wait_durable(seq)) for seq in range(1, 11)]
        await asyncio.gather(*waits)
        assert kv.durable_seq == 10 and gc.flushes == 1
        kv.close()

    run(body)


def test_a_failed_seal_fails_the_waiters(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        fake = FakeKV()

        def seal() -> None:
            error = DurabilityError("lmdb commit of a batch failed: MDB_MAP_FULL")
            fake.recover(error)  # an engine takes back what it could not seal, then raises
            raise error

        fake.seal = seal  # type: ignore[method-assign]
        gc = make(fake)
        got: list[BaseException | None] = []
        gc.when_durable(fake.commit(), got.append)
        await until(lambda: got != [])
        assert isinstance(got[0], DurabilityError) and fake.flush_calls == 0
        assert gc.failed is not None and gc.lost(1)

    run(body)


def test_lmdb_flushes_run_in_the_sync_helper_and_end_when_it_dies(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def body() -> None:
        kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
        loop = asyncio.get_running_loop()
        gc = GroupCommitter(kv, loop)
        with kv.write() as w:
            w.put(b"a", b"1")
        await gc.wait_durable(kv.commit_seq)
        assert gc.flushes == 1 and threading.active_count() == 1  # no worker thread was started
        helper = helper_of(kv)._proc
        helper.kill()
        helper.wait()
        with kv.write() as w:
            w.put(b"b", b"2")
        with pytest.raises(DurabilityError):
            await gc.wait_durable(kv.commit_seq)
        assert gc.failed is not None
        gc.close()
        kv.close()

    with caplog.at_level(logging.ERROR, logger="dynastore.storage.group_commit"):
        run(body)
    assert "flush failed" in caplog.text


def test_poll_answers_a_finished_background_sync_before_the_loop_sees_it(tmp_path: Path) -> None:
    async def body() -> None:
        kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
        gc = GroupCommitter(kv, asyncio.get_running_loop())
        with kv.write() as w:
            w.put(b"a", b"1")
        got: list[BaseException | None] = []
        gc.when_durable(1, got.append)
        await until(lambda: gc.flushes == 0 and helper_of(kv)._pending)  # the sync was requested
        ready, _, _ = select.select([helper_of(kv).fileno()], [], [], 10)  # the helper has answered
        assert ready and got == []
        with kv.write() as w:
            w.put(b"b", b"2")
        gc.when_durable(2, got.append)
        gc.poll()  # as a request arrives, before the loop runs the socket's callback
        assert got == [None] and gc.flushes == 1
        await asyncio.sleep(0)
        assert helper_of(kv)._pending  # the next sync starts when this loop turn ends
        await until(lambda: got == [None, None])
        gc.close()
        kv.close()

    run(body)


def helper_of(kv: LmdbKV) -> SyncProcess:
    sync = kv.background_sync()
    assert sync is not None
    syncer = sync._syncer  # the local log's: a helper process syncs its files
    assert isinstance(syncer, HelperSync)
    return syncer._proc


def test_without_the_sync_helper_lmdb_flushes_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")  # as on a platform other than Linux: no sync helper

    async def body() -> None:
        kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
        assert kv.background_sync() is None
        gc = GroupCommitter(kv, asyncio.get_running_loop())
        with kv.write() as w:
            w.put(b"a", b"1")
        await gc.wait_durable(kv.commit_seq)
        assert kv.durable_seq == 1 and gc.flushes == 1
        await gc.drain()
        gc.close()
        kv.close()

    run(body)


def test_each_completed_flush_reports_its_duration_and_the_commits_it_made_durable() -> None:
    async def body() -> None:
        fake = FakeKV()
        gc = make(fake)
        syncs: list[tuple[float, int]] = []
        gc.on_sync = lambda seconds, commits: syncs.append((seconds, commits))
        first = fake.commit()
        gc.when_durable(first, lambda error: None)
        await until(lambda: fake.flush_calls == 1)
        for _ in range(3):  # arrive while the first flush runs: the next flush makes all three durable
            gc.when_durable(fake.commit(), lambda error: None)
        fake.gate.release()
        await until(lambda: len(syncs) == 1)
        fake.gate.release()
        await until(lambda: len(syncs) == 2)
        assert [commits for _, commits in syncs] == [1, 3]
        assert all(seconds >= 0 for seconds, _ in syncs)

    run(body)
