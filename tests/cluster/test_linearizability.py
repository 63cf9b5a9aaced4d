"""The linearizability checker on histories whose verdict is known (no cluster needed)."""

from __future__ import annotations

import random

import pytest

from tests.cluster.cas_register import RegisterOp, State, check_register, from_history, step
from tests.cluster.history import Op, Outcome
from tests.cluster.linearizability import Timed, check

INF = float("inf")


def read(process: int, invoke: float, complete: float, ver: int, token: str | None) -> Op:
    return Op(process, "read", "r", None, invoke, complete, Outcome.OK, (ver, token))


def cas(process: int, invoke: float, complete: float, expected: int, token: str, outcome: Outcome = Outcome.OK,
        error: str = "") -> Op:  # fmt: skip
    if outcome is Outcome.UNKNOWN:
        complete = INF
    return Op(process, "cas", "r", (expected, token), invoke, complete, outcome, None, error)


def refused(process: int, invoke: float, complete: float, expected: int, token: str) -> Op:
    return cas(process, invoke, complete, expected, token, Outcome.FAILED, "ConditionalCheckFailedException")


def verdict(*ops: Op, prune: bool = True) -> bool | None:
    return check_register(ops, prune)[1].ok


class TestGoodHistories:
    def test_sequential_writes_and_reads(self) -> None:
        assert verdict(read(1, 0, 1, 0, None), cas(1, 2, 3, 0, "a"), read(2, 4, 5, 1, "a"), cas(2, 6, 7, 1, "b"),
                       read(1, 8, 9, 2, "b"))  # fmt: skip

    def test_overlapping_writes_one_wins_the_other_is_refused(self) -> None:
        # Both read version 0 and race; either order of their linearization points is allowed by real time.
        assert verdict(cas(1, 0, 10, 0, "a"), refused(2, 1, 9, 0, "b"), read(3, 11, 12, 1, "a"))

    def test_a_read_overlapping_a_write_may_see_either_state(self) -> None:
        write = cas(1, 0, 10, 0, "a")
        assert verdict(write, read(2, 1, 2, 0, None), read(3, 3, 4, 1, "a"), read(4, 11, 12, 1, "a"))

    def test_a_later_completion_does_not_order_overlapping_operations(self) -> None:
        # The refusal was invoked first and completed last; linearized after the write it is fine.
        assert verdict(refused(2, 0, 20, 0, "b"), cas(1, 1, 2, 0, "a"), read(3, 21, 22, 1, "a"))

    def test_an_in_doubt_write_may_have_taken_effect(self) -> None:
        assert verdict(cas(1, 0, 0, 0, "a", Outcome.UNKNOWN), read(2, 5, 6, 1, "a"), cas(2, 7, 8, 1, "b"))

    def test_an_in_doubt_write_may_not_have_taken_effect(self) -> None:
        for prune in (True, False):
            assert verdict(cas(1, 0, 0, 0, "a", Outcome.UNKNOWN), read(2, 5, 6, 0, None), cas(2, 7, 8, 0, "b"),
                           read(3, 9, 10, 1, "b"), prune=prune)  # fmt: skip

    def test_an_in_doubt_write_may_take_effect_long_after_it_was_sent(self) -> None:
        assert verdict(cas(1, 0, 0, 0, "a", Outcome.UNKNOWN), read(2, 5, 6, 0, None), read(2, 50, 60, 1, "a"),
                       prune=False)  # fmt: skip

    def test_a_write_refused_before_its_condition_was_evaluated_has_no_effect(self) -> None:
        no_effect = cas(1, 0, 1, 0, "a", Outcome.FAILED, "ValidationException")
        assert verdict(no_effect, read(2, 2, 3, 0, None))


class TestBadHistories:
    def test_a_stale_read(self) -> None:
        # The write completed before the read was invoked, yet the read returns what was there before.
        assert verdict(cas(1, 0, 1, 0, "a"), read(2, 2, 3, 0, None)) is False

    def test_a_lost_write(self) -> None:
        # An acknowledged write that a later write overwrites as though it never happened.
        assert verdict(cas(1, 0, 1, 0, "a"), cas(2, 2, 3, 0, "b"), read(3, 4, 5, 1, "b")) is False

    def test_a_double_applied_conditional_write(self) -> None:
        # Two writes that both expected version 0 both succeeded: only one of them could have.
        assert verdict(cas(1, 0, 5, 0, "a"), cas(2, 1, 6, 0, "b"), read(3, 7, 8, 1, "b")) is False

    def test_a_refusal_when_the_condition_held(self) -> None:
        assert verdict(cas(1, 0, 1, 0, "a"), refused(2, 2, 3, 1, "b"), read(3, 4, 5, 1, "a")) is False

    def test_a_read_of_a_write_that_was_refused(self) -> None:
        assert verdict(refused(1, 0, 1, 0, "a"), read(2, 2, 3, 1, "a")) is False

    def test_a_read_of_an_in_doubt_write_before_it_was_sent(self) -> None:
        for prune in (True, False):
            assert verdict(read(2, 0, 1, 1, "a"), cas(1, 2, 0, 0, "a", Outcome.UNKNOWN), prune=prune) is False

    def test_a_read_that_goes_back_in_time(self) -> None:
        assert verdict(cas(1, 0, 10, 0, "a"), read(2, 1, 2, 1, "a"), read(3, 3, 4, 0, None)) is False

    def test_the_failure_names_the_operation_that_cannot_be_placed(self) -> None:
        count, result = check_register([cas(1, 0, 1, 0, "a"), read(2, 2, 3, 0, None)])
        assert (count, result.ok, result.linearized) == (2, False, 1)
        assert result.stuck_at is not None
        assert result.stuck_at.op == RegisterOp("read", "applied", 2, seen=(0, None))
        assert result.describe(count).startswith("NOT linearizable: RegisterOp(kind='read'")


class TestPruning:
    def test_an_unread_in_doubt_write_is_dropped_a_read_one_is_decided_applied(self) -> None:
        kept = from_history([cas(1, 0, 0, 0, "a", Outcome.UNKNOWN), cas(2, 0, 0, 0, "b", Outcome.UNKNOWN),
                             read(3, 5, 6, 1, "b")])  # fmt: skip
        assert [(t.op.token, t.op.effect, t.complete) for t in kept] == [("b", "applied", INF), (None, "applied", 6)]

    def test_reads_without_an_answer_say_nothing(self) -> None:
        lost = Op(1, "read", "r", None, 0, INF, Outcome.UNKNOWN)
        assert from_history([lost]) == []


class TestSearch:
    def test_many_concurrent_in_doubt_writes_are_decided_without_pruning(self) -> None:
        ops = [cas(p, p, 0, 0, f"t{p}", Outcome.UNKNOWN) for p in range(8)]
        ops.append(read(9, 20, 21, 1, "t5"))
        assert verdict(*ops, prune=False)

    def test_an_empty_history_is_linearizable(self) -> None:
        initial: State = (0, None)
        assert check([], initial, step).ok

    def test_the_budget_leaves_the_verdict_undecided(self) -> None:
        history = [Timed(float(i), INF, RegisterOp("cas", "maybe", i, 0, f"t{i}")) for i in range(12)]
        history.append(Timed(100.0, 101.0, RegisterOp("read", "applied", 99, seen=(9, None))))
        initial: State = (0, None)
        assert check(history, initial, step, budget=50).ok is None


def simulated(seed: int, count: int, processes: int = 5, doubt: float = 0.1) -> list[Op]:
    """A history a correct register produces: each operation takes effect at a random point between its invocation
    and its completion; some writes end in doubt (whether or not they took effect). Ends with a last read."""
    rng = random.Random(seed)
    planned = []
    clock = dict.fromkeys(range(processes), 0.0)
    for _ in range(count):
        process = rng.randrange(processes)
        invoke = clock[process] + rng.random()
        point = invoke + rng.random()
        clock[process] = point + rng.random()
        planned.append((point, process, invoke, clock[process]))
    state: tuple[int, str | None] = (0, None)
    last_read: dict[int, int] = {}
    ops = []
    for n, (_, process, invoke, complete) in enumerate(sorted(planned)):
        if process not in last_read:
            ops.append(read(process, invoke, complete, *state))
            last_read[process] = state[0]
            continue
        expected = last_read.pop(process)
        applied = state[0] == expected
        if applied:
            state = (expected + 1, f"t{n}")
        if rng.random() < doubt:
            ops.append(cas(process, invoke, complete, expected, f"t{n}", Outcome.UNKNOWN))
        elif applied:
            ops.append(cas(process, invoke, complete, expected, f"t{n}"))
        else:
            ops.append(refused(process, invoke, complete, expected, f"t{n}"))
    end = max(clock.values()) + 1
    return [*ops, read(99, end, end + 1, *state)]


class TestSimulatedHistories:
    @pytest.mark.parametrize("seed", range(5))
    def test_a_correct_register_s_history_is_linearizable(self, seed: int) -> None:
        ops = simulated(seed, 400)
        assert verdict(*ops) and verdict(*ops, prune=False)

    @pytest.mark.parametrize("seed", range(5))
    def test_a_last_read_gone_back_to_the_start_is_caught(self, seed: int) -> None:
        ops = simulated(seed, 200)
        assert any(op.kind == "cas" and op.outcome is Outcome.OK for op in ops)
        last = ops[-1]
        ops[-1] = read(last.process, last.invoke, last.complete, 0, None)
        assert verdict(*ops) is False and verdict(*ops, prune=False) is False

    @pytest.mark.parametrize("seed", range(5))
    def test_an_acknowledged_write_made_refused_is_caught(self, seed: int) -> None:
        ops = simulated(seed, 200)
        i = next(i for i, op in enumerate(ops) if op.kind == "cas" and op.outcome is Outcome.OK)
        ops[i] = refused(ops[i].process, ops[i].invoke, ops[i].complete, *ops[i].value)
        assert verdict(*ops) is False and verdict(*ops, prune=False) is False
