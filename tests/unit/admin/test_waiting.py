"""Ctrl-C while a command waits on long work (admin/waiting.py): the command stops waiting, exits 130 and says in
one line that the server goes on with the work, without a traceback; before the server took the request it only
says it was interrupted. Driven with stand-in boto3 clients whose waiting call is interrupted."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
import tqdm

from dynastore.admin import api_clients, recovery_cli, transfers_cli
from dynastore.admin.waiting import INTERRUPTED, StoppedWaiting, stopped, waiting_on

EXPORT_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/orders/export/01795793016558-a1b2c3d4"
BACKUP_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/orders/backup/01795793016558-a1b2c3d4"


@pytest.fixture(autouse=True)
def no_bar_monitor(monkeypatch: pytest.MonkeyPatch) -> None:
    """tqdm's bars start a monitor thread that outlives the test (other tests count the process's threads)."""
    monkeypatch.setattr(tqdm.tqdm, "monitor_interval", 0)


def interrupted(*_: Any, **__: Any) -> Any:
    raise KeyboardInterrupt


class ExportClient:
    def describe_table(self, TableName: str) -> dict[str, Any]:  # noqa: N803 (boto3's names)
        return {"Table": {"TableArn": f"arn:aws:dynamodb:us-east-1:000000000000:table/{TableName}", "ItemCount": 9}}

    def export_table_to_point_in_time(self, **_: Any) -> dict[str, Any]:
        return {"ExportDescription": {"ExportArn": EXPORT_ARN, "ExportStatus": "IN_PROGRESS"}}

    describe_export = staticmethod(interrupted)


class BackupClient:
    def create_backup(self, **_: Any) -> dict[str, Any]:
        return {"BackupDetails": {"BackupArn": BACKUP_ARN}}

    describe_backup = staticmethod(interrupted)


def client_options() -> dict[str, Any]:
    return {"endpoint": "127.0.0.1:8000", "access_key_id": "", "secret_access_key": "", "session_token": "",
            "region": "", "ca_bundle": "", "no_wait": False, "no_progress": False}  # fmt: skip


def test_waiting_on_turns_ctrl_c_into_stopped_waiting() -> None:
    with pytest.raises(StoppedWaiting) as raised, waiting_on("the backfill of by_status"):
        raise KeyboardInterrupt
    assert raised.value.work == "the backfill of by_status"


def test_ctrl_c_before_the_request_was_taken_says_interrupted(capsys: pytest.CaptureFixture[str]) -> None:
    assert stopped("export", KeyboardInterrupt()) == INTERRUPTED == 130
    assert capsys.readouterr().err == "dynastore export: interrupted\n"


def test_an_export_stops_waiting_on_ctrl_c(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(api_clients, "client", lambda args: ExportClient())
    monkeypatch.setattr(transfers_cli, "POLL_SECONDS", 0)
    args = argparse.Namespace(
        command="export", table="orders", bucket="b", format="DYNAMODB_JSON", prefix=None, client_token=None,
        export_time=None, incremental=None, view=None, **client_options(),
    )  # fmt: skip
    assert transfers_cli.run(args) == 130
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == f"dynastore export: stopped waiting; the export {EXPORT_ARN} goes on in the server"
    assert "Traceback" not in err


def test_a_backup_stops_waiting_on_ctrl_c(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(api_clients, "client", lambda args: BackupClient())
    args = argparse.Namespace(table="orders", name="nightly", **client_options())
    assert recovery_cli.run_backup(args) == 130
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == f"dynastore backup: stopped waiting; the backup {BACKUP_ARN} goes on in the server"
