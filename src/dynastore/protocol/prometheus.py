"""The Prometheus text exposition format (version 0.0.4), written by hand: a histogram and a page writer.

A page is a sequence of families. Each family has one ``# HELP`` and one ``# TYPE`` line, then its samples;
label values are escaped (backslash, double quote, newline) and HELP texts too (backslash, newline). Values are
written as Prometheus reads them: integers without a fraction, ``+Inf``, ``-Inf`` and ``NaN`` by name.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Final

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
bisect_left: Final = bisect.bisect_left

__all__ = ["CONTENT_TYPE", "Histogram", "Page", "escape_help", "escape_label", "number"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Histogram:
    """Observations counted in buckets of upper bounds ``bounds`` (inclusive, increasing) and one above them.

    The counts are kept per bucket and made cumulative only when written, so an observation is one bisection and
    three additions."""

    __slots__ = ("bounds", "counts", "sum", "count")

    def __init__(self, bounds: Sequence[float]) -> None:
        if list(bounds) != sorted(set(bounds)) or not bounds:
            raise ValueError("histogram bounds must be distinct and increasing")
        self.bounds = tuple(float(b) for b in bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last one counts what is above every bound
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def cumulative(self) -> list[tuple[str, int]]:
        """(``le`` label value, observations at or below it) for every bound and ``+Inf``."""
        out: list[tuple[str, int]] = []
        total = 0
        for bound, n in zip(self.bounds, self.counts, strict=False):
            total += n
            out.append((number(bound), total))
        out.append(("+Inf", total + self.counts[-1]))
        return out


def escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def number(value: float) -> str:
    """A sample value as Prometheus reads it."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _labels(names: Sequence[str], values: Sequence[str]) -> str:
    if not names:
        return ""
    pairs = ",".join(f'{name}="{escape_label(value)}"' for name, value in zip(names, values, strict=True))
    return "{" + pairs + "}"


class Page:
    """A page being written: ``family`` opens a family, the sample methods add to it, ``bytes()`` ends it."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def family(self, name: str, kind: str, help_text: str) -> None:
        """Open a family; ``kind`` is counter, gauge, histogram or summary."""
        self._lines.append(f"# HELP {name} {escape_help(help_text)}")
        self._lines.append(f"# TYPE {name} {kind}")

    def sample(self, name: str, value: float, names: Sequence[str] = (), values: Sequence[str] = ()) -> None:
        self._lines.append(f"{name}{_labels(names, values)} {number(value)}")

    def histogram(self, name: str, histogram: Histogram, names: Sequence[str] = (), values: Sequence[str] = ()) -> None:
        """A histogram's series: ``_bucket`` per bound (label ``le``), ``_sum`` and ``_count``."""
        bucket_names = (*names, "le")
        for le, total in histogram.cumulative():
            self.sample(f"{name}_bucket", total, bucket_names, (*values, le))
        self.sample(f"{name}_sum", histogram.sum, names, values)
        self.sample(f"{name}_count", histogram.count, names, values)

    def bytes(self) -> bytes:
        return ("\n".join(self._lines) + "\n").encode()
