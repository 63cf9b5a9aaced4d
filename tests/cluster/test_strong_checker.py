"""The MRSC checker on histories and replicas made by hand (no server needed): it passes what a linearizable table
may do (overlapping operations either way, writes in doubt applied or not, writes refused for a replicated-write
conflict changing nothing) and reports a stale strong read, a refused write seen, a lost write in real-time order,
and the report's write figures."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.cluster.checker import Verdicts
from tests.cluster.history import NEVER, History, Op, Outcome, ended
from tests.cluster.strong_checker import (
    CONFLICT,
    as_writes,
    check_cas_registers,
    check_eventual_reads,
    check_final,
    check_plain_key,
    check_strong_reads,
    write_figures,
)
from tests.cluster.strong_harness import Report

OK, FAILED, UNKNOWN = Outcome.OK, Outcome.FAILED, Outcome.UNKNOWN


def op(kind: str, value: Any, invoke: float, complete: float, outcome: Outcome = OK, key: str = "k0",
       result: Any = None, error: str = "", process: int = 1) -> Op:  # fmt: skip
    refusal = error or (CONFLICT if outcome is FAILED else "")
    return ended(process, kind, key, value, invoke, complete, outcome, result, refusal, "us-east-1")


def sread(seen: str | None, invoke: float, complete: float, key: str = "k0") -> Op:
    return op("sread", None, invoke, complete, key=key, result=seen)


def linearizable(ops: list[Op]) -> bool | None:
    return check_plain_key(ops)[1].ok


class TestStrongReads:
    def test_each_read_returns_the_latest_write(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), sread("a", 1.1, 1.2), op("delete", "d", 1.3, 1.4), sread(None, 1.5, 1.6),
               op("put", "b", 1.7, 1.8), sread("b", 1.9, 2.0)]  # fmt: skip
        assert linearizable(ops) is True

    @pytest.mark.parametrize("seen", ["a", "b"])
    def test_a_read_overlapping_a_write_may_return_either(self, seen: str) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.1, 2.0), sread(seen, 1.5, 1.6), sread("b", 2.1, 2.2)]
        assert linearizable(ops) is True

    def test_a_stale_read_is_reported(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.1, 1.2), sread("a", 1.3, 1.4)]
        verdicts = Verdicts()
        check_strong_reads(verdicts, ops)
        [finding] = verdicts.findings
        assert not finding.ok
        assert finding.check == "plain key k0: strong reads never stale (linearizable)"
        assert finding.detail.startswith("NOT linearizable")

    def test_a_read_of_the_item_after_its_delete_is_stale(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("delete", "d", 1.1, 1.2), sread("a", 1.3, 1.4)]
        assert linearizable(ops) is False

    def test_a_write_refused_for_a_replicated_write_conflict_is_never_seen(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.1, 1.2, FAILED), sread("b", 1.3, 1.4)]
        assert linearizable(ops) is False
        assert linearizable(ops[:2] + [sread("a", 1.3, 1.4)]) is True

    @pytest.mark.parametrize("seen", ["a", "b"])
    def test_a_put_in_doubt_may_have_taken_effect_or_not(self, seen: str) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.1, NEVER, UNKNOWN), sread(seen, 2.0, 2.1)]
        assert linearizable(ops) is True

    def test_a_put_in_doubt_takes_effect_once_only(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.1, NEVER, UNKNOWN), sread("b", 2.0, 2.1),
               op("put", "c", 2.2, 2.3), sread("b", 2.4, 2.5)]  # fmt: skip
        assert linearizable(ops) is False

    @pytest.mark.parametrize("seen", ["a", None])
    def test_a_delete_in_doubt_may_have_taken_effect_or_not(self, seen: str | None) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("delete", "d", 1.1, NEVER, UNKNOWN), sread(seen, 2.0, 2.1)]
        assert linearizable(ops) is True

    def test_a_delete_in_doubt_no_absent_read_followed_is_left_out(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("delete", "d", 1.1, NEVER, UNKNOWN), op("put", "b", 2.0, 2.1),
               sread("b", 2.2, 2.3)]  # fmt: skip
        assert check_plain_key(ops)[0] == 3
        assert check_plain_key([*ops, sread(None, 2.4, 2.5)])[0] == 5
        assert linearizable([*ops, sread(None, 2.4, 2.5)]) is True  # the delete landed after b

    def test_keys_are_checked_one_by_one(self) -> None:
        ops = [op("put", "a", 0.0, 1.0, key="k1"), sread("a", 1.1, 1.2, key="k1"), sread(None, 1.1, 1.2, key="k2")]
        verdicts = Verdicts()
        check_strong_reads(verdicts, ops)
        assert [(f.check, f.ok) for f in verdicts.findings] == [
            ("plain key k1: strong reads never stale (linearizable)", True),
            ("plain key k2: strong reads never stale (linearizable)", True),
        ]


class TestEventualReads:
    def test_an_older_value_is_fine_a_refused_or_unknown_one_is_not(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.1, 1.2), op("put", "c", 1.3, 1.4, FAILED),
               op("eread", None, 2.0, 2.1, result="a"), op("eread", None, 2.0, 2.1, result=None),
               op("eread", None, 2.0, 2.1, result="c"), op("eread", None, 2.0, 2.1, result="z"),
               op("eread", None, 0.2, 0.3, result="b")]  # fmt: skip
        verdicts = Verdicts()
        check_eventual_reads(verdicts, ops)
        [finding] = verdicts.findings
        assert finding.detail == (
            f"us-east-1: k0 read c, whose put was refused ({CONFLICT}); us-east-1: k0 read z, which no put of it "
            "wrote; us-east-1: k0 read b at 0.300 s, before it was sent"
        )


def register_read(version: int, token: str | None, invoke: float, complete: float, process: int = 1) -> Op:
    return op("read", None, invoke, complete, key="r0", result=(version, token), process=process)


def cas(expected: int, token: str, invoke: float, complete: float, outcome: Outcome = OK, error: str = "",
        process: int = 1) -> Op:  # fmt: skip
    return op("cas", (expected, token), invoke, complete, outcome, key="r0", error=error, process=process)


class TestRegisters:
    def test_a_conflict_refused_write_changes_nothing(self) -> None:
        ops = [register_read(0, None, 0.0, 0.1), cas(0, "a", 0.2, 0.3),
               register_read(1, "a", 0.4, 0.5, process=2), cas(1, "b", 0.6, 0.7, FAILED, process=2),
               register_read(1, "a", 0.8, 0.9, process=-1)]  # fmt: skip
        verdicts = Verdicts()
        check_cas_registers(verdicts, ops)
        assert [(f.check, f.ok) for f in verdicts.findings] == [("register r0 linearizable", True)]

    def test_a_conflict_refused_write_seen_is_reported(self) -> None:
        ops = [register_read(0, None, 0.0, 0.1), cas(0, "a", 0.2, 0.3, FAILED),
               register_read(1, "a", 0.4, 0.5, process=-1)]  # fmt: skip
        verdicts = Verdicts()
        check_cas_registers(verdicts, ops)
        assert not verdicts.ok
        assert verdicts.findings[0].detail.startswith("NOT linearizable")


def item(value: str, key: str = "k0") -> dict[str, Any]:
    return {"pk": {"S": key}, "w": {"S": value}}


class TestFinalStates:
    def test_real_time_orders_writes_with_no_margin(self) -> None:
        # Last writer wins would excuse this (sent within 5 ms of the other's answer); a linearizable table cannot.
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.001, 2.0)]
        verdicts = Verdicts()
        losses = check_final(verdicts, ops, {"us-east-1": {"k0": item("a")}})
        assert (losses.writes, verdicts.lost) == ({"b"}, 1)

    def test_a_compare_and_set_is_a_put_of_its_token(self) -> None:
        ops = [cas(0, "a", 0.0, 1.0), register_read(1, "a", 1.1, 1.2)]
        assert [(o.kind, o.key, o.value) for o in as_writes(ops)] == [("put", "r0", "a")]
        verdicts = Verdicts()
        check_final(verdicts, ops, {"us-east-1": {"r0": item("a", "r0")}, "us-west-2": {"r0": item("a", "r0")}})
        assert verdicts.ok

    def test_a_refused_compare_and_set_held_is_reported(self) -> None:
        ops = [cas(0, "a", 0.0, 1.0), cas(1, "b", 1.1, 1.2, FAILED)]
        verdicts = Verdicts()
        check_final(verdicts, ops, {"us-east-1": {"r0": item("b", "r0")}})
        assert [f.detail for f in verdicts.findings if not f.ok] == [
            f"us-east-1: r0 holds b, whose write was refused ({CONFLICT})"
        ]


class TestFigures:
    def test_counts_and_latency_of_the_load_s_writes(self) -> None:
        ops = [op("put", "a", 0.0, 0.010), op("cas", (0, "b"), 1.0, 1.030, key="r0"), op("delete", "d", 2.0, 2.020),
               op("put", "c", 3.0, 3.1, FAILED), op("put", "e", 3.0, 3.1, FAILED, error="ValidationException"),
               op("put", "f", 4.0, NEVER, UNKNOWN), sread("a", 0.5, 0.6),
               op("put", "g", 5.0, 5.5, process=-1)]  # fmt: skip
        figures = write_figures(ops)
        assert (figures.acknowledged, figures.failed, figures.conflicts, figures.in_doubt) == (3, 2, 1, 1)
        assert math.isclose(figures.latency_p50, 0.020) and math.isclose(figures.latency_p99, 0.030)
        assert "acknowledged 3  failed 2 (of them replicated-write conflicts 1)  in doubt 1" in figures.render()
        assert "p50 / p99: 20 / 30 ms" in figures.render()

    def test_the_report_prints_them_with_the_losses(self) -> None:
        history = History(origin=0.0)
        history.ops = [op("put", "a", 0.0, 0.010)]
        report = Report(["us-east-1", "us-east-2"], "us-west-2", 60, 7, history, lost_writes=1)
        shown = report.render()
        assert "MRSC: 2 regions (us-east-1, us-east-2) + witness us-west-2, seed 7" in shown
        assert "lost: 1 (writes 1, deletes 0)" in shown
        assert "acknowledged 1  failed 0" in shown
