"""Instruction counts of a benchmark's phases under callgrind, which a busy machine does not disturb (a shared
2-core machine's CPU times vary by more than the changes they are meant to show).

A benchmark run as ``valgrind --tool=callgrind --dump-before=getppid --callgrind-out-file=cg.out python
benchmarks/NAME.py --instructions N`` marks the start of each phase, and the end of the last, with
``mark_phase()``; callgrind writes its counts at each mark (``cg.out.1``, ``cg.out.2``, ...: the first holds the
start-up). ``python benchmarks/NAME.py --count N cg.out.*`` then reads them with ``phase_counts``. A
benchmark's ``__main__`` hands both modes to ``instruction_modes``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

__all__ = ["instruction_modes", "mark_phase", "phase_counts", "run_phases"]


def instruction_modes(phases: Callable[..., None], count: Callable[[int, list[str]], None], default_calls: int) -> bool:
    """Run the mode the command line asks for, if it is one of these two; False if it is neither:
    ``--instructions [N [MORE...]]`` calls ``phases(N, *MORE)`` (numbers; N ``default_calls`` if missing), to run
    under callgrind; ``--count N FILES...`` calls ``count(N, FILES)`` on that run's dumps."""
    mode = sys.argv[1:2]
    if mode == ["--instructions"]:
        numbers = [int(arg) for arg in sys.argv[2:]]
        phases(*(numbers or [default_calls]))
        return True
    if mode == ["--count"]:
        count(int(sys.argv[2]), sys.argv[3:])
        return True
    return False


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
