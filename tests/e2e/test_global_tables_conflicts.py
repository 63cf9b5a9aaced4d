"""Global tables end to end when a region's own work meets replication: a replicated write waits for a transaction
of the receiving region that holds its item. One server serves us-east-1 and us-west-2; transactions keep their
items locked 30 seconds of the manual clock after their commit (--transaction-lock-hold), so a test can meet them."""

from __future__ import annotations

import re
import urllib.request
from typing import Any

import pytest

from tests.e2e.server_process import ServerProcess, server_fixture
from tests.e2e.test_global_tables_replication import EAST, WEST, client, create_global_table, eventually, item

LOCK_HOLD = 30.0

server = server_fixture("--manual-clock", "--region", EAST, "--transaction-lock-hold", str(LOCK_HOLD))


@pytest.fixture
def regions(server: ServerProcess) -> tuple[Any, Any]:
    return client(server, EAST), client(server, WEST)


def metric(server: ServerProcess, name: str, table: str, source: str, target: str) -> float | None:
    """The sample of ``name`` for the table's (source, target) pair in /metrics, None when it has none."""
    request = urllib.request.Request(server.url + "/metrics", headers={"Host": "localhost"})
    with urllib.request.urlopen(request, timeout=30) as response:
        page = response.read().decode()
    labels = f'table="{table}",source_region="{source}",target_region="{target}"'
    found = re.search(rf"^{name}\{{{re.escape(labels)}\}} (\S+)$", page, re.MULTILINE)
    return None if found is None else float(found.group(1))


class TestTransactions:
    def test_a_replicated_write_waits_for_the_transaction_holding_its_item(
        self, server: ServerProcess, regions: tuple[Any, Any]
    ) -> None:
        east, west = regions
        table = create_global_table(east, west)
        key = {"pk": {"S": "x"}}
        west.transact_write_items(
            TransactItems=[{"Put": {"TableName": table, "Item": {**key, "v": {"S": "transaction"}}}}]
        )
        east.put_item(TableName=table, Item={**key, "v": {"S": "east"}})

        # us-east-1's write reached us-west-2 and waits there (still pending) while the transaction holds the item.
        pending = eventually(
            lambda: metric(server, "dynastore_pending_replication_count", table, EAST, WEST),
            lambda value: value is not None and value >= 1,
        )
        assert pending is not None and pending >= 1
        assert item(west, table, "x") == {**key, "v": {"S": "transaction"}}

        server.advance(LOCK_HOLD + 1)  # the transaction's commit is final: its items are free

        # The later write (us-east-1's) wins in both regions.
        assert eventually(lambda: item(west, table, "x"), lambda found: found == {**key, "v": {"S": "east"}}) == {
            **key,
            "v": {"S": "east"},
        }
        assert eventually(lambda: item(east, table, "x"), lambda found: found == {**key, "v": {"S": "east"}}) == {
            **key,
            "v": {"S": "east"},
        }
