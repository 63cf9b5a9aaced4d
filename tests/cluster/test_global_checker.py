"""The global tables' checker on histories and replicas made by hand (no server needed): it passes what last
writer wins may do under concurrency, and reports a lost write, a deleted item back, a value nobody wrote and
replicas that differ; and the report's replication lag figures."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.cluster.checker import Verdicts
from tests.cluster.global_checker import (
    Losses,
    Replicas,
    certainly_before,
    check_final_states,
    check_identical,
    check_reads,
    percentile,
)
from tests.cluster.global_harness import render_lags
from tests.cluster.global_workload import Lag
from tests.cluster.history import NEVER, Op, Outcome, ended
from tests.cluster.nemesis import Fault

OK, FAILED, UNKNOWN = Outcome.OK, Outcome.FAILED, Outcome.UNKNOWN


def op(kind: str, value: str, invoke: float, complete: float, outcome: Outcome = OK, key: str = "k",
       result: Any = None) -> Op:  # fmt: skip
    refusal = "ConditionalCheckFailedException" if outcome is FAILED else ""
    return ended(1, kind, key, value, invoke, complete, outcome, result, refusal, "us-east-1")


def item(value: str, key: str = "k", **extra: str) -> dict[str, Any]:
    return {"pk": {"S": key}, "w": {"S": value}, **{name: {"S": v} for name, v in extra.items()}}


def everywhere(items: dict[str, dict[str, Any]], regions: tuple[str, ...] = ("us-east-1", "eu-west-1")) -> Replicas:
    return {region: items for region in regions}


def final_states(ops: list[Op], replicas: Replicas) -> tuple[list[str], Losses, Verdicts]:
    verdicts = Verdicts()
    losses = check_final_states(verdicts, ops, replicas)
    return [f"{f.check}: {f.detail}" for f in verdicts.findings if not f.ok], losses, verdicts


class TestOrder:
    @pytest.mark.parametrize(
        ("first", "second", "expected"),
        [
            ((0.0, 1.0), (1.1, 1.2), True),
            ((0.0, 1.0), (1.004, 1.2), False),  # within the margin: the stamps may be in either order
            ((0.0, 1.0), (0.5, 1.2), False),  # overlapping
            ((0.0, NEVER), (5.0, 6.0), False),  # in doubt: may have taken effect at any time after it was sent
        ],
    )
    def test_certainly_before_only_when_answered_before_the_other_was_sent(
        self, first: tuple[float, float], second: tuple[float, float], expected: bool
    ) -> None:
        a = op("put", "a", *first, outcome=OK if first[1] < NEVER else UNKNOWN)
        assert certainly_before(a, op("put", "b", *second)) is expected


class TestWhatLastWriterWinsMayDo:
    def test_the_last_of_sequential_writes(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("update", "b", 2.0, 3.0)]
        problems, losses, verdicts = final_states(ops, everywhere({"k": item("b", u="b")}))
        assert (problems, verdicts.lost) == ([], 0)

    @pytest.mark.parametrize("winner", ["a", "b"])
    def test_either_of_two_overlapping_writes(self, winner: str) -> None:
        ops = [op("put", "a", 0.0, 2.0), op("cond-put", "b", 1.0, 3.0)]
        assert final_states(ops, everywhere({"k": item(winner)}))[0] == []

    def test_an_earlier_write_beats_one_sent_within_the_margin(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 1.003, 2.0)]
        assert final_states(ops, everywhere({"k": item("a")}))[0] == []

    @pytest.mark.parametrize("held", [{"k": item("a")}, {}])
    def test_a_delete_overlapping_a_write_may_win_or_lose(self, held: dict[str, dict[str, Any]]) -> None:
        ops = [op("put", "a", 0.0, 3.0), op("delete", "d1", 1.0, 2.0)]
        assert final_states(ops, everywhere(held))[0] == []

    def test_a_write_in_doubt_may_have_landed_after_a_delete(self) -> None:
        ops = [op("put", "a", 0.0, NEVER, UNKNOWN), op("delete", "d1", 2.0, 3.0)]
        assert final_states(ops, everywhere({"k": item("a")}))[0] == []

    def test_a_delete_in_doubt_may_have_removed_a_later_acknowledged_write(self) -> None:
        ops = [op("put", "a", 2.0, 3.0), op("delete", "d1", 0.0, NEVER, UNKNOWN)]
        assert final_states(ops, everywhere({}))[0] == []

    def test_a_refused_write_and_a_refused_delete_change_nothing(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("cond-put", "b", 2.0, 3.0, FAILED), op("delete", "d1", 4.0, 5.0, FAILED)]
        assert final_states(ops, everywhere({"k": item("a")}))[0] == []

    def test_an_item_written_only_in_doubt_may_be_absent(self) -> None:
        assert final_states([op("put", "a", 0.0, NEVER, UNKNOWN)], everywhere({}))[0] == []


class TestLostWrites:
    def test_an_older_value_held_over_an_acknowledged_later_write(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("update", "b", 2.0, 3.0)]
        problems, losses, verdicts = final_states(ops, {"us-east-1": {"k": item("a")}})
        assert problems == [
            "every acknowledged write present or overwritten by a later write or delete: us-east-1: k lost b "
            "(sent at 2.000 s): holds the older a, answered at 1.000 s"
        ]
        assert (losses.writes, losses.deletes, verdicts.lost) == ({"b"}, set(), 1)

    def test_an_acknowledged_write_absent_with_no_delete(self) -> None:
        problems, losses, verdicts = final_states([op("probe", "p1", 0.0, 1.0)], {"eu-west-1": {}})
        assert problems == [
            "every acknowledged write present or overwritten by a later write or delete: eu-west-1: k lost p1 "
            "(sent at 0.000 s): absent, no delete"
        ]
        assert verdicts.lost == 1

    def test_an_acknowledged_write_absent_whose_only_delete_came_before_it(self) -> None:
        ops = [op("delete", "d1", 0.0, 1.0), op("put", "a", 2.0, 3.0), op("delete", "d2", 4.0, 5.0, FAILED)]
        problems, losses, _ = final_states(ops, {"eu-west-1": {}})
        assert problems == [
            "every acknowledged write present or overwritten by a later write or delete: eu-west-1: k lost a "
            "(sent at 2.000 s): absent, the last delete answered at 1.000 s"
        ]
        assert losses.writes == {"a"}

    def test_a_write_lost_in_two_regions_counts_once(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 2.0, 3.0)]
        problems, losses, verdicts = final_states(ops, everywhere({"k": item("a")}))
        assert (len(problems), len(losses.lost_writes), verdicts.lost) == (1, 2, 1)


class TestDeletedItemsBack:
    def test_an_item_back_after_an_acknowledged_delete(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("delete", "d1", 2.0, 3.0)]
        problems, losses, verdicts = final_states(ops, {"us-east-1": {}, "eu-west-1": {"k": item("a")}})
        assert problems == [
            "no deleted item back: eu-west-1: k deleted by d1 at 2.000-3.000 s is back with a, answered at 1.000 s"
        ]
        assert (losses.writes, losses.deletes, verdicts.lost) == (set(), {"d1"}, 1)

    def test_a_write_sent_after_the_delete_was_answered_brings_it_back_rightly(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("delete", "d1", 2.0, 3.0), op("put", "b", 4.0, 5.0)]
        assert final_states(ops, everywhere({"k": item("b")}))[0] == []


class TestValuesNobodyWrote:
    def test_a_refused_write_held_and_a_value_never_written(self) -> None:
        ops = [op("cond-put", "a", 0.0, 1.0, FAILED)]
        problems, _, _ = final_states(ops, {"us-east-1": {"k": item("a"), "j": item("zz", key="j")}})
        assert problems == [
            "every value held was written (acknowledged or in doubt): us-east-1: j holds zz, which no operation "
            "wrote; us-east-1: k holds a, whose write was refused (ConditionalCheckFailedException)"
        ]

    def test_a_value_under_another_key(self) -> None:
        problems, _, _ = final_states([op("put", "a", 0.0, 1.0, key="j")], {"us-east-1": {"k": item("a")}})
        assert problems[-1].endswith("us-east-1: k holds a, written to j")


class TestIdentical:
    def test_the_same_items_everywhere(self) -> None:
        verdicts = Verdicts()
        check_identical(verdicts, everywhere({"k": item("a"), "j": item("b", key="j")}))
        assert verdicts.ok and verdicts.findings[0].detail == "2 items in each of 2 regions"

    def test_an_item_missing_in_one_region_and_an_attribute_that_differs(self) -> None:
        verdicts = Verdicts()
        check_identical(verdicts, {"us-east-1": {"k": item("a"), "j": item("b", key="j")},
                                   "eu-west-1": {"k": item("a", u="x")}})  # fmt: skip
        assert [f.detail for f in verdicts.findings] == [
            "j: eu-west-1 absent, us-east-1 w=b; k: eu-west-1 w=a (+u), us-east-1 w=a"
        ]
        assert not verdicts.ok


class TestReads:
    def test_reads_of_written_values(self) -> None:
        ops = [op("put", "a", 0.0, 1.0), op("put", "b", 2.0, NEVER, UNKNOWN),
               op("read", "", 1.5, 1.6, result="a"), op("read", "", 3.0, 3.1, result="b"),
               op("read", "", 0.0, 0.1, result=None)]  # fmt: skip
        verdicts = Verdicts()
        check_reads(verdicts, ops)
        assert verdicts.ok and verdicts.findings[0].detail == "3 reads"

    def test_a_read_of_a_refused_write_and_of_one_not_yet_sent(self) -> None:
        ops = [op("cond-put", "a", 0.0, 1.0, FAILED), op("put", "b", 5.0, 6.0),
               op("read", "", 1.5, 1.6, result="a"), op("read", "", 3.0, 3.1, result="b")]  # fmt: skip
        verdicts = Verdicts()
        check_reads(verdicts, ops)
        assert [f.detail for f in verdicts.findings] == [
            "us-east-1: k read a, whose write was refused (ConditionalCheckFailedException); "
            "us-east-1: k read b at 3.100 s, before it was sent"
        ]


class TestPercentile:
    def test_nearest_rank(self) -> None:
        values = [float(v) for v in range(1, 101)]
        assert (percentile(values, 0.5), percentile(values, 0.99), percentile([3.0], 0.99)) == (50.0, 99.0, 3.0)

    def test_none(self) -> None:
        assert math.isnan(percentile([], 0.5))


class TestLagFigures:
    def test_every_probe_those_no_fault_overlapped_and_each_pair(self) -> None:
        lags = [Lag("us-east-1", "eu-west-1", 1.0, 1.05), Lag("us-east-1", "eu-west-1", 2.0, 2.07),
                Lag("eu-west-1", "us-east-1", 9.0, 14.0), Lag("eu-west-1", "us-east-1", 9.5, None),
                Lag("eu-west-1", "us-west-2", 10.5, 10.6)]  # fmt: skip
        faults = [Fault("link-down", "us-east-1", 10.0, 12.0)]
        assert render_lags(lags, faults) == [
            "replication lag (a probe's write acknowledged -> read back in another region), p50 / p99:",
            "  all probes: 70 / 5000 ms (4 samples); not seen within the probe's patience: 1",
            "  outside faults: 50 / 70 ms (2 samples); between regions no fault struck (faults elsewhere or none): "
            "70 / 100 ms (3 samples)",
            "  eu-west-1 -> us-east-1: 5000 / 5000 ms (1 sample)",
            "  eu-west-1 -> us-west-2: 100 / 100 ms (1 sample)",
            "  us-east-1 -> eu-west-1: 50 / 70 ms (2 samples)",
        ]

    def test_no_probe_seen(self) -> None:
        assert render_lags([Lag("us-east-1", "eu-west-1", 1.0, None)], [])[1:] == [
            "  all probes: no samples; not seen within the probe's patience: 1",
            "  outside faults: no samples; between regions no fault struck (faults elsewhere or none): no samples",
        ]
