"""The checks the harness runs after a run, on what it could have seen (no cluster needed)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError

from tests.cluster.checker import StreamRecord, Verdicts, check_bank, check_puts, check_replicas, check_stream
from tests.cluster.history import NEVER, History, Op, Outcome, classify, ended

NODE = "http://10.77.0.1:8000"


def op(kind: str, key: str, outcome: Outcome, value: Any = None, result: Any = None, error: str = "") -> Op:
    return ended(1, kind, key, value, 0.0, 1.0, outcome, result, error)


def failures(verdicts: Verdicts) -> list[str]:
    return [f"{f.check}: {f.detail}" for f in verdicts.findings if not f.ok]


def client_error(status: int, code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": ""}, "ResponseMetadata": {"HTTPStatusCode": status}}, "Op")


class TestClassify:
    @pytest.mark.parametrize(
        ("error", "expected"),
        [
            (client_error(400, "ConditionalCheckFailedException"), (Outcome.FAILED, "ConditionalCheckFailedException")),
            (client_error(500, "InternalServerError"), (Outcome.UNKNOWN, "InternalServerError")),
            (client_error(503, "ServiceUnavailable"), (Outcome.UNKNOWN, "ServiceUnavailable")),
            (ReadTimeoutError(endpoint_url=NODE), (Outcome.UNKNOWN, "ReadTimeoutError")),
            (EndpointConnectionError(endpoint_url=NODE), (Outcome.FAILED, "EndpointConnectionError")),
            (ConnectTimeoutError(endpoint_url=NODE), (Outcome.FAILED, "ConnectTimeoutError")),
        ],
    )
    def test_what_an_error_says_about_the_request(self, error: Exception, expected: tuple[Outcome, str]) -> None:
        assert classify(error) == expected

    def test_an_in_doubt_operation_never_completes(self) -> None:
        history = History()
        timed_out = history.invoke(1, "put", "k")
        history.failed(timed_out, ReadTimeoutError(endpoint_url=NODE))
        refused = history.invoke(1, "put", "k")
        history.failed(refused, client_error(400, "ValidationException"))
        assert (timed_out.outcome, timed_out.complete) == (Outcome.UNKNOWN, NEVER)
        assert refused.outcome is Outcome.FAILED and refused.complete < NEVER


class TestPuts:
    def test_acknowledged_everywhere_and_in_doubt_either_way(self) -> None:
        ops = [op("put", "a", Outcome.OK), op("put", "b", Outcome.UNKNOWN), op("put", "c", Outcome.UNKNOWN),
               op("put", "d", Outcome.FAILED, error="ValidationException")]  # fmt: skip
        verdicts = Verdicts()
        check_puts(verdicts, ops, {"n1": {"a", "b"}, "n2": {"a", "b"}, "n3": {"a", "b"}})
        assert (failures(verdicts), verdicts.lost, verdicts.ok) == ([], 0, True)

    def test_a_lost_acknowledged_put(self) -> None:
        verdicts = Verdicts()
        check_puts(verdicts, [op("put", "a", Outcome.OK)], {"n1": {"a"}, "n2": set()})
        assert verdicts.lost == 1
        assert failures(verdicts) == ["puts: every acknowledged put on every node: a missing on n2"]

    def test_a_refused_put_that_is_there_and_a_key_nobody_wrote(self) -> None:
        verdicts = Verdicts()
        check_puts(verdicts, [op("put", "d", Outcome.FAILED, error="ValidationException")], {"n1": {"d", "z"}})
        assert failures(verdicts) == [
            "puts: nothing neither acknowledged nor in doubt: d on n1 (refused: ValidationException); "
            "z on n1 (never written)"
        ]


class TestReplicas:
    def test_equal_digests_at_one_index(self) -> None:
        verdicts = Verdicts()
        check_replicas(verdicts, [{"node": n, "appliedIndex": 7, "digest": "ab" * 32} for n in ("n1", "n2", "n3")])
        assert verdicts.ok

    @pytest.mark.parametrize("differ", [{"appliedIndex": 6}, {"digest": "cd" * 32}])
    def test_a_replica_that_differs(self, differ: dict[str, Any]) -> None:
        digests = [{"node": n, "appliedIndex": 7, "digest": "ab" * 32} for n in ("n1", "n2", "n3")]
        digests[2].update(differ)
        verdicts = Verdicts()
        check_replicas(verdicts, digests)
        assert not verdicts.ok


class TestBank:
    def test_snapshots_that_keep_the_total(self) -> None:
        reads = [op("balances", "bank", Outcome.OK, result=[50, 150]), op("balances", "bank", Outcome.UNKNOWN)]
        verdicts = Verdicts()
        check_bank(verdicts, reads, [100, 100], 200)
        assert verdicts.ok

    def test_money_created_during_the_run(self) -> None:
        verdicts = Verdicts()
        check_bank(verdicts, [op("balances", "bank", Outcome.OK, result=[60, 150])], [100, 100], 200)
        assert failures(verdicts) == ["bank: the sum never changes: at 1.00 s: [60, 150] sums to 210"]

    def test_money_lost_by_the_end_and_a_negative_balance(self) -> None:
        verdicts = Verdicts()
        check_bank(verdicts, [op("balances", "bank", Outcome.OK, result=[-10, 210])], [100, 90], 200)
        assert failures(verdicts) == [
            "bank: the sum never changes: at 1.00 s: [-10, 210] sums to 200; after the run: [100, 90] sums to 190"
        ]


def record(sequence: int, key: str, new: str | None, old: str | None, shard: str = "s1") -> StreamRecord:
    return StreamRecord(sequence, key, shard, new, old)


def stream_failures(ops: list[Op], records: list[StreamRecord], final: dict[str, str]) -> tuple[list[str], int]:
    verdicts = Verdicts()
    check_stream(verdicts, ops, "n1", records, final)
    return [f.detail for f in verdicts.findings if not f.ok], verdicts.lost


class TestStream:
    writes = [op("stream-put", "k", Outcome.OK, "w1"), op("stream-put", "k", Outcome.UNKNOWN, "w2"),
              op("stream-put", "k", Outcome.OK, "w3"), op("stream-put", "j", Outcome.FAILED, "w4")]  # fmt: skip

    def test_every_acknowledged_write_once_in_order(self) -> None:
        records = [record(1, "k", "w1", None), record(2, "k", "w2", "w1"), record(5, "k", "w3", "w2", "s2")]
        assert stream_failures(self.writes, records, {"k": "w3"}) == ([], 0)

    def test_an_in_doubt_write_may_be_absent(self) -> None:
        records = [record(1, "k", "w1", None), record(2, "k", "w3", "w1")]
        assert stream_failures(self.writes, records, {"k": "w3"}) == ([], 0)

    def test_a_missing_acknowledged_write(self) -> None:
        problems, lost = stream_failures(self.writes, [record(1, "k", "w1", None)], {"k": "w1"})
        assert (problems, lost) == (["w3 (acknowledged) missing"], 1)

    def test_a_record_twice(self) -> None:
        records = [record(1, "k", "w1", None), record(2, "k", "w1", None), record(3, "k", "w3", "w1")]
        problems, _ = stream_failures(self.writes, records, {"k": "w3"})
        assert problems == ["w1 appears 2 times; k@2: old image None, previous w1"]

    def test_a_refused_write_in_the_stream(self) -> None:
        records = [record(1, "k", "w1", None), record(2, "k", "w3", "w1"), record(3, "j", "w4", None)]
        problems, _ = stream_failures(self.writes, records, {"k": "w3", "j": "w4"})
        assert problems == ["w4 appears 1 times but was refused"]

    def test_sequence_numbers_that_go_back_within_a_shard(self) -> None:
        records = [record(2, "k", "w1", None), record(1, "k", "w3", "w1")]
        problems, _ = stream_failures(self.writes, records, {"k": "w3"})
        assert problems[0].startswith("s1: sequence 1 after 2; ")

    def test_a_gap_in_a_key_s_images(self) -> None:
        # w2 (in doubt) took effect, as w3's old image shows, but its own record is missing.
        records = [record(1, "k", "w1", None), record(3, "k", "w3", "w2")]
        problems, _ = stream_failures(self.writes, records, {"k": "w3"})
        assert problems == ["k@3: old image w2, previous w1"]

    def test_a_table_that_ends_elsewhere_than_its_stream(self) -> None:
        records = [record(1, "k", "w1", None), record(2, "k", "w3", "w1")]
        problems, _ = stream_failures(self.writes, records, {"k": "w1"})
        assert problems == ["k holds w1, its last stream record w3"]
