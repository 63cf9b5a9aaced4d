"""Ctrl-C while a command waits on long work in a running server (a backup, a restore, an export, an import, a
GSI backfill): the command stops waiting and exits 130 with one line saying the work goes on in the server, no
traceback. Ctrl-C before the server took the request stops the command the same way, with nothing started."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["INTERRUPTED", "StoppedWaiting", "stopped", "waiting_on"]

INTERRUPTED = 130  # the shell's exit code of a command ended by SIGINT


class StoppedWaiting(Exception):
    """Ctrl-C while waiting on ``work`` (the server goes on with it)."""

    def __init__(self, work: str) -> None:
        super().__init__(work)
        self.work = work


@contextmanager
def waiting_on(work: str) -> Iterator[None]:
    """Ctrl-C within this block means: stop waiting on ``work``, which the server goes on with."""
    try:
        yield
    except KeyboardInterrupt:
        raise StoppedWaiting(work) from None


def stopped(command: str, error: StoppedWaiting | KeyboardInterrupt) -> int:
    """The line of a command stopped by Ctrl-C, and its exit code."""
    if isinstance(error, StoppedWaiting):
        print(f"dynastore {command}: stopped waiting; {error.work} goes on in the server", file=sys.stderr)
    else:
        print(f"dynastore {command}: interrupted", file=sys.stderr)
    return INTERRUPTED
