"""Instruction counts of a benchmark's phases under callgrind, which a busy machine does not disturb (a shared
2-core machine's CPU times vary by more than the changes they are meant to show).

A benchmark run as ``valgrind --tool=callgrind --dump-before=getppid --callgrind-out-file=cg.out python
benchmarks/NAME.py --instructions N`` marks the start of each phase, and the end of the last, with
``mark_phase()``; callgrind writes its counts at each mark (``cg.out.1``, ``cg.out.2``, ...: the first holds the
start-up). ``python benchmarks/NAME.py --count N cg.out.*`` then reads them with ``phase_counts``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

__all__ = ["mark_phase", "phase_counts", "run_phases"]


def mark_phase() -> None:
    """Where callgrind (``--dump-before=getppid``) writes the counts so far: between two phases."""
    os.getppid()


def run_phases(phases: Sequence[Callable[[], object]], calls: int, warm: int = 30) -> None:
    """Each phase called ``warm`` times first (caches filled, tables made), then each ``calls`` times between
    marks."""
    for phase in phases:
        for _ in range(warm):
            phase()
    for phase in phases:
        mark_phase()
        for _ in range(calls):
            phase()
    mark_phase()


def phase_counts(files: list[str], names: Sequence[str], calls: int) -> dict[str, float]:
    """Thousands of instructions a call in each named phase, from callgrind's dumps of a run."""
    dumps = sorted(files, key=lambda name: int(name.rsplit(".", 1)[1]))
    totals: list[int] = []
    for name in dumps:
        with open(name) as dump:
            totals.extend(int(line.split()[1]) for line in dump if line.startswith("totals:"))
    return dict(zip(names, (total / calls / 1000 for total in totals[1:]), strict=False))
