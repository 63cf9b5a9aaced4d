"""The funds-transfer invariant under kill -9: concurrent transfers with an overdraft condition never lose money.

Workers make random transfers between a few accounts (so transactions meet each other and must retry on
TransactionConflict). Each transfer is one TransactWriteItems: debit with ``bal >= :amount``, credit, and a
log item that may exist once; its ClientRequestToken is the transfer id. The test kill -9s the server while
transfers are in flight, restarts it, and re-sends every transfer whose answer was lost with the same token:
a transfer that had committed is answered from the token without being applied twice. After the last
restart, the balances must sum to the initial total, and each account's balance must equal its initial
balance plus exactly the logged transfers: nothing partial, nothing acknowledged and lost, nothing doubled.
"""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess

ACCOUNTS = 6
INITIAL = 100
WORKERS = 6
CYCLES = 2
KILL_AFTER = 40  # acknowledged transfers per cycle before the kill
CONFLICTS: list[str] = []  # transfers that met another transaction and retried (diagnostics)
RESENT: list[str] = []  # transfers whose answer was lost to a kill (diagnostics)
RETRYABLE = {"TransactionInProgressException", "ThrottlingException", "ProvisionedThroughputExceededException"}
RETRYABLE_REASONS = {"ThrottlingError", "ProvisionedThroughputExceeded"}


def _transfer_items(table: str, tid: str, src: int, dst: int, amount: int) -> list[dict[str, Any]]:
    value = {":a": {"N": str(amount)}}
    return [
        {
            "Update": {
                "TableName": table,
                "Key": {"pk": {"S": f"acct{src}"}},
                "UpdateExpression": "SET bal = bal - :a",
                "ConditionExpression": "bal >= :a",
                "ExpressionAttributeValues": value,
            }
        },
        {
            "Update": {
                "TableName": table,
                "Key": {"pk": {"S": f"acct{dst}"}},
                "UpdateExpression": "SET bal = bal + :a",
                "ExpressionAttributeValues": value,
            }
        },
        {
            "Put": {
                "TableName": table,
                "Item": {
                    "pk": {"S": f"log#{tid}"},
                    "src": {"N": str(src)},
                    "dst": {"N": str(dst)},
                    "amount": {"N": str(amount)},
                },
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
    ]


class Ledger:
    """What the clients know: transfers acknowledged, refused (overdraft), or unknown (answer lost)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done: dict[str, tuple[int, int, int]] = {}
        self.refused: set[str] = set()
        self.unknown: dict[str, tuple[int, int, int]] = {}


def _send(client: Any, table: str, tid: str, transfer: tuple[int, int, int], deadline: float) -> str:
    """'done', 'refused', or raises BotoCoreError/ClientError when the server is gone."""
    items = _transfer_items(table, tid, *transfer)
    while time.monotonic() < deadline:
        try:
            client.transact_write_items(TransactItems=items, ClientRequestToken=tid)
            return "done"
        except ClientError as e:
            code = e.response["Error"]["Code"]
            if code == "TransactionCanceledException":
                reasons = [r["Code"] for r in e.response.get("CancellationReasons", [])]
                if "TransactionConflict" in reasons:
                    CONFLICTS.append(tid)
                    continue  # met another transaction: retry
                if RETRYABLE_REASONS.intersection(reasons):
                    continue  # throttled as a whole: nothing was written, retry
                assert reasons[0] == "ConditionalCheckFailed" and reasons[1:] == ["None", "None"], reasons
                return "refused"
            if code in RETRYABLE:
                continue
            raise
    raise AssertionError("transfer did not finish in time")


def _worker(url: str, table: str, worker: int, ledger: Ledger, stop: threading.Event, deadline: float) -> None:
    client = make_client(url)
    rng = random.Random(worker)
    n = 0
    try:
        while not stop.is_set():
            n += 1
            tid = f"{url.rsplit(':', 1)[1]}-{worker}-{n}"
            src, dst = rng.sample(range(ACCOUNTS), 2)
            transfer = (src, dst, rng.randint(1, 40))
            try:
                outcome = _send(client, table, tid, transfer, deadline)
            except (BotoCoreError, ClientError):
                with ledger.lock:
                    ledger.unknown[tid] = transfer
                return  # the server is gone
            with ledger.lock:
                if outcome == "done":
                    ledger.done[tid] = transfer
                else:
                    ledger.refused.add(tid)
    finally:
        client.close()


def test_transfers_keep_the_total_across_kill_9(tmp_path: Path) -> None:
    deadline = time.monotonic() + 50
    server = ServerProcess(data_dir=tmp_path)
    client = make_client(server.url)
    table = create_table(client, "S")
    for account in range(ACCOUNTS):
        client.put_item(TableName=table, Item={"pk": {"S": f"acct{account}"}, "bal": {"N": str(INITIAL)}})
    ledger = Ledger()

    for _ in range(CYCLES):
        stop = threading.Event()
        with ThreadPoolExecutor(WORKERS) as pool:
            futures = [pool.submit(_worker, server.url, table, w, ledger, stop, deadline) for w in range(WORKERS)]
            target = len(ledger.done) + KILL_AFTER
            while len(ledger.done) < target and time.monotonic() < deadline:
                time.sleep(0.01)
            server.kill()  # SIGKILL with transfers in flight
            stop.set()
            for future in futures:
                future.result()
        client.close()
        server = ServerProcess(data_dir=tmp_path)
        client = make_client(server.url)
        # Re-send every transfer whose answer was lost, with its token: applied at most once.
        for tid, transfer in sorted(ledger.unknown.items()):
            if _send(client, table, tid, transfer, deadline) == "done":
                ledger.done[tid] = transfer
            else:
                ledger.refused.add(tid)
        RESENT.extend(ledger.unknown)
        ledger.unknown.clear()

    print(f"done={len(ledger.done)} refused={len(ledger.refused)} conflicts={len(CONFLICTS)} resent={len(RESENT)}")
    try:
        assert len(ledger.done) >= CYCLES * KILL_AFTER
        balances = [
            int(client.get_item(TableName=table, Key={"pk": {"S": f"acct{a}"}})["Item"]["bal"]["N"])
            for a in range(ACCOUNTS)
        ]
        assert sum(balances) == ACCOUNTS * INITIAL
        assert min(balances) >= 0
        expected = [INITIAL] * ACCOUNTS
        for tid, (src, dst, amount) in ledger.done.items():
            log = client.get_item(TableName=table, Key={"pk": {"S": f"log#{tid}"}}).get("Item")
            assert log is not None, f"acknowledged transfer {tid} was lost"
            assert log["amount"] == {"N": str(amount)}
            expected[src] -= amount
            expected[dst] += amount
        for tid in ledger.refused:
            assert "Item" not in client.get_item(TableName=table, Key={"pk": {"S": f"log#{tid}"}})
        assert balances == expected  # every committed transfer is acknowledged and complete
    finally:
        client.close()
        server.stop()
