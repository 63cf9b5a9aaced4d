"""Group commit: many committed transactions, one fsync, answered on the event-loop thread.

The server commits a write transaction (``kv.commit_seq`` becomes ``seq``) and then asks
``when_durable(seq, callback)`` or ``await wait_durable(seq)`` before answering the client. A flush starts once
the loop has handled everything that was ready (it seals the turn's writes first), so the requests that arrived
together share it; while one runs, new waiters queue for the next, which starts as soon as the running one has
synced. So a request waits for about one or two fsyncs, and throughput does not depend on how many requests
share each fsync.

How a flush runs: an engine that offers ``kv.background_sync()`` (LMDB: a helper process syncs its log) is asked
to begin one, and the loop watches its descriptor for the end; otherwise ``kv.flush()`` runs in the loop's
default executor. Either way a flush's completion reaches the loop only after the loop has handled everything
that is ready, so ``poll()`` lets a busy server answer early: the HTTP layer calls it as each request arrives,
and the waiters a finished sync covers are answered at once (measured: 8% more durable puts a second).

Errors. A failed flush (or seal) makes the engine take back every commit that is not durable (``kv.recover``:
the log is cut back to its synced end and the store's view rebuilt from it, so nothing unacknowledged stays
visible or is built on) and refuse writes until it can accept them again. The engine then reports the commits it
took back (``watch_losses``): their waiters get a ``WriteTakenBackError`` (``callback(error)``, ``wait_durable``
raises it: the write was not applied), and so does a waiter that asks later for one of them; waiters for commits
already durable are answered. After an fsync error the kernel may have dropped dirty pages, so the log's unsynced
tail is never trusted again: it is cut off. A callback that raises is logged and does not disturb the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from time import perf_counter  # by name: compiled code reads a module's attributes on every call

from dynastore.storage.kv import KV, BackgroundSync, DurabilityError, OutcomeUnknownError, WriteTakenBackError

__all__ = ["DurableCallback", "GroupCommitter"]

log = logging.getLogger(__name__)

DurableCallback = Callable[[BaseException | None], None]
"""Called on the loop thread with None once durable, or with the error that prevents durability."""


class GroupCommitter:
    """Batches ``kv.flush()`` calls for an asyncio server. Use only from the loop thread."""

    def __init__(self, kv: KV, loop: asyncio.AbstractEventLoop) -> None:
        self._kv = kv
        self._loop = loop
        # (seq, callback) in the order of seq, and of arrival for one seq. Writes commit in order and ask at once, so
        # a new waiter almost always goes last: a deque appends and answers it without a heap's comparisons.
        self._waiters: deque[tuple[int, DurableCallback]] = deque()
        self._flushing_to: int | None = None  # the seq the running flush makes durable
        self._turn_scheduled = False  # _turn_over runs once the loop has handled what is ready now
        self._futures: set[asyncio.Future[int]] = set()
        kv.enable_batching(self._batch_opened)
        kv.watch_losses(self._lost)
        self._failure: BaseException | None = None  # the last flush error
        self._lost_range = (0, 0)  # the last commits taken back: seq in (first, second]
        self.flushes = 0  # completed flushes (diagnostics, tests)
        # Told of each completed flush: (seconds it took, commits it made durable). Set by the host (metrics).
        self.on_sync: Callable[[float, int], None] | None = None
        self._flush_started = 0.0
        self._durable_before = 0
        self._background: BackgroundSync | None = kv.background_sync()
        if self._background is not None:
            loop.add_reader(self._background.fileno(), self._background_done)

    @property
    def durable_seq(self) -> int:
        """``kv.durable_seq`` (a commit with ``seq <= durable_seq`` needs no wait)."""
        return self._kv.durable_seq

    @property
    def failed(self) -> BaseException | None:
        """The last flush error, if any (the engine has recovered from it or refuses writes)."""
        return self._failure

    def lost(self, seq: int) -> bool:
        """Whether commit ``seq`` was taken back by the last failure (it will never be durable)."""
        first, last = self._lost_range
        return first < seq <= last

    def when_durable(self, seq: int, callback: DurableCallback) -> None:
        """Call ``callback(None)`` once ``kv.durable_seq >= seq`` (synchronously if it already is).

        ``seq`` must already be committed (``seq <= kv.commit_seq``); otherwise ValueError.
        On a flush failure ``callback(error)`` is called instead.
        """
        first_lost, last_lost = self._lost_range  # (self.lost(seq), inlined: twice a write)
        if first_lost < seq <= last_lost:
            _safe_call(callback, self._failure_for_late_waiter())
            return
        kv = self._kv
        if kv.durable_seq >= seq:
            _safe_call(callback, None)
            return
        if seq > kv.commit_seq:
            raise ValueError(f"seq {seq} is not committed yet (commit_seq={kv.commit_seq})")
        waiters = self._waiters
        if waiters and seq < waiters[-1][0]:
            _insert_in_order(waiters, seq, callback)
        else:
            waiters.append((seq, callback))
        if not self._turn_scheduled:  # (else the turn's flush is due already)
            self._schedule_flush()

    def close(self) -> None:
        """Stop watching the engine's background flushes (after ``drain``)."""
        if self._background is not None:
            self._loop.remove_reader(self._background.fileno())
            self._background = None

    def poll(self) -> None:
        """Answer the waiters that a finished sync covers, without waiting for the flush's completion callback
        (cheap: nothing, or one zero-timeout poll of the sync helper's socket while a flush runs)."""
        waiters = self._waiters
        if not waiters:
            return
        if self._background is not None:
            if self._flushing_to is not None:
                self._background_done()
            return
        durable = self._kv.durable_seq
        if waiters[0][0] <= durable:
            self._synced(durable)

    async def wait_durable(self, seq: int) -> None:
        """Return once ``seq`` is durable; raises ``DurabilityError`` if it cannot become durable."""
        if self._kv.durable_seq >= seq and not self.lost(seq):
            return
        fut: asyncio.Future[None] = self._loop.create_future()

        def done(error: BaseException | None) -> None:
            if fut.done():
                return
            if error is None:
                fut.set_result(None)
            else:
                fut.set_exception(_as_durability_error(error))

        self.when_durable(seq, done)
        await fut

    async def drain(self) -> None:
        """For shutdown: make everything committed so far durable and let the last flush finish.

        Raises ``DurabilityError`` if that is impossible (commits already taken back are not waited for).
        """
        seq = self._kv.commit_seq
        self._seal()
        if not self.lost(seq):
            await self.wait_durable(seq)
        while self._futures:
            await asyncio.wait(list(self._futures))

    # ------------------------------------------------------------ internals

    def _schedule_flush(self) -> None:
        if self._flushing_to is None:
            # Not at once: the requests the loop is still handling in this turn join the same flush.
            self._schedule_turn_over()

    def _batch_opened(self) -> None:
        # The writes of this loop turn share one storage commit, written out once the turn is over.
        self._schedule_turn_over()

    def _schedule_turn_over(self) -> None:
        # One callback a loop turn does both the seal and the start of a flush: each scheduled callback costs the
        # loop a handle and a dispatch, which a durable write would otherwise pay twice.
        if not self._turn_scheduled:
            self._turn_scheduled = True
            self._loop.call_soon(self._turn_over)

    def _turn_over(self) -> None:
        """The turn's writes are sealed into one storage commit; a flush starts if someone waits and none runs."""
        self._turn_scheduled = False
        # A failed seal has taken back what it could not log (and failed those waiters): the others still wait.
        self._seal()
        if self._flushing_to is None and self._waiters:
            self._start_flush()

    def _seal(self) -> bool:
        try:
            self._kv.seal()
        except Exception as e:
            # The engine has taken back what it could not log and reported it (_lost).
            self._failure = e
            return False
        return True

    def _start_flush(self) -> None:
        """Sealed: make every sealed commit durable."""
        self._flush_started = perf_counter()
        self._durable_before = self._kv.durable_seq
        if self._background is not None:
            try:
                self._flushing_to = self._background.begin()
            except Exception as e:
                self.close()  # the helper cannot be reached: later flushes run in a worker thread
                self._fail(e)
            return
        target = self._kv.commit_seq
        self._flushing_to = target
        fut = self._loop.run_in_executor(None, self._kv.flush)
        self._futures.add(fut)
        fut.add_done_callback(lambda done: self._flush_done(target, done))

    def _flush_done(self, target: int, fut: asyncio.Future[int]) -> None:
        self._futures.discard(fut)
        self.flushes += 1
        error = DurabilityError("flush was cancelled") if fut.cancelled() else fut.exception()
        if self._flushing_to == target:
            self._flushing_to = None
        if error is not None:
            self._fail(error)
            return
        # Not fut.result(): a flush that began before a failure covers commits that were taken back since.
        self._report(self._kv.durable_seq)
        self._synced(self._kv.durable_seq)

    def _background_done(self) -> None:
        """The engine's flush process answered (or its socket broke)."""
        if self._background is None:
            return
        try:
            durable = self._background.finish()
        except Exception as e:
            self._flushing_to = None
            if not self._background.alive():
                self.close()  # the helper is gone: later flushes run in a worker thread
            self._fail(e)
            return
        if durable is None:
            return
        self.flushes += 1
        self._flushing_to = None
        self._report(durable)
        self._synced(durable)

    def _report(self, durable: int) -> None:
        on_sync = self.on_sync
        if on_sync is not None:
            on_sync(perf_counter() - self._flush_started, max(0, durable - self._durable_before))

    def _synced(self, durable: int) -> None:
        """Everything up to ``durable`` is on disk: answer its waiters; more waiting starts the next flush."""
        if self._flushing_to is not None and durable >= self._flushing_to:
            self._flushing_to = None  # its sync is done; the thread is only returning
        waiters = self._waiters
        while waiters and waiters[0][0] <= durable:
            _safe_call(waiters.popleft()[1], None)
        if waiters:
            self._schedule_flush()

    def _fail(self, error: BaseException) -> None:
        """A flush failed: the engine takes back what it did not make durable (and reports it to ``_lost``)."""
        log.error("flush failed (%s); failing %d waiter(s)", error, len(self._waiters))
        self._failure = error
        self._kv.recover(error)
        self._synced(self._kv.durable_seq)  # what was durable before the failure is answered

    def _lost(self, durable: int, lost_through: int) -> None:
        """The engine took back commits ``durable + 1`` to ``lost_through``: fail their waiters."""
        self._lost_range = (durable, lost_through)
        error = self._failure_for_late_waiter()
        waiters = self._waiters
        # The ones still waiting are kept before any callback runs: a callback may ask for new waits.
        self._waiters = deque(waiter for waiter in waiters if waiter[0] > lost_through)
        for seq, callback in waiters:
            if seq <= durable:
                _safe_call(callback, None)
            elif seq <= lost_through:
                _safe_call(callback, error)

    def _failure_for_late_waiter(self) -> BaseException:
        # (the store's own account of what it took back last: a failed seal reports its losses before the
        # committer hears of the failure)
        failure = getattr(self._kv, "loss_cause", None) or self._failure
        if isinstance(failure, OutcomeUnknownError):
            # Taken back here, but the log may still hold it (a replicated log's append that was not answered).
            err: DurabilityError = OutcomeUnknownError("the durable log did not say whether it holds the write")
            err.__cause__ = failure
            return err
        err = WriteTakenBackError("the write was taken back: a storage failure kept it from becoming durable")
        err.__cause__ = self._failure
        return err


def _as_durability_error(error: BaseException) -> BaseException:
    if isinstance(error, DurabilityError):
        return error
    err = DurabilityError(f"flush failed: {error!r}")
    err.__cause__ = error
    return err


def _insert_in_order(waiters: deque[tuple[int, DurableCallback]], seq: int, callback: DurableCallback) -> None:
    """A waiter for an older commit than the last waiter's: after every waiter of a seq up to its own."""
    at = len(waiters)
    while at > 0 and waiters[at - 1][0] > seq:
        at -= 1
    waiters.insert(at, (seq, callback))


def _safe_call(callback: DurableCallback, error: BaseException | None) -> None:
    try:
        callback(error)
    except Exception:
        log.exception("durability callback raised")
