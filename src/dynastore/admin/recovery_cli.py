"""``dynastore backup TABLE`` and ``dynastore restore BACKUP_ARN TARGET``: clients of a running server's API
(CreateBackup / DescribeBackup, RestoreTableFromBackup / DescribeTable through boto3, signed as every SDK signs),
showing a progress bar with an ETA while the backup or restore runs (from ``GET /dynastore/recovery``), and
exiting non-zero with DynamoDB's error when it fails (docs/backups.md "On-demand backups"). Ctrl-C stops waiting
(exit 130; the work goes on in the server: admin/waiting.py)."""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from dynastore.admin import api_clients
from dynastore.admin.api_clients import add_client_options
from dynastore.admin.partitions_cli import Signer, endpoint_url, signer_from
from dynastore.admin.waiting import StoppedWaiting, stopped, waiting_on

__all__ = ["AdminServer", "ProgressBar", "add_recovery_commands", "run_backup", "run_restore"]

POLL_SECONDS = 0.2
_NO_BOTO3 = "the backup and restore commands talk to the server through boto3: pip install boto3"


class Failed(Exception):
    """The command fails with this text (DynamoDB's error, or why the work ended)."""


def add_recovery_commands(commands: Any, endpoint: str) -> None:
    backup = commands.add_parser(
        "backup", help="back up a table of a running server (CreateBackup), showing its progress"
    )
    backup.add_argument("table", help="the table's name or ARN")
    backup.add_argument("--name", default=None, help="the backup's name (default: the table's, and the time)")
    _client_options(backup, endpoint)
    restore = commands.add_parser(
        "restore", help="restore a backup into a new table of a running server (RestoreTableFromBackup)"
    )
    restore.add_argument("backup_arn", help="the backup's ARN (dynastore backup prints it)")
    restore.add_argument("target", help="the new table's name")
    restore.add_argument("--billing-mode", choices=("PROVISIONED", "PAY_PER_REQUEST"), help="BillingModeOverride")
    restore.add_argument("--read-capacity", type=int, help="ProvisionedThroughputOverride's ReadCapacityUnits")
    restore.add_argument("--write-capacity", type=int, help="ProvisionedThroughputOverride's WriteCapacityUnits")
    restore.add_argument(
        "--without-indexes", action="store_true", help="restore no secondary index (empty index overrides)"
    )
    _client_options(restore, endpoint)


def _client_options(cmd: argparse.ArgumentParser, endpoint: str) -> None:
    add_client_options(cmd, endpoint)
    cmd.add_argument("--no-wait", action="store_true", help="return once the server accepted the request")
    cmd.add_argument("--no-progress", action="store_true", help="no progress bar (a line when done)")


def run_backup(args: argparse.Namespace) -> int:
    return run_waiting("backup", args, _backup)


def run_restore(args: argparse.Namespace) -> int:
    return run_waiting("restore", args, _restore)


def run_waiting(
    command: str,
    args: argparse.Namespace,
    work: Callable[[Any, AdminServer, argparse.Namespace], str],
    no_boto3: str = _NO_BOTO3,
) -> int:
    """Run a command that asks a server for long work and waits on it (``work`` returns its last line): the exit
    status, each failure in one line, Ctrl-C as admin/waiting.py says."""
    try:
        import boto3  # noqa: F401  (boto3 is an optional dependency: only these commands need it)
    except ImportError:
        print(f"dynastore {command}: error: {no_boto3}", file=sys.stderr)
        return 2
    from botocore.exceptions import BotoCoreError, ClientError

    server = AdminServer(args)
    try:
        print(work(server.client(), server, args))
    except (StoppedWaiting, KeyboardInterrupt) as e:
        return stopped(command, e)
    except ClientError as e:
        error = e.response.get("Error", {})
        return _fail(command, f"{error.get('Code', 'Error')}: {error.get('Message', '')}")
    except (Failed, BotoCoreError) as e:
        return _fail(command, str(e))
    return 0


def _fail(command: str, text: str) -> int:
    print(f"dynastore {command}: error: {text}", file=sys.stderr)
    return 1


def _backup(client: Any, server: AdminServer, args: argparse.Namespace) -> str:
    name = args.name or f"{args.table.rsplit('/', 1)[-1]}-{time.strftime('%Y%m%d-%H%M%S')}"
    details = client.create_backup(TableName=args.table, BackupName=name)["BackupDetails"]
    arn: str = details["BackupArn"]
    if args.no_wait:
        return arn
    with waiting_on(f"the backup {arn}"), ProgressBar(f"backup {name}", not args.no_progress) as bar:
        while True:
            described = client.describe_backup(BackupArn=arn)["BackupDescription"]
            status = described["BackupDetails"]["BackupStatus"]
            running = _find(server.recovery().get("backups", []), lambda b: b.get("arn") == arn)
            if status == "AVAILABLE":
                bar.finish(described["SourceTableDetails"].get("ItemCount", 0))
                return arn
            if status == "DELETED":
                reason = (running or {}).get("failure", "the backup ended DELETED (see the server's log)")
                raise Failed(f"the backup {arn} failed: {reason}")
            if running is not None:
                bar.show(running.get("done", 0), running.get("total"))
            time.sleep(POLL_SECONDS)


def _restore(client: Any, server: AdminServer, args: argparse.Namespace) -> str:
    request: dict[str, Any] = {"TargetTableName": args.target, "BackupArn": args.backup_arn}
    if args.billing_mode:
        request["BillingModeOverride"] = args.billing_mode
    if args.read_capacity is not None or args.write_capacity is not None:
        request["ProvisionedThroughputOverride"] = {
            "ReadCapacityUnits": args.read_capacity,
            "WriteCapacityUnits": args.write_capacity,
        }
    if args.without_indexes:
        request["GlobalSecondaryIndexOverride"] = []
        request["LocalSecondaryIndexOverride"] = []
    table = client.restore_table_from_backup(**request)["TableDescription"]
    arn: str = table["TableArn"]
    if args.no_wait:
        return arn
    from botocore.exceptions import ClientError

    with (
        waiting_on(f"the restore of {args.target}"),
        ProgressBar(f"restore {args.target}", not args.no_progress) as bar,
    ):
        while True:
            try:
                described = client.describe_table(TableName=args.target)["Table"]
            except ClientError as e:
                if e.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                    raise Failed(
                        f"the restore of {args.target} failed: the table was dropped (see the server's log)"
                    ) from None
                raise
            if described["TableStatus"] == "ACTIVE":
                bar.finish(described.get("ItemCount", 0))
                return arn
            loading = _find(server.recovery().get("restores", []), lambda r: r.get("table") == args.target)
            if loading is not None:
                bar.show(loading.get("done", 0), loading.get("total"))
            time.sleep(POLL_SECONDS)


def _find(entries: list[dict[str, Any]], wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    return next((e for e in entries if wanted(e)), None)


# ---- the server --------------------------------------------------------------------------------------------------
class AdminServer:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.base = endpoint_url(args.endpoint)
        self.signer: Signer = signer_from(args)
        self.ca_bundle = args.ca_bundle or os.environ.get("AWS_CA_BUNDLE") or None

    def client(self) -> Any:
        return api_clients.client(self.args)

    def recovery(self) -> dict[str, Any]:
        """The server's ``GET /dynastore/recovery``."""
        return self.view("recovery")

    def view(self, endpoint: str) -> dict[str, Any]:
        """The server's ``GET /dynastore/<endpoint>`` (signed like the API's requests; an empty view when it
        cannot be read: it only feeds a progress bar)."""
        url = f"{self.base}/dynastore/{endpoint}"
        headers = self.signer.headers("GET", url, {"Content-Type": "application/json"}, b"")
        context = ssl.create_default_context(cafile=self.ca_bundle) if self.ca_bundle else None
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30, context=context) as r:
                view: dict[str, Any] = json.loads(r.read())
        except (OSError, ValueError):
            return {}
        return view


class ProgressBar:
    """A tqdm progress bar with an ETA (items done of total), or nothing when progress is off."""

    def __init__(self, title: str, shown: bool) -> None:
        self._title = title
        self._shown = shown
        self._bar: Any = None

    def __enter__(self) -> ProgressBar:
        if self._shown:
            from tqdm import tqdm

            self._bar = tqdm(desc=self._title, unit=" items", file=sys.stderr, dynamic_ncols=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    def show(self, done: int, total: int | None, seconds_left: float | None = None) -> None:
        """``done`` of ``total`` items; ``seconds_left``: the server's estimate (by its clock), shown beside
        tqdm's own."""
        bar = self._bar
        if bar is None:
            return
        if seconds_left is not None:
            bar.set_postfix_str(f"server estimate ~{seconds_left:.0f} s", refresh=False)
        if total is not None and bar.total != max(total, done):
            bar.total = max(total, done)
            bar.refresh()
        if done != bar.n:
            bar.update(done - bar.n)
            bar.refresh()  # each change shown, however soon after the last (tqdm skips updates within 0.1 s)

    @property
    def done(self) -> int:
        """The items shown done so far."""
        return 0 if self._bar is None else int(self._bar.n)

    def finish(self, total: int) -> None:
        """The work is over: ``total`` items done."""
        self.show(total, total)
