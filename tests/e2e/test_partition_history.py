"""The partition view after the fact: a hot-key load, then twenty minutes of quiet (--manual-clock), and what the
admin endpoints and ``dynastore partitions --window`` still show of it (engine/capacity/history.py, docs/capacity.md
"Seeing it")."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.e2e.conftest import ADMIN, make_client, unique_name
from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_admin_endpoints import now, request

server = server_fixture("--manual-clock")

QUIET_SECONDS = 20 * 60


@dataclass(frozen=True)
class Load:
    table: str
    started: float
    ended: float
    admitted: int
    throttled: int


def write_hot_key(ddb: Any, table: str, count: int) -> tuple[int, int]:
    """``count`` writes of one partition key (no retries): how many were admitted and how many throttled."""
    admitted = throttled = 0
    for i in range(count):
        try:
            ddb.put_item(TableName=table, Item={"pk": {"S": "hot"}, "n": {"N": str(i)}})
            admitted += 1
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
            throttled += 1
    return admitted, throttled


@pytest.fixture(scope="module")
def load(server: ServerProcess) -> Load:
    """Three seconds of a hot key on a 4-WCU table with Contributor Insights on, then twenty quiet minutes."""
    ddb = make_client(server.url)
    table = unique_name("hist")
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 4, "WriteCapacityUnits": 4},
    )
    ddb.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE")
    assert request(server, "POST", f"/dynastore/partitions/{table}", {"spend_burst": True}, ADMIN)[0] == 200
    started = now(server)
    admitted = throttled = 0
    for second in range(3):
        if second:
            assert request(server, "POST", "/dynastore/clock", {"advance": 1}, ADMIN)[0] == 200
        ok, refused = write_hot_key(ddb, table, 7)
        admitted, throttled = admitted + ok, throttled + refused
    ended = now(server)
    assert request(server, "POST", "/dynastore/clock", {"advance": QUIET_SECONDS}, ADMIN)[0] == 200
    assert admitted and throttled
    return Load(table, started, ended, admitted, throttled)


def view(server: ServerProcess, path: str) -> Any:
    status, _, body = request(server, "GET", path, headers={"Host": "localhost"})
    assert status == 200, body
    return body


def totals(history: list[dict[str, Any]]) -> tuple[float, int, set[int]]:
    written = sum(p["consumed"]["write"] for b in history for p in b["partitions"])
    throttled = sum(p["throttled"]["write"] for b in history for p in b["partitions"])
    return written, throttled, {p["partition"] for b in history for p in b["partitions"]}


def test_the_last_hour_holds_the_load_that_ended(server: ServerProcess, load: Load) -> None:
    shown = view(server, f"/dynastore/partitions/{load.table}?window=1h")
    at = now(server)
    assert shown["window"] == {
        "since": at - 3600,
        "until": at,
        "bucket_seconds": 5.0,
        "kept_seconds": 3600.0,
        "oldest": shown["window"]["oldest"],
    }
    assert totals(shown["history"]) == (load.admitted, load.throttled, {0})
    starts = [b["start"] for b in shown["history"]]
    assert starts == sorted(starts) and all(s % 5 == 0 and load.started - 5 < s <= load.ended for s in starts)
    assert shown["partitions"][0]["throttled"]["write"] == load.throttled  # the counters since the start agree
    assert shown["indexes"] == []


def test_the_last_fifteen_minutes_are_quiet(server: ServerProcess, load: Load) -> None:
    shown = view(server, f"/dynastore/partitions/{load.table}?window=15m")
    assert (shown["window"]["since"], shown["window"]["until"]) == (now(server) - 900, now(server))
    assert shown["history"] == []
    assert "history" not in view(server, f"/dynastore/partitions/{load.table}")  # a live poll asks for none


def test_a_window_in_the_past_by_since_and_until(server: ServerProcess, load: Load) -> None:
    first = load.started - load.started % 5
    shown = view(server, f"/dynastore/partitions/{load.table}?since={first}&until={first + 5}")
    assert [b["start"] for b in shown["history"]] == [first]
    ended = view(server, f"/dynastore/partitions/{load.table}?window=300&until={load.ended + 1}")
    assert totals(ended["history"]) == (load.admitted, load.throttled, {0})


def test_top_keys_over_the_same_window(server: ServerProcess, load: Load) -> None:
    hour = view(server, f"/dynastore/contributors/{load.table}?window=1h")
    assert hour["window"] == 3600.0
    (hot,) = hour["rules"]["PKT"]
    assert (hot["key"], hot["ThrottleCount"], hot["partition"]) == ({"pk": {"S": "hot"}}, load.throttled, 0)
    assert [e["ConsumedThroughputUnits"] for e in hour["rules"]["PKC"]] == [3 * load.admitted]
    assert view(server, f"/dynastore/contributors/{load.table}?window=15m")["rules"] == {"PKC": [], "PKT": []}
    then = view(server, f"/dynastore/contributors/{load.table}?window=5m&until={load.ended + 1}")
    assert then["until"] == load.ended + 1 and [e["ThrottleCount"] for e in then["rules"]["PKT"]] == [load.throttled]


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("window=abc", "window must be a duration such as 300, 90s, 15m or 1h, not 'abc'"),
        ("window=0", "window must be a duration such as 300, 90s, 15m or 1h, not '0'"),
        ("window=-5m", "window must be a duration such as 300, 90s, 15m or 1h, not '-5m'"),
        ("window=15m&since=1", "give either window or since, not both"),
        ("since=2000000000&until=1000000000", "since must be before until"),
        ("until=soon", "until must be a time in seconds since the epoch (the server's clock), not 'soon'"),
    ],
)
def test_a_bad_window_is_refused(server: ServerProcess, load: Load, query: str, error: str) -> None:
    status, _, body = request(server, "GET", f"/dynastore/partitions/{load.table}?{query}")
    assert (status, body) == (400, {"error": error})


def test_contributors_refuse_a_bad_window(server: ServerProcess, load: Load) -> None:
    status, _, body = request(server, "GET", f"/dynastore/contributors/{load.table}?window=nan")
    assert (status, body) == (400, {"error": "window must be a duration such as 300, 90s, 15m or 1h, not 'nan'"})


def partitions(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "dynastore", "partitions", *args, "--endpoint", server.url]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_the_cli_shows_the_window_asked_for(server: ServerProcess, load: Load) -> None:
    hour = partitions(server, load.table, "--window", "1h", "--contributors")
    assert hour.returncode == 0, hour.stderr
    section = hour.stdout.split("\nthe last 1h (5-second buckets; the server keeps one hour):\n", 1)[1]
    lines = section.splitlines()
    assert lines[:2] == ["table:", "  #    used R    used W  thr R  thr W  last throttled"]
    assert lines[2].split()[:5] == ["0", "0", str(load.admitted), "0", str(load.throttled)]
    assert lines[2].endswith(" s ago")
    top = hour.stdout.split("  PKT:\n", 1)[1].splitlines()[0]  # the most throttled key of the same hour
    assert top == f'    {{"pk": {{"S": "hot"}}}}  units={3 * load.admitted}  throttled={load.throttled}  partition=0'
    quiet = partitions(server, load.table, "--window", "15m")
    assert quiet.returncode == 0, quiet.stderr
    assert "the last 15m (5-second buckets; the server keeps one hour):\ntable:\n" in quiet.stdout
    assert "    (no use in this window)" in quiet.stdout
    bad = partitions(server, load.table, "--window", "soon")
    assert (bad.returncode, bad.stdout) == (1, "")
    assert (
        bad.stderr == "dynastore partitions: error: window must be a duration such as 300, 90s, 15m or 1h, not 'soon'\n"
    )
