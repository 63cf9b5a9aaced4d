"""The `dynastore` command: argparse to Config to serve(); no logic of its own."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from dynastore.config import Config


def _parser(defaults: Config) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynastore", description="A DynamoDB-compatible database server.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the server (flags override DYNASTORE_* environment variables)")
    serve.add_argument("--host", default=defaults.host, help=f"address to bind (default {defaults.host})")
    serve.add_argument("--port", type=int, default=defaults.port, help="port to bind; 0 picks a free one and prints it")
    serve.add_argument("--data-dir", type=Path, default=defaults.data_dir, help="where data is kept")
    serve.add_argument("--in-memory", action="store_true", default=defaults.in_memory, help="keep nothing on disk")
    serve.add_argument("--region", default=defaults.region, help="region reported in ARNs and endpoints")
    serve.add_argument(
        "--create-table-delay",
        type=float,
        default=defaults.create_table_delay,
        help="seconds a new table stays CREATING",
    )
    serve.add_argument(
        "--update-table-delay",
        type=float,
        default=defaults.update_table_delay,
        help="seconds an updated table stays UPDATING",
    )
    serve.add_argument(
        "--delete-table-delay",
        type=float,
        default=defaults.delete_table_delay,
        help="seconds a deleted table stays DELETING",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    defaults = Config.from_env()
    args = _parser(defaults).parse_args(argv)
    if args.command == "serve":
        from dynastore.server import serve

        config = dataclasses.replace(
            defaults,
            host=args.host,
            port=args.port,
            data_dir=args.data_dir,
            in_memory=args.in_memory,
            region=args.region,
            create_table_delay=args.create_table_delay,
            update_table_delay=args.update_table_delay,
            delete_table_delay=args.delete_table_delay,
        )
        serve(config)
