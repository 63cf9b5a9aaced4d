"""``dynastore tables wait-index TABLE INDEX``: wait until a global secondary index of a running server is ACTIVE
(DescribeTable through boto3, signed as every SDK signs), with a progress bar and an estimate of its backfill
from ``GET /dynastore/progress`` (engine/progress.py). It exits 0 once the index is ACTIVE, 1 if the table or the
index does not exist or the index is deleted meanwhile, 130 on Ctrl-C (the backfill goes on in the server)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from dynastore.admin.api_clients import add_client_options
from dynastore.admin.recovery_cli import AdminServer, Failed, ProgressBar, run_waiting
from dynastore.admin.waiting import waiting_on

__all__ = ["add_tables_command", "run"]

POLL_SECONDS = 0.2


def add_tables_command(commands: Any, endpoint: str) -> None:
    tables = commands.add_parser("tables", help="follow work on the tables of a running server")
    actions = tables.add_subparsers(dest="tables_command", required=True)
    wait = actions.add_parser(
        "wait-index",
        help="wait until a global secondary index is ACTIVE, showing its backfill's progress",
        description="Wait until a global secondary index (one UpdateTable or CreateTable added) is ACTIVE, with "
        "a progress bar of its backfill and an estimate of the time left. Ctrl-C stops waiting; the backfill "
        "goes on in the server.",
    )
    wait.add_argument("table", help="the table's name or ARN")
    wait.add_argument("index", help="the global secondary index's name")
    add_client_options(wait, endpoint)
    wait.add_argument("--no-progress", action="store_true", help="no progress bar (a line when done)")


def run(args: argparse.Namespace) -> int:
    return run_waiting(
        f"tables {args.tables_command}",
        args,
        _wait_index,
        no_boto3="this command talks to the server through boto3: pip install boto3",
    )


def _wait_index(client: Any, server: AdminServer, args: argparse.Namespace) -> str:
    table_name = args.table.rsplit("/", 1)[-1] if args.table.startswith("arn:") else args.table
    index = _index(client, args)
    title = f"backfill {table_name}/{args.index}"
    with waiting_on(f"the backfill of {args.index}"), ProgressBar(title, not args.no_progress) as bar:
        while index["IndexStatus"] != "ACTIVE":
            if index["IndexStatus"] == "DELETING":
                raise Failed(f"the index {args.index} of table {table_name} is being deleted")
            job = _backfill_job(server, table_name, args.index)
            if job is not None:
                bar.show(job.get("done", 0), job.get("total"), job.get("seconds_left"))
            time.sleep(POLL_SECONDS)
            index = _index(client, args)
        count = index.get("ItemCount", 0)
        bar.finish(max(count, bar.done))
    return f"{args.index} of {table_name} is ACTIVE ({index.get('ItemCount', 0)} items)"


def _index(client: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The index as DescribeTable shows it; Failed if the table has no such global secondary index."""
    table = client.describe_table(TableName=args.table)["Table"]
    for index in table.get("GlobalSecondaryIndexes", []):
        if index["IndexName"] == args.index:
            found: dict[str, Any] = index
            return found
    raise Failed(f"table {table['TableName']} has no global secondary index {args.index}")


def _backfill_job(server: AdminServer, table: str, index: str) -> dict[str, Any] | None:
    for job in server.view("progress").get("jobs", []):
        if job.get("kind") == "gsi_backfill" and job.get("table") == table and job.get("index") == index:
            found: dict[str, Any] = job
            return found
    return None
