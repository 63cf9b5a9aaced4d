"""The register the clients share: an item whose version attribute guards each conditional write.

Its state is (version, token): version 0 and no token while the item does not exist; a conditional write that
expected version v makes it (v + 1, a token no other write uses). A read returns the whole state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tests.cluster.history import Op, Outcome
from tests.cluster.linearizability import Timed, Verdict, check

State = tuple[int, str | None]
INITIAL: State = (0, None)
CONDITION_FAILED = "ConditionalCheckFailedException"


@dataclass(frozen=True)
class RegisterOp:
    """``kind``: "read" (``seen`` is what it returned), "cas" (from version ``expected`` to token ``token``).
    ``effect``: "applied" (acknowledged), "refused" (its condition failed), "none" (refused before it was
    evaluated), "maybe" (in doubt)."""

    kind: str
    effect: str
    process: int = 0
    expected: int = 0
    token: str | None = None
    seen: State = INITIAL
    node: str = ""  # where it was sent (for the report of a failure)


def step(state: State, op: RegisterOp) -> list[State]:
    """The states ``op`` may leave the register in when applied to ``state`` (none: it cannot happen there)."""
    if op.kind == "read":
        return [state] if state == op.seen else []
    written: State = (op.expected + 1, op.token)
    matches = state[0] == op.expected
    if op.effect == "applied":
        return [written] if matches else []
    if op.effect == "refused":
        return [state] if not matches else []
    if op.effect == "maybe":
        return ([written] if matches else []) + [state]
    return [state]


def from_history(ops: Sequence[Op], prune: bool = True) -> list[Timed[RegisterOp]]:
    """One register's operations as the checker takes them: reads that got no answer say nothing and go.

    With ``prune``, each in-doubt write is decided by whether its token was ever read. A write whose token some
    read returned took effect (only it writes that token). One whose token no read returned cannot have taken
    effect, provided the history ends with a read and every write's expected version was read by its client just
    before (the workload does both): had it taken effect, the register would hold its token until a write that
    expected its version, whose client read the token first, or until the last read, which would return it.
    Deciding them keeps the search from trying both outcomes of every in-doubt write.
    """
    seen = {op.result[1] for op in ops if op.kind == "read" and op.outcome is Outcome.OK}
    timed = []
    for op in ops:
        if op.kind == "read":
            if op.outcome is Outcome.OK:
                read = RegisterOp("read", "applied", op.process, seen=tuple(op.result), node=op.node)
                timed.append(Timed(op.invoke, op.complete, read))
            continue
        effect = _effect(op)
        if effect == "maybe" and prune:
            if op.value[1] not in seen:
                continue
            effect = "applied"  # at some point after its invocation: its completion stays unknown
        register_op = RegisterOp("cas", effect, op.process, op.value[0], op.value[1], node=op.node)
        timed.append(Timed(op.invoke, op.complete, register_op))
    return timed


def _effect(op: Op) -> str:
    if op.outcome is Outcome.OK:
        return "applied"
    if op.outcome is Outcome.UNKNOWN:
        return "maybe"
    return "refused" if op.error == CONDITION_FAILED else "none"


def check_register(ops: Sequence[Op], prune: bool = True) -> tuple[int, Verdict[RegisterOp]]:
    """How many operations were checked, and whether they are linearizable."""
    timed = from_history(ops, prune)
    return len(timed), check(timed, INITIAL, step)
