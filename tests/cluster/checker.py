"""What the checker concludes from the history and from what the healed cluster holds (pure: no I/O here)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.cluster.cas_register import check_register
from tests.cluster.history import Op, Outcome


@dataclass(frozen=True)
class Finding:
    """One check's verdict, with what it saw."""

    check: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class StreamRecord:
    """A stream record as the checker needs it: its sequence number, key, shard, and the write ids of its images.
    Sequence numbers grow within a shard, and for one key across the shards it moves through."""

    sequence: int
    key: str
    shard: str
    new: str | None
    old: str | None


@dataclass
class Verdicts:
    findings: list[Finding] = field(default_factory=list)
    lost: int = 0

    @property
    def ok(self) -> bool:
        return self.lost == 0 and all(f.ok for f in self.findings)

    def add(self, check: str, problems: Sequence[str], fine: str) -> None:
        shown = "; ".join(problems[:5]) + (f"; ... {len(problems) - 5} more" if len(problems) > 5 else "")
        self.findings.append(Finding(check, not problems, shown if problems else fine))


def check_puts(verdicts: Verdicts, ops: Sequence[Op], present: dict[str, set[str]]) -> None:
    """Every acknowledged put is on every node; nothing is there that was neither acknowledged nor in doubt."""
    by_key = {op.key: op for op in ops}
    lost, phantoms = [], []
    for node, keys in sorted(present.items()):
        missing = sorted(k for k, op in by_key.items() if op.outcome is Outcome.OK and k not in keys)
        lost += [f"{k} missing on {node}" for k in missing]
        for key in sorted(keys):
            op = by_key.get(key)
            if op is None or op.outcome is Outcome.FAILED:
                phantoms.append(f"{key} on {node} ({'never written' if op is None else 'refused: ' + op.error})")
    verdicts.lost += len(lost)
    acked = sum(op.outcome is Outcome.OK for op in ops)
    verdicts.add(
        "puts: every acknowledged put on every node", lost, f"{acked} acknowledged, all on {len(present)} nodes"
    )
    verdicts.add("puts: nothing neither acknowledged nor in doubt", phantoms, "none")


def check_replicas(verdicts: Verdicts, digests: Sequence[dict[str, Any]]) -> None:
    """The replicas hold the same bytes at the same applied index."""
    seen = {(d["appliedIndex"], d["digest"]) for d in digests}
    problems = [] if len(seen) == 1 else [f"{d['node']}@{d['appliedIndex']}: {d['digest'][:16]}" for d in digests]
    index = next(iter(seen))[0] if len(seen) == 1 else None
    verdicts.add("replicas identical at the same applied index", problems, f"{len(digests)} digests equal at {index}")


def check_registers(verdicts: Verdicts, ops: Sequence[Op], prune: bool = True) -> None:
    """Each register's history (reads and conditional writes) is linearizable (``prune``: cas_register)."""
    by_key: dict[str, list[Op]] = defaultdict(list)
    for op in ops:
        by_key[op.key].append(op)
    for key in sorted(by_key):
        count, verdict = check_register(by_key[key], prune)
        verdicts.add(f"register {key} linearizable", [] if verdict.ok else [verdict.describe(count)],
                     verdict.describe(count))  # fmt: skip


def check_bank(verdicts: Verdicts, reads: Sequence[Op], final: list[int], total: int) -> None:
    """Every snapshot of the balances (transactional reads during the load, and the last one) sums to ``total``."""
    problems = [f"at {op.complete:.2f} s: {op.result} sums to {sum(op.result)}" for op in reads
                if op.outcome is Outcome.OK and (sum(op.result) != total or min(op.result) < 0)]  # fmt: skip
    if sum(final) != total or min(final) < 0:
        problems.append(f"after the run: {final} sums to {sum(final)}")
    snapshots = sum(op.outcome is Outcome.OK for op in reads) + 1
    verdicts.add("bank: the sum never changes", problems, f"{snapshots} snapshots, each summing to {total}")


def check_stream(verdicts: Verdicts, ops: Sequence[Op], node: str, records: Sequence[StreamRecord],
                 final: dict[str, str]) -> None:  # fmt: skip
    """The stream, as ``node`` serves it, holds every acknowledged write exactly once, in an order whose images
    chain (each record's old image is the key's previous new image), ending in what the table holds."""
    writes = {op.value: op for op in ops}
    problems = []
    for shard, in_shard in _by_shard(records).items():
        problems += [f"{shard}: sequence {b.sequence} after {a.sequence}"
                     for a, b in zip(in_shard, in_shard[1:], strict=False) if b.sequence <= a.sequence]  # fmt: skip
    counts = Counter(r.new for r in records)
    problems += [f"{w} appears {n} times" for w, n in sorted(counts.items()) if n > 1]
    for write, n in sorted(counts.items(), key=lambda item: str(item[0])):
        op = writes.get(write or "")
        if op is None or op.outcome is Outcome.FAILED:
            problems.append(f"{write} appears {n} times but was {'never written' if op is None else 'refused'}")
    lost = sorted(w for w, op in writes.items() if op.outcome is Outcome.OK and w not in counts)
    verdicts.lost += len(lost)
    problems += [f"{w} (acknowledged) missing" for w in lost]
    problems += _broken_chains(records, final)
    acked = sum(op.outcome is Outcome.OK for op in ops)
    verdicts.add(f"stream via {node}: gapless, exactly once, images chained", problems,
                 f"{len(records)} records, {acked} acknowledged writes each once")  # fmt: skip


def _by_shard(records: Sequence[StreamRecord]) -> dict[str, list[StreamRecord]]:
    shards: dict[str, list[StreamRecord]] = defaultdict(list)
    for record in records:
        shards[record.shard].append(record)
    return shards


def _broken_chains(records: Sequence[StreamRecord], final: dict[str, str]) -> list[str]:
    """A key's records, in the order of their sequence numbers, each take over where the one before left off."""
    last: dict[str, str | None] = {}
    problems = []
    for record in sorted(records, key=lambda r: r.sequence):
        if record.old != last.get(record.key):
            problems.append(f"{record.key}@{record.sequence}: old image {record.old}, previous {last.get(record.key)}")
        last[record.key] = record.new
    for key, write in sorted(final.items()):
        if last.get(key) != write:
            problems.append(f"{key} holds {write}, its last stream record {last.get(key)}")
    return problems
