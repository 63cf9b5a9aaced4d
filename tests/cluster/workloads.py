"""The load: client threads that write through any node and record every operation in the history.

Four workloads, each on a table of its own: unique puts (each key written once), conditional writes on a few
registers (read, then a write conditioned on the version read), a bank (transactions moving money between two
accounts, and transactional reads of every balance) and writes to a table with a stream.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from tests.cluster.clients import client, until_done
from tests.cluster.history import History

PUTS, REGISTERS, BANK, STREAM = "faults_puts", "faults_registers", "faults_bank", "faults_stream"
REGISTER_COUNT = 3
ACCOUNTS = 8
OPENING_BALANCE = 100
STREAM_KEYS = 16


@dataclass
class Load:
    """Client threads against ``urls`` until ``deadline`` (time.monotonic()); each picks a node per operation."""

    urls: list[str]
    seed: int
    history: History = field(default_factory=History)
    pause: float = 0.03  # between one thread's operations: bounded load on a machine of two cores
    deadline: float = 0.0
    picked: dict[int, str] = field(default_factory=dict)
    shared: list[Any] = field(default_factory=list)  # a client per node, shared by the threads (botocore allows it)

    def __post_init__(self) -> None:
        self.shared = [client(url) for url in self.urls]  # made before the clock starts: making one takes a while

    def run(self, seconds: float, workers: dict[str, int]) -> None:
        """``workers``: how many threads each workload gets (puts, registers, transfers, balances, stream)."""
        self.deadline = time.monotonic() + seconds
        threads: list[threading.Thread] = []
        for kind, count in workers.items():
            for _ in range(count):
                process = len(threads)
                target = WORKERS[kind]
                threads.append(threading.Thread(target=target, args=(self, process), name=f"{kind}-{process}"))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def running(self) -> bool:
        return time.monotonic() < self.deadline

    def clients(self, process: int) -> tuple[random.Random, Callable[[], Any]]:
        """The thread's own random source (seeded) and a function giving a client of a node picked at random."""
        rng = random.Random(self.seed * 1000 + process)
        made = self.shared

        def pick() -> Any:
            i = rng.randrange(len(made))
            self.picked[process] = self.urls[i]  # the node the thread's next operation goes to
            return made[i]

        return rng, pick

    def attempt(self, process: int, kind: str, key: str, value: Any, call: Callable[[], Any]) -> Any:
        """``call()`` recorded as one operation; what it answered, or None when it failed (recorded as such)."""
        op = self.history.invoke(process, kind, key, value)
        op.node = self.picked.get(process, "")
        try:
            answer = call()
        except Exception as error:  # every way a request can end is recorded, none stops the thread
            self.history.failed(op, error)
            return None
        self.history.ok(op, answer)
        return answer


def unique_puts(load: Load, process: int) -> None:
    rng, pick = load.clients(process)
    n = 0
    while load.running():
        key = f"p{process}-{n}"
        load.attempt(process, "put", key, None, partial(pick().put_item, TableName=PUTS, Item={"pk": {"S": key}}))
        n += 1
        time.sleep(load.pause)


def registers(load: Load, process: int) -> None:
    """Read a register (strongly consistent), then write it on condition that its version is still the one read.
    Every write's expected version comes from the read just before it (cas_register.from_history relies on it)."""
    rng, pick = load.clients(process)
    n = 0
    while load.running():
        key = f"r{rng.randrange(REGISTER_COUNT)}"
        state = load.attempt(process, "read", key, None, partial(read_register, pick(), REGISTERS, key))
        if state is not None:
            n += 1
            token = f"w{process}-{n}"
            write = partial(write_register, pick(), REGISTERS, key, state[0], token)
            load.attempt(process, "cas", key, (state[0], token), write)
        time.sleep(load.pause)


def read_register(ddb: Any, table: str, key: str, token_attribute: str = "token") -> tuple[int, str | None]:
    """A register's state, read strongly consistent: (version, token), or (0, None) while the item does not exist."""
    item = ddb.get_item(TableName=table, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
    return (0, None) if item is None else (int(item["ver"]["N"]), str(item[token_attribute]["S"]))


def write_register(ddb: Any, table: str, key: str, expected: int, token: str, token_attribute: str = "token") -> Any:
    """The register's version ``expected`` + 1 with ``token``, on condition that it still holds ``expected``."""
    item = {"pk": {"S": key}, "ver": {"N": str(expected + 1)}, token_attribute: {"S": token}}
    if expected == 0:
        return ddb.put_item(TableName=table, Item=item, ConditionExpression="attribute_not_exists(pk)")
    return ddb.put_item(TableName=table, Item=item, ConditionExpression="ver = :v",
                        ExpressionAttributeValues={":v": {"N": str(expected)}})  # fmt: skip


def transfers(load: Load, process: int) -> None:
    """Move an amount between two accounts in one transaction, refused when the source has too little."""
    rng, pick = load.clients(process)
    while load.running():
        source, target = rng.sample(range(ACCOUNTS), 2)
        amount = rng.randint(1, 30)
        transfer = partial(pick().transact_write_items, TransactItems=_transfer(source, target, amount))
        load.attempt(process, "transfer", f"a{source}>a{target}", amount, transfer)
        time.sleep(load.pause)


def _transfer(source: int, target: int, amount: int) -> list[dict[str, Any]]:
    value = {":a": {"N": str(amount)}}
    return [
        {"Update": {"TableName": BANK, "Key": {"pk": {"S": f"a{source}"}}, "UpdateExpression": "SET balance = "
                    "balance - :a", "ConditionExpression": "balance >= :a", "ExpressionAttributeValues": value}},
        {"Update": {"TableName": BANK, "Key": {"pk": {"S": f"a{target}"}}, "UpdateExpression": "SET balance = "
                    "balance + :a", "ConditionExpression": "attribute_exists(pk)", "ExpressionAttributeValues": value}},
    ]  # fmt: skip


def balances(load: Load, process: int) -> None:
    """Read every balance in one transaction: a snapshot whose sum must be the bank's total."""
    rng, pick = load.clients(process)
    while load.running():
        load.attempt(process, "balances", "bank", None, partial(read_balances, pick()))
        time.sleep(load.pause * 3)


def read_balances(ddb: Any) -> list[int]:
    items = [{"Get": {"TableName": BANK, "Key": {"pk": {"S": f"a{i}"}}}} for i in range(ACCOUNTS)]
    answer = ddb.transact_get_items(TransactItems=items)
    return [int(r["Item"]["balance"]["N"]) if "Item" in r else -(10**9) for r in answer["Responses"]]


def stream_writes(load: Load, process: int) -> None:
    """Overwrite a few keys of the stream's table, each write with an id of its own (the checker finds it in the
    stream's new image, and the one before it in the old image)."""
    rng, pick = load.clients(process)
    n = 0
    while load.running():
        key, write = f"s{rng.randrange(STREAM_KEYS)}", f"w{process}-{n}"
        put = partial(pick().put_item, TableName=STREAM, Item={"pk": {"S": key}, "w": {"S": write}})
        load.attempt(process, "stream-put", key, write, put)
        n += 1
        time.sleep(load.pause)


WORKERS: dict[str, Callable[[Load, int], None]] = {
    "puts": unique_puts,
    "registers": registers,
    "transfers": transfers,
    "balances": balances,
    "stream": stream_writes,
}


def create_tables(url: str) -> None:
    """The four tables and the bank's opening balances, through ``url``, retried until they are there."""
    ddb = client(url)
    for table in (PUTS, REGISTERS, BANK, STREAM):
        extra: dict[str, Any] = {}
        if table == STREAM:
            extra["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        until_done(lambda: ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",  # noqa: B023
                   KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], **extra),  # noqa: B023
                   accept=("ResourceInUseException",))  # fmt: skip
    for table in (PUTS, REGISTERS, BANK, STREAM):
        _wait_active(ddb, table)
    for i in range(ACCOUNTS):
        item = {"pk": {"S": f"a{i}"}, "balance": {"N": str(OPENING_BALANCE)}}
        until_done(lambda: ddb.put_item(TableName=BANK, Item=item, ConditionExpression="attribute_not_exists(pk)"),  # noqa: B023
                   accept=("ConditionalCheckFailedException",))  # fmt: skip


def _wait_active(ddb: Any, table: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while until_done(lambda: ddb.describe_table(TableName=table))["Table"]["TableStatus"] != "ACTIVE":  # type: ignore[index]
        if time.monotonic() > deadline:
            raise RuntimeError(f"{table} not ACTIVE after {timeout} s")
        time.sleep(0.2)
