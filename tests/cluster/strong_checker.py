"""What the MRSC checker concludes from the history and from each region's items once the regions are quiet (pure:
no I/O here; docs/fault-injection.md "Multi-region strong consistency").

An MRSC table is linearizable: every write is committed to one log a majority of the regions hold, and a strongly
consistent read in any region returns the latest committed value. So, unlike last writer wins, real time orders
the operations: one answered before another was sent took effect first (no margin). The checks:

- each register's reads and compare-and-set writes are linearizable (tests/cluster/cas_register.py);
- each plain key's puts, deletes and strongly consistent reads are linearizable as a read/write register: no
  strong read is stale, and the last read of each key after the run is the latest write; its eventually consistent
  reads may lag, but show only values written and not refused;
- every acknowledged write is present or overwritten by a later one, in every region (global_checker with a margin
  of 0), every value held was written and not refused, and the regions hold the same items.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from tests.cluster.checker import Verdicts, check_registers
from tests.cluster.global_checker import Losses, Replicas, check_final_states, percentile
from tests.cluster.history import Op, Outcome
from tests.cluster.linearizability import Timed, Verdict, check

CONFLICT = "ReplicatedWriteConflictException"
WRITE_KINDS = frozenset({"cas", "put", "delete"})
REGISTER_KINDS = frozenset({"read", "cas"})
PLAIN_KINDS = frozenset({"put", "delete", "sread"})

Value = str  # a plain key's value, ABSENT for no item (the search takes None for "no state": it cannot be one)
ABSENT = ""  # no write stores an empty value


@dataclass(frozen=True)
class ValueOp:
    """A plain key's operation as the search takes it: "put" or "delete" (``value`` ABSENT) that leaves ``value``,
    or "read" that returned it; ``maybe``: a write in doubt (it may never have taken effect)."""

    kind: str
    value: Value
    maybe: bool = False
    node: str = ""
    process: int = 0


def value_step(state: Value, op: ValueOp) -> list[Value]:
    """The values ``op`` may leave the key holding when applied to ``state`` (none: it cannot happen there)."""
    if op.kind == "read":
        return [state] if state == op.value else []
    return [op.value, state] if op.maybe else [op.value]


def plain_from_history(ops: Sequence[Op]) -> list[Timed[ValueOp]]:
    """One plain key's operations as the search takes them: reads without an answer and refused writes say
    nothing and go. A put in doubt whose value no read returned goes too: had it taken effect, no read came before
    the next write replaced it (none returned its value), and an unconditional write does not depend on what it
    replaced, so the history without it is linearizable exactly when it is with it. One whose value was read took
    effect (only it writes that value), at some time after it was sent. For the same reason a delete in doubt goes
    when no read answered after it was sent found the item absent (each one left costs the search a doubling)."""
    reads = [op for op in ops if op.kind == "sread" and op.outcome is Outcome.OK]
    seen = {op.result or ABSENT for op in reads}
    last_absent = max((op.complete for op in reads if op.result is None), default=-1.0)
    timed = []
    for op in ops:
        if op.outcome is Outcome.FAILED or (op.kind == "sread" and op.outcome is not Outcome.OK):
            continue
        if op.kind == "sread":
            timed.append(
                Timed(op.invoke, op.complete, ValueOp("read", op.result or ABSENT, node=op.node, process=op.process))
            )
            continue
        value = op.value if op.kind == "put" else ABSENT
        maybe = op.outcome is Outcome.UNKNOWN
        if maybe and op.kind == "put":
            if value not in seen:
                continue
            maybe = False
        if maybe and op.invoke > last_absent:
            continue
        timed.append(Timed(op.invoke, op.complete, ValueOp(op.kind, value, maybe, op.node, op.process)))
    return timed


def check_plain_key(ops: Sequence[Op]) -> tuple[int, Verdict[ValueOp]]:
    """How many operations were checked, and whether they are linearizable (a key that starts absent)."""
    timed = plain_from_history(ops)
    return len(timed), check(timed, ABSENT, value_step)


def check_strong_reads(verdicts: Verdicts, ops: Sequence[Op]) -> None:
    """Each plain key's history linearizable: no strongly consistent read stale, none of a value never written."""
    by_key = _by_key(op for op in ops if op.kind in PLAIN_KINDS)
    for key in sorted(by_key):
        count, verdict = check_plain_key(by_key[key])
        verdicts.add(f"plain key {key}: strong reads never stale (linearizable)",
                     [] if verdict.ok else [verdict.describe(count)], verdict.describe(count))  # fmt: skip


def check_eventual_reads(verdicts: Verdicts, ops: Sequence[Op]) -> None:
    """Each value an eventually consistent read returned (it may be an older one) was written to that key by a put
    sent before the read was answered, and not refused: a region shows only what the strong log committed."""
    written = {op.value: op for op in ops if op.kind == "put"}
    reads = [op for op in ops if op.kind == "eread" and op.outcome is Outcome.OK]
    problems = []
    for read in reads:
        holder = written.get(read.result)
        if read.result is None:
            continue
        if holder is None or holder.key != read.key:
            problems.append(f"{read.node}: {read.key} read {read.result}, which no put of it wrote")
        elif holder.outcome is Outcome.FAILED:
            problems.append(f"{read.node}: {read.key} read {read.result}, whose put was refused ({holder.error})")
        elif holder.invoke > read.complete:
            problems.append(f"{read.node}: {read.key} read {read.result} at {read.complete:.3f} s, before it was sent")
    verdicts.add("eventually consistent reads saw only written values, never refused ones", problems,
                 f"{len(reads)} reads")  # fmt: skip


def check_cas_registers(verdicts: Verdicts, ops: Sequence[Op]) -> None:
    """Each register's reads and compare-and-set writes linearizable; the history ends with a strongly
    consistent read of each (the harness's final reads), so the in-doubt writes are decided before the search."""
    check_registers(verdicts, [op for op in ops if op.kind in REGISTER_KINDS])


def as_writes(ops: Sequence[Op]) -> list[Op]:
    """The writes and deletes as global_checker sees them: a compare-and-set is a put of its token."""
    changes = []
    for op in ops:
        if op.kind == "cas":
            changes.append(replace(op, kind="put", value=op.value[1]))
        elif op.kind in ("put", "delete"):
            changes.append(op)
    return changes


def check_final(verdicts: Verdicts, ops: Sequence[Op], replicas: Replicas) -> Losses:
    """Every region's items against the history, in real-time order (a linearizable table has no margin)."""
    return check_final_states(verdicts, as_writes(ops), replicas, margin=0.0)


@dataclass(frozen=True)
class WriteFigures:
    acknowledged: int
    failed: int
    in_doubt: int
    conflicts: int  # refused with ReplicatedWriteConflictException (counted among the failed)
    latency_p50: float  # seconds, over acknowledged writes (nan: none)
    latency_p99: float

    def render(self) -> str:
        return (f"writes (cas, put, delete): acknowledged {self.acknowledged}  failed {self.failed} (of them "
                f"replicated-write conflicts {self.conflicts})  in doubt {self.in_doubt}; acknowledged write latency "
                f"p50 / p99: {self.latency_p50 * 1000:.0f} / {self.latency_p99 * 1000:.0f} ms")  # fmt: skip


def write_figures(ops: Sequence[Op]) -> WriteFigures:
    writes = [op for op in ops if op.kind in WRITE_KINDS and op.process >= 0]
    acked = [op for op in writes if op.outcome is Outcome.OK]
    latencies = [op.complete - op.invoke for op in acked]
    return WriteFigures(
        acknowledged=len(acked),
        failed=sum(op.outcome is Outcome.FAILED for op in writes),
        in_doubt=sum(op.outcome is Outcome.UNKNOWN for op in writes),
        conflicts=sum(op.error == CONFLICT for op in writes),
        latency_p50=percentile(latencies, 0.5),
        latency_p99=percentile(latencies, 0.99),
    )


def _by_key(ops: Iterable[Op]) -> dict[str, list[Op]]:
    grouped: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        grouped[op.key].append(op)
    return grouped
