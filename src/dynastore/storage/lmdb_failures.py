"""What a storage failure leaves the LMDB engine in (docs/design.md "Storage failures and a full disk"): whether
and why writes are refused, whether even reads are (the view could not be rebuilt), the reserve file a full disk
gives up, and the listeners told of the writes taken back. Taking writes back and retrying them is the store's
own (storage/lmdb_kv.py: ``_take_back``, ``retry_writes``); this module keeps the state they move between."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import lmdb

from dynastore.storage import disk_space
from dynastore.storage.kv import LossListener, StorageError
from dynastore.storage.lmdb_layout import Layout

if TYPE_CHECKING:
    _Stat = lmdb._StatDict

__all__ = ["FailureState", "room_inside"]

log = logging.getLogger("dynastore.storage.lmdb_kv")  # the store's one logger, whichever module speaks


class FailureState:
    """The refusals of the store in directory ``path``; ``reserve``: its reserve file (storage/disk_space.py)."""

    __slots__ = ("refusal", "disk_full", "broken", "listeners", "reserve", "_path")

    def __init__(self, path: str, reserve: disk_space.Reserve) -> None:
        self._path = path
        self.reserve = reserve
        self.refusal: str | None = None  # why writes are refused; None while the store is writable
        self.disk_full = False  # the refusal is a full disk: deletes are let through
        self.broken: StorageError | None = None  # the durable view could not be rebuilt: reads are refused too
        self.listeners: list[LossListener] = []

    def refuse(self, error: BaseException) -> None:
        """Refuse writes from now on, and say why once in the log; a full disk gives up the reserve file."""
        first = self.refusal is None
        self.refusal = str(error) or type(error).__name__
        if disk_space.is_disk_full(error, self._path):
            released = self.reserve.release()
            if first or not self.disk_full:
                log.error(
                    "disk full: the data directory %s cannot be written (%s); writes are refused until space is "
                    "freed%s",
                    self._path,
                    error,
                    ", deletes use the space of the released reserve file" if released else "",
                )
            self.disk_full = True
        elif first:
            log.error("storage failure in %s: %s; writes are refused until it recovers", self._path, error)

    def break_view(self, error: StorageError) -> None:
        """The view could not be rebuilt: reads are refused too (until it can be)."""
        if self.broken is None:
            log.error("storage in %s cannot rebuild its state (%s); reads are refused too", self._path, error)
        self.broken = error

    def report_loss(self, durable_seq: int, lost_through: int) -> None:
        """Tell the listeners that the commits after ``durable_seq`` up to ``lost_through`` were taken back."""
        for listener in self.listeners:
            try:
                listener(durable_seq, lost_through)
            except StorageError as e:  # the view is not readable yet: told again once it is rebuilt
                log.error("a listener could not take in the writes taken back: %s", e)


def room_inside(env: lmdb.Environment, lay: Layout, path: str, reserve_size: int) -> bool:
    """Whether deletes freed enough pages inside LMDB's file (a quarter of the reserve's size, at least
    ``FULL_BELOW``) for writes to resume before the reserve can be made again: new writes reuse those pages, so
    only their log records need the file system (``FULL_BELOW`` of it)."""
    if disk_space.free_bytes(path) < disk_space.FULL_BELOW:
        return False
    try:
        stat = env.stat()
        used = 2 + _pages(stat)  # the two meta pages and the tree of named databases
        with env.begin() as txn:
            used += _pages(txn.stat(lay.main)) + _pages(txn.stat(lay.long))
        total = env.info()["last_pgno"] + 1
    except lmdb.Error:
        return False
    return (total - used) * stat["psize"] >= max(reserve_size // 4, disk_space.FULL_BELOW)


def _pages(stat: _Stat) -> int:
    return stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"]
