"""Acknowledged writes survive kill -9 of the durable (LMDB) server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import create_table, make_client
from tests.e2e.server_process import ServerProcess


@pytest.mark.parametrize("flags", [(), ("--crash-safe",)], ids=["default", "crash-safe"])
def test_acknowledged_writes_survive_kill_9(tmp_path: Path, flags: tuple[str, ...]) -> None:
    server = ServerProcess(*flags, data_dir=tmp_path)
    try:
        client = make_client(server.url)
        table = create_table(client, "S", "N")

        def write(worker: int) -> list[int]:
            own = make_client(server.url)
            done = []
            for i in range(50):
                own.put_item(TableName=table, Item={"pk": {"S": f"w{worker}"}, "sk": {"N": str(i)}, "v": {"N": str(i)}})
                done.append(i)
            own.update_item(
                TableName=table,
                Key={"pk": {"S": f"w{worker}"}, "sk": {"N": "0"}},
                UpdateExpression="ADD hits :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )
            own.delete_item(TableName=table, Key={"pk": {"S": f"w{worker}"}, "sk": {"N": "1"}})
            return done

        with ThreadPoolExecutor(8) as pool:
            acknowledged = dict(enumerate(pool.map(write, range(8))))
        helpers = server.children()
    finally:
        server.kill()  # SIGKILL right after the last acknowledgement: no clean shutdown
    assert len(helpers) == 1  # the write-ahead log's sync helper
    assert all(exited(pid) for pid in helpers)  # it does not outlive the server

    restarted = ServerProcess(*flags, data_dir=tmp_path)
    try:
        client = make_client(restarted.url)
        for worker, writes in acknowledged.items():
            for i in writes:
                key = {"pk": {"S": f"w{worker}"}, "sk": {"N": str(i)}}
                response: dict[str, Any] = client.get_item(TableName=table, Key=key, ConsistentRead=True)
                if i == 1:
                    assert "Item" not in response
                else:
                    assert response["Item"]["v"] == {"N": str(i)}
            first = client.get_item(TableName=table, Key={"pk": {"S": f"w{worker}"}, "sk": {"N": "0"}})["Item"]
            assert first["hits"] == {"N": "1"}
    finally:
        restarted.stop()


def test_clean_shutdown_on_sigterm_keeps_data(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)
    client = make_client(server.url)
    table = create_table(client, "S")
    client.put_item(TableName=table, Item={"pk": {"S": "a"}})
    assert server.stop() == 0
    restarted = ServerProcess(data_dir=tmp_path)
    try:
        client = make_client(restarted.url)
        assert client.get_item(TableName=table, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
        assert client.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"
    finally:
        restarted.stop()


def exited(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


def test_ctrl_c_to_the_process_group_shuts_down_cleanly(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path, own_group=True)
    client = make_client(server.url)
    table = create_table(client, "S")
    for i in range(20):
        client.put_item(TableName=table, Item={"pk": {"S": str(i)}})
    (helper,) = server.children()
    os.killpg(server.process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the helper gets it too
    assert server.process.wait(timeout=30) == 0, server.log_text()
    server.stop()
    assert exited(helper)
    assert os.listdir(tmp_path / "wal") == []  # a clean shutdown leaves no log to replay
    restarted = ServerProcess(data_dir=tmp_path)
    try:
        client = make_client(restarted.url)
        assert client.scan(TableName=table)["Count"] == 20
    finally:
        restarted.stop()


def test_a_second_server_on_the_same_data_directory_is_refused(tmp_path: Path) -> None:
    server = ServerProcess(data_dir=tmp_path)
    try:
        client = make_client(server.url)
        table = create_table(client, "S")
        client.put_item(TableName=table, Item={"pk": {"S": "a"}})
        second = subprocess.run(
            [sys.executable, "-m", "dynastore", "serve", "--port", "0", "--data-dir", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert second.returncode == 1
        assert f"the data directory {tmp_path} is in use by another dynastore process" in second.stderr
        assert "Traceback" not in second.stderr
        client.put_item(TableName=table, Item={"pk": {"S": "b"}})  # the first one is undisturbed
        assert client.scan(TableName=table)["Count"] == 2
    finally:
        server.stop()
