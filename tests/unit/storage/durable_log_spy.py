"""A ``DurableLog`` that records which of its methods the store calls, and otherwise is the local log: a store
given it works exactly as with the local log, which shows the store needs nothing of the log but the interface."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dynastore.storage.durability import Batch, DurableLog, LogSyncer, Operation, Position
from dynastore.storage.local_log import LocalLog


class DurableLogSpy:
    """Delegates to ``inner``; ``calls`` names every method called, in order; ``on_sync`` runs before a sync."""

    def __init__(self, inner: DurableLog) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.on_sync: Callable[[], None] | None = None

    @classmethod
    def local(cls, directory: str) -> DurableLogSpy:
        return cls(LocalLog(directory))

    def named(self, name: str) -> list[str]:
        return [call for call in self.calls if call == name]

    @property
    def location(self) -> str:
        return self.inner.location

    def recovered(self) -> Iterator[list[Operation]] | None:
        self.calls.append("recovered")
        return self.inner.recovered()

    def discard_recovered(self) -> None:
        self.calls.append("discard_recovered")
        self.inner.discard_recovered()

    def open(self) -> Position:
        self.calls.append("open")
        return self.inner.open()

    def oldest(self) -> Position:
        self.calls.append("oldest")
        return self.inner.oldest()

    def end(self) -> Position:
        return self.inner.end()

    def append(self, batch: Batch) -> None:
        self.calls.append("append")
        self.inner.append(batch)

    def sync(self) -> None:
        self.calls.append("sync")
        if self.on_sync is not None:
            self.on_sync()
        self.inner.sync()

    def background_sync(self) -> LogSyncer | None:
        self.calls.append("background_sync")
        return self.inner.background_sync()

    def take_back(self, position: Position) -> None:
        self.calls.append("take_back")
        self.inner.take_back(position)

    def replay(self, start: Position, stop: Position) -> Iterator[list[Operation]]:
        self.calls.append("replay")
        return self.inner.replay(start, stop)

    @property
    def compaction_due(self) -> bool:
        return self.inner.compaction_due

    def compact(self) -> Position:
        self.calls.append("compact")
        return self.inner.compact()

    def applied(self, position: Position) -> None:
        self.calls.append("applied")
        self.inner.applied(position)

    def holds_records(self) -> bool:
        return self.inner.holds_records()

    def close(self, discard: bool = True) -> None:
        self.calls.append("close" if discard else "close, keeping")
        self.inner.close(discard)
