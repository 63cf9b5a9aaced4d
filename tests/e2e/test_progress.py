"""The progress of long work end to end (docs/operations.md "Progress of long work"): a GSI backfill made slow
(one item per 5 s of a manual clock) seen in ``GET /dynastore/progress`` and in the server's log, and
``dynastore tables wait-index`` following it with a progress bar and stopping on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from tests.e2e.server_process import ServerProcess, server_fixture

BACKFILL_INTERVAL = 5.0
server = server_fixture(
    "--manual-clock", "--gsi-backfill-chunk", "1", "--gsi-backfill-interval", str(BACKFILL_INTERVAL)
)


def eventually(check: Callable[[], Any], what: str) -> Any:
    """The first true value of ``check()``, polled while the server's background loop runs (no timing is
    asserted: the clock is the server's manual one; the bound only keeps a broken test from hanging)."""
    for _ in range(3000):
        got = check()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"never: {what}")


def table_with_items(server: ServerProcess, count: int) -> str:
    name = f"progress_{uuid.uuid4().hex[:8]}"
    server.ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for i in range(count):
        server.ddb.put_item(TableName=name, Item={"pk": {"S": f"p{i}"}, "g": {"S": f"g{i % 2}"}})
    return name


def add_index(server: ServerProcess, table: str, index: str = "byg") -> None:
    """Create the GSI ``byg`` online; its first chunk is due at once (the backfills of this server share their
    pacing: the last chunk of an earlier test's may have been copied at this time of the clock)."""
    server.advance(BACKFILL_INTERVAL)
    server.ddb.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[
            {
                "Create": {
                    "IndexName": index,
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            }
        ],
    )


def backfill(server: ServerProcess, table: str) -> dict[str, Any] | None:
    jobs = server.admin("/dynastore/progress")["jobs"]
    return next((j for j in jobs if j["kind"] == "gsi_backfill" and j["table"] == table), None)


def index_status(server: ServerProcess, table: str) -> str:
    described = server.ddb.describe_table(TableName=table)["Table"]
    return str(described["GlobalSecondaryIndexes"][0]["IndexStatus"])


def next_chunk(server: ServerProcess, table: str, copied: int) -> None:
    """Until the backfill has copied more than ``copied`` items, or ended."""
    eventually(lambda: (job := backfill(server, table)) is None or job["done"] > copied, "the next chunk")


def finish(server: ServerProcess, table: str) -> None:
    """Advance the clock a backfill interval at a time, each time until the next chunk is copied, until the
    index is ACTIVE."""
    for _ in range(100):
        job = backfill(server, table)
        if job is None:
            eventually(lambda: index_status(server, table) == "ACTIVE", "the index ACTIVE")
            return
        server.advance(BACKFILL_INTERVAL)
        next_chunk(server, table, job["done"])
    raise AssertionError("the backfill never ended")


def test_a_backfill_is_reported_while_it_runs_and_logged(server: ServerProcess) -> None:
    table = table_with_items(server, 4)
    add_index(server, table)
    started = server.now()
    first = eventually(lambda: backfill(server, table), "the backfill's job")
    assert first == {
        "kind": "gsi_backfill",
        "account": first["account"],
        "region": "us-east-1",
        "table": table,
        "index": "byg",
        "done": 1,
        "total": 4,
        "unit": "items",
        "percent": 25.0,
        "started": started,
        "rate": None,  # no time has passed on the server's clock yet
        "seconds_left": None,
        "estimated_end": None,
    }
    server.advance(BACKFILL_INTERVAL)
    second = eventually(lambda: (job := backfill(server, table)) is not None and job["done"] == 2 and job, "chunk 2")
    assert (second["percent"], second["rate"], second["seconds_left"]) == (50.0, 0.4, 5.0)
    assert second["estimated_end"] == round(started + 2 * BACKFILL_INTERVAL, 3)
    finish(server, table)
    assert backfill(server, table) is None
    log = eventually(lambda: f"GSI backfill of {table}/byg finished" in server.log_text() and server.log_text(), "end")
    assert f"GSI backfill of {table}/byg started: 4 items" in log
    assert f"GSI backfill of {table}/byg: 2 of 4 items (50.0%), 0 items/s, about 5 s left" in log
    assert f"GSI backfill of {table}/byg finished: 4 items in 15.0 s (0 items/s)" in log


def test_the_progress_endpoint_takes_only_get(server: ServerProcess) -> None:
    import urllib.error
    import urllib.request

    from tests.e2e.conftest import ADMIN

    request = urllib.request.Request(server.url + "/dynastore/progress", data=b"{}", method="POST", headers=ADMIN)
    try:
        urllib.request.urlopen(request, timeout=30)
    except urllib.error.HTTPError as e:
        assert (e.code, e.read()) == (405, b'{"error":"POST is not supported here"}')
    else:
        raise AssertionError("a POST was taken")


# ---------------------------------------------------------------------------------------------- the command


def wait_index(server: ServerProcess, table: str, stderr: Any, *flags: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "dynastore", "tables", "wait-index", table, "byg", "--endpoint", server.url]
    return subprocess.Popen(
        [*command, *flags], stdout=subprocess.PIPE, stderr=stderr, text=True, env=dict(os.environ, COLUMNS="100")
    )


def read(file: Any) -> str:
    file.seek(0)
    return str(file.read().decode(errors="replace"))


def test_wait_index_shows_the_backfill_and_ends_when_the_index_is_active(server: ServerProcess) -> None:
    table = table_with_items(server, 4)
    add_index(server, table)
    with tempfile.TemporaryFile() as errors:
        waiter = wait_index(server, table, errors)
        try:
            eventually(lambda: "1/4" in read(errors), "the bar at 1 of 4")
            finish(server, table)
            out, _ = waiter.communicate(timeout=60)
        finally:
            waiter.kill()
            waiter.wait()
        shown = read(errors)
    assert waiter.returncode == 0, shown
    assert out == f"byg of {table} is ACTIVE (4 items)\n"
    assert f"backfill {table}/byg" in shown and "4/4" in shown and "Traceback" not in shown


def test_ctrl_c_stops_waiting_and_the_backfill_goes_on(server: ServerProcess) -> None:
    table = table_with_items(server, 4)
    add_index(server, table)
    with tempfile.TemporaryFile() as errors:
        waiter = wait_index(server, table, errors)
        try:
            eventually(lambda: "1/4" in read(errors), "the bar at 1 of 4")
            waiter.send_signal(signal.SIGINT)
            out, _ = waiter.communicate(timeout=60)
        finally:
            waiter.kill()
            waiter.wait()
        shown = read(errors)
    assert waiter.returncode == 130, shown
    assert out == ""
    assert shown.rstrip("\n").splitlines()[-1] == (
        "dynastore tables wait-index: stopped waiting; the backfill of byg goes on in the server"
    )
    assert "Traceback" not in shown
    assert backfill(server, table) is not None  # the server goes on
    finish(server, table)


def test_wait_index_on_a_missing_index_says_so(server: ServerProcess) -> None:
    table = table_with_items(server, 0)
    with tempfile.TemporaryFile() as errors:
        waiter = wait_index(server, table, errors, "--no-progress")
        out, _ = waiter.communicate(timeout=60)
        shown = read(errors)
    assert (waiter.returncode, out) == (1, "")
    assert shown == f"dynastore tables wait-index: error: table {table} has no global secondary index byg\n"
