"""The `dynastore` command: argparse to Config to serve(); no logic of its own."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dynastore import __version__
from dynastore.build_kind import build_kind
from dynastore.config import NETWORK_LIMITS, Config, host_list, peer_map
from dynastore.util.clock import ManualClock


class _ServeHelp(argparse.HelpFormatter):
    """Each option's help ends with its default (what this run would use: the DYNASTORE_* environment variables
    included) and the environment variable that sets it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if not action.option_strings or action.default is argparse.SUPPRESS:
            return text
        env = "DYNASTORE_" + action.dest.upper()
        if isinstance(action, argparse._StoreTrueAction):
            return f"{text} (default: {'on' if action.default else 'off'}; {env}=1)"
        if isinstance(action, argparse._StoreFalseAction):  # --no-X: the switch is off while X is on
            return f"{text} (default: {'off' if action.default else 'on'}; DYNASTORE_NO_{action.dest.upper()}=1)"
        default = action.default
        shown = f"{default:g}" if isinstance(default, float) else "none" if default is None else str(default)
        return f"{text} (default: {shown.replace('%', '%%')}; {env})"


def _parser(defaults: Config) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynastore", description="A DynamoDB-compatible database server.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__} ({build_kind()})")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="run the server (flags override DYNASTORE_* environment variables)",
        description="Run the server. Every option can also come from its DYNASTORE_* environment variable; "
        "a flag given on the command line wins.",
        formatter_class=_ServeHelp,
    )
    serve.add_argument("--host", default=defaults.host, help="address to bind")
    serve.add_argument("--port", type=int, default=defaults.port, help="port to bind; 0 picks a free one and prints it")
    serve.add_argument("--data-dir", type=Path, default=defaults.data_dir, help="where data is kept")
    serve.add_argument("--in-memory", action="store_true", default=defaults.in_memory, help="keep nothing on disk")
    serve.add_argument(
        "--crash-safe",
        action="store_true",
        default=defaults.crash_safe,
        help="sync each commit's pages before its meta page: an OS crash or power loss cannot corrupt the store",
    )
    serve.add_argument(
        "--disk-reserve",
        type=int,
        default=defaults.disk_reserve,
        metavar="BYTES",
        help="size of the reserve file freed when the disk fills, so deletes still work (0: none)",
    )
    serve.add_argument("--region", default=defaults.region, help="region reported in ARNs and endpoints")
    serve.add_argument(
        "--shared-namespace",
        action="store_true",
        default=defaults.shared_namespace,
        help="every caller sees the tables of the configured account and region, whatever its credentials",
    )
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
    serve.add_argument(
        "--transaction-lock-hold",
        type=float,
        default=defaults.transaction_lock_hold,
        help="test aid: seconds a transaction's items stay locked after its commit (inf: forever)",
    )
    _add_capacity_flags(serve, defaults)
    _add_index_flags(serve, defaults)
    _add_network_flags(serve, defaults)
    _add_global_table_flags(serve, defaults)
    serve.add_argument(
        "--log-requests",
        action="store_true",
        default=defaults.log_requests,
        help="write one line per request to stderr: time, request id, operation, table, status, error, latency, "
        "consumed capacity",
    )
    serve.add_argument(
        "--log-format", choices=("text", "json"), default=defaults.log_format, help="the request log's lines"
    )
    _add_trigger_flags(serve, defaults)
    serve.add_argument(
        "--no-metrics",
        dest="metrics",
        action="store_false",
        default=defaults.metrics,
        help="serve no GET /metrics and count nothing for it",
    )
    serve.add_argument(
        "--metrics-port",
        type=int,
        default=defaults.metrics_port,
        metavar="PORT",
        help="also serve GET /metrics on this port (on the same host)",
    )
    serve.add_argument(
        "--policies-file",
        type=Path,
        default=defaults.policies_file,
        metavar="PATH",
        help="the identity policies of users and groups (default: policies.json in the data directory; none for "
        "--in-memory)",
    )
    _add_security_flags(serve, defaults)
    _add_s3_flags(serve, defaults)
    _add_cluster_flags(serve, defaults)
    _add_peer_flags(serve)
    _add_partitions_command(commands, defaults)
    from dynastore.admin.policies_cli import add_policies_command
    from dynastore.security.users_cli import add_users_command

    add_users_command(commands, defaults)
    add_policies_command(commands, defaults)
    from dynastore.security.roles_cli import add_roles_commands

    add_roles_commands(commands, defaults)
    # on-demand backups (docs/backups.md "On-demand backups")
    from dynastore.admin.partitions_cli import default_endpoint
    from dynastore.admin.recovery_cli import add_recovery_commands

    add_recovery_commands(commands, default_endpoint(defaults.host, defaults.port))
    from dynastore.admin.tables_cli import add_tables_command

    add_tables_command(commands, default_endpoint(defaults.host, defaults.port))

    from dynastore.admin.transfers_cli import add_transfer_commands

    add_transfer_commands(commands, defaults)
    _add_streams_command(commands, defaults)
    from dynastore.replication.cluster_cli import add_cluster_command

    add_cluster_command(commands, default_endpoint(defaults.host, defaults.port))
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    try:
        defaults = Config.from_env()
    except ValueError as e:  # a DYNASTORE_* number that is none: one line naming it, as every start failure
        print(f"dynastore: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    parser = _parser(defaults)
    args = parser.parse_args(argv)
    if args.command == "serve":
        _check_choices(parser, args)
        from dynastore.server import serve

        config = _serve_config(defaults, args)
        _check_triggers(serve_parser(parser), config)
        _check_security(serve_parser(parser), config)
        serve(config)
    elif args.command == "users":
        from dynastore.security.users_cli import run as run_users

        raise SystemExit(run_users(args))
    elif args.command in ("roles", "oidc"):
        from dynastore.security import roles_cli

        raise SystemExit(roles_cli.run(args))
    elif args.command == "partitions":
        from dynastore.admin.partitions_cli import run

        raise SystemExit(run(args))
    elif args.command == "policies":
        from dynastore.admin import policies_cli

        raise SystemExit(policies_cli.run(args))
    elif args.command in ("backup", "restore"):
        from dynastore.admin import recovery_cli

        raise SystemExit(recovery_cli.run_backup(args) if args.command == "backup" else recovery_cli.run_restore(args))
    elif args.command in ("export", "import"):
        from dynastore.admin import transfers_cli

        raise SystemExit(transfers_cli.run(args))
    elif args.command == "tables":
        from dynastore.admin import tables_cli

        raise SystemExit(tables_cli.run(args))
    elif args.command == "streams":
        from dynastore.admin import streams_cli

        raise SystemExit(streams_cli.run(args))
    elif args.command == "cluster":
        from dynastore.replication import cluster_cli

        raise SystemExit(cluster_cli.run(args))


def serve_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    serve: argparse.ArgumentParser = next(
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
    ).choices["serve"]
    return serve


def serve_config(flags: Sequence[str]) -> Config:
    """The Config ``dynastore serve FLAGS`` runs with (defaults from DYNASTORE_* variables, as for the command):
    in-process hosts take the same flags as the server. A bad flag raises SystemExit with argparse's message."""
    defaults = Config.from_env()
    parser = _parser(defaults)
    args = parser.parse_args(["serve", *flags])
    _check_choices(parser, args)
    config = _serve_config(defaults, args)
    _check_triggers(serve_parser(parser), config)
    _check_security(serve_parser(parser), config)
    return config


def _serve_config(defaults: Config, args: argparse.Namespace) -> Config:
    config = dataclasses.replace(
        defaults,
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
        in_memory=args.in_memory,
        crash_safe=args.crash_safe,
        disk_reserve=args.disk_reserve,
        region=args.region,
        shared_namespace=args.shared_namespace,
        create_table_delay=args.create_table_delay,
        update_table_delay=args.update_table_delay,
        delete_table_delay=args.delete_table_delay,
        transaction_lock_hold=args.transaction_lock_hold,
        log_requests=args.log_requests,
        log_format=args.log_format,
        metrics=args.metrics,
        metrics_port=args.metrics_port,
        policies_file=args.policies_file,
    )
    config = _with_s3(_with_security(_with_triggers(config, args), args), args)
    config = dataclasses.replace(
        config, cluster=args.cluster, node_name=args.node_name, advertise_url=args.advertise_url
    )
    return _with_global_tables(_with_network(_with_indexes(_with_capacity(config, args), args), args), args)


def _check_choices(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """argparse checks the choices of a flag given, not of a default: one from the environment is checked here."""
    serve = serve_parser(parser)
    for action in serve._actions:
        value = getattr(args, action.dest, None)
        if action.choices is not None and value not in action.choices:
            env = "DYNASTORE_" + action.dest.upper()
            serve.error(f"{env}: invalid choice: {value!r} (choose from {', '.join(map(str, action.choices))})")


# ---- a replicated node (docs/cluster.md) ----------------------------------------------------------------------
def _add_cluster_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    serve.add_argument(
        "--cluster",
        default=defaults.cluster,
        metavar="etcd://HOST:PORT[,HOST:PORT...]",
        help="run as a node of a replicated cluster whose log is kept by these etcd members (docs/cluster.md)",
    )
    serve.add_argument(
        "--node-name",
        default=defaults.node_name,
        metavar="NAME",
        help="this node's name in the cluster (none: the machine's host name)",
    )
    serve.add_argument(
        "--advertise-url",
        default=defaults.advertise_url,
        metavar="URL",
        help="where the other nodes reach this one (none: http://HOST:PORT of its listener)",
    )


# ---- capacity model (docs/capacity.md) ------------------------------------------------------------------------
def _add_capacity_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    serve.add_argument(
        "--capacity",
        choices=("enforce", "report"),
        default=defaults.capacity,
        help="enforce: throttle as DynamoDB does; report: compute and show everything, throttle nothing",
    )
    serve.add_argument(
        "--partition-size-limit",
        type=int,
        default=defaults.partition_size_limit,
        help="test/what-if aid: bytes a partition holds before it splits (DynamoDB: 10 GB)",
    )
    serve.add_argument(
        "--partition-max-rcu",
        type=int,
        default=defaults.partition_max_rcu,
        help="test/what-if aid: read units a second one partition can serve (DynamoDB: 3000)",
    )
    serve.add_argument(
        "--partition-max-wcu",
        type=int,
        default=defaults.partition_max_wcu,
        help="test/what-if aid: write units a second one partition can serve (DynamoDB: 1000)",
    )
    serve.add_argument(
        "--adaptive-delay",
        type=float,
        default=defaults.adaptive_delay,
        help="seconds a partition throttles before adaptive capacity lifts it",
    )
    serve.add_argument(
        "--manual-clock",
        action="store_true",
        default=defaults.manual_clock,
        help="test aid: the server's clock stands still and moves only through POST /dynastore/clock",
    )


def _with_capacity(config: Config, args: argparse.Namespace) -> Config:
    clock = config.clock
    if args.manual_clock and not isinstance(clock, ManualClock):
        clock = ManualClock(time.time())
    return dataclasses.replace(
        config,
        capacity=args.capacity,
        partition_size_limit=args.partition_size_limit,
        partition_max_rcu=args.partition_max_rcu,
        partition_max_wcu=args.partition_max_wcu,
        adaptive_delay=args.adaptive_delay,
        manual_clock=args.manual_clock,
        clock=clock,
    )


# ---- secondary indexes (docs/indexes.md) ----------------------------------------------------------------------
def _add_index_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    serve.add_argument(
        "--item-collection-size-limit",
        type=int,
        default=defaults.item_collection_size_limit,
        help="test aid: bytes one item collection of a table with LSIs may hold (DynamoDB: 10 GB)",
    )
    serve.add_argument(
        "--gsi-propagation-delay",
        type=float,
        default=defaults.gsi_propagation_delay,
        help="test aid: seconds a GSI update waits in its durable backlog before it is applied; GSI reads then "
        "see the lag instead of applying pending updates first (default 0)",
    )
    serve.add_argument(
        "--gsi-backfill-interval",
        type=float,
        default=defaults.gsi_backfill_interval,
        help="test aid: seconds between two backfill chunks of a new GSI",
    )
    serve.add_argument(
        "--gsi-backfill-chunk",
        type=int,
        default=defaults.gsi_backfill_chunk,
        help="items a GSI backfill copies per storage transaction",
    )


def _with_indexes(config: Config, args: argparse.Namespace) -> Config:
    return dataclasses.replace(
        config,
        item_collection_size_limit=args.item_collection_size_limit,
        gsi_propagation_delay=args.gsi_propagation_delay,
        gsi_backfill_interval=args.gsi_backfill_interval,
        gsi_backfill_chunk=args.gsi_backfill_chunk,
    )


# ---- global tables (docs/global-tables.md) ----------------------------------------------------------------------
def _add_global_table_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    serve.add_argument(
        "--tombstone-retention-seconds",
        type=float,
        default=defaults.tombstone_retention_seconds,
        help="seconds a deleted item of a global table keeps its tombstone",
    )
    serve.add_argument(
        "--strong-etcd",
        default=defaults.strong_etcd,
        type=_etcd_members,
        metavar="etcd://HOST:PORT[,HOST:PORT...]",
        help="the etcd members (spanning the regions) that global tables with multi-region strong consistency "
        "commit their writes to (docs/global-tables.md); without it, all their regions must be this server's",
    )


def _etcd_members(text: str) -> str:
    """``--strong-etcd``: checked here, so that argparse names the flag in its error."""
    from dynastore.replication.etcd_config import parse_endpoints

    try:
        parse_endpoints(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _with_global_tables(config: Config, args: argparse.Namespace) -> Config:
    config = dataclasses.replace(
        config, tombstone_retention_seconds=args.tombstone_retention_seconds, strong_etcd=args.strong_etcd or None
    )
    if args.peers is not None:  # the flags replace DYNASTORE_PEERS; a region given twice: the last one
        config = dataclasses.replace(config, peers=dict(args.peers))
    return config


# ---- connection limits (docs/design.md "Limits and abuse") -----------------------------------------------------
_NETWORK_HELP = {
    "max_header_bytes": "bytes of request line and headers a request may have (400 past it)",
    "max_url_bytes": "bytes of URL a request may have (400 past it)",
    "idle_timeout": "seconds an idle connection (or one whose client reads nothing) stays open",
    "header_timeout": "seconds from a request's first byte to the end of its headers (408 past it)",
    "body_timeout": "seconds from the end of a request's headers to the end of its body (408 past it)",
    "max_connections": "open connections at most (also kept below the descriptor limit)",
    "reserved_descriptors": "descriptors kept for storage out of the descriptor limit",
    "max_buffered_request_bytes": "request bytes all connections together may hold (503 past it)",
    "write_buffer_bytes": "unsent output past which a connection's further requests wait",
    "shutdown_grace": "seconds a stop (SIGTERM) waits for the requests under way to be answered",
}


def _add_network_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    for name, kind in NETWORK_LIMITS.items():
        default = getattr(defaults, name)
        flag = "--" + name.replace("_", "-")
        serve.add_argument(flag, type=kind, default=default, help=_NETWORK_HELP[name])


def _with_network(config: Config, args: argparse.Namespace) -> Config:
    return dataclasses.replace(config, **{name: getattr(args, name) for name in NETWORK_LIMITS})


def _add_partitions_command(commands: Any, defaults: Config) -> None:
    from dynastore.admin.partitions_cli import default_endpoint

    cmd = commands.add_parser(
        "partitions",
        help="show the partitions of a table and its indexes on a running server (dynastore extension)",
        description="Show the partitions of a table and its indexes on a running server. Without --set-as-if, "
        "--rebuild or --spend-burst it only reads.",
    )
    cmd.add_argument("table", help="table name")
    endpoint = default_endpoint(defaults.host, defaults.port)
    cmd.add_argument(
        "--endpoint",
        default=endpoint,
        help=f"the server, as URL or host:port (default: {endpoint}, where `dynastore serve` listens with the same "
        "DYNASTORE_HOST and DYNASTORE_PORT)",
    )
    changes = cmd.add_argument_group(
        "changes to the server's state (seen by every client until changed back; the output says what changed)"
    )
    changes.add_argument(
        "--set-as-if",
        dest="as_if",
        type=int,
        default=None,
        metavar="N",
        help="make the table behave as if it held N partitions (0: its real partitions again)",
    )
    changes.add_argument("--rebuild", action="store_true", help="re-partition from throughput and size (as a restore)")
    changes.add_argument(
        "--spend-burst", action="store_true", help="spend every partition's burst credit (as after a busy spell)"
    )
    cmd.add_argument("--contributors", action="store_true", help="also show Contributor Insights' top keys")
    cmd.add_argument(
        "--window",
        metavar="DURATION",
        help="also show each partition's use and throttles over the last DURATION (300, 90s, 15m, 1h; the server "
        "keeps one hour), and take --contributors' top keys over the same window",
    )
    cmd.add_argument("--json", action="store_true", help="print the raw JSON")
    cmd.add_argument(
        "--access-key-id",
        default="",
        help="sign requests (a server with --auth sigv4 needs an admin user's key; default: AWS_ACCESS_KEY_ID)",
    )
    cmd.add_argument("--secret-access-key", default="", help="its secret (default: AWS_SECRET_ACCESS_KEY)")
    cmd.add_argument("--session-token", default="", help="temporary credentials' token (default: AWS_SESSION_TOKEN)")
    cmd.add_argument("--region", default="", help="the server's region (default: AWS_REGION, DYNASTORE_REGION)")
    cmd.add_argument("--ca-bundle", default="", help="certificates to trust for https (default: AWS_CA_BUNDLE)")


def _add_streams_command(commands: Any, defaults: Config) -> None:
    from dynastore.admin.partitions_cli import default_endpoint
    from dynastore.admin.streams_cli import add_streams_command

    add_streams_command(commands, default_endpoint(defaults.host, defaults.port))


# ---- global tables' peers (docs/global-tables.md "Peers") ---------------------------------------------------------
def _add_peer_flags(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--peer",
        dest="peers",
        action="append",
        type=_peer_entry,
        default=None,
        metavar="REGION=URL",
        help="the dynastore server that serves REGION, for global tables' replicas there (repeatable; flags replace "
        "DYNASTORE_PEERS, REGION=URL pairs separated by commas); it signs with DYNASTORE_PEER_ACCESS_KEY_ID / "
        "DYNASTORE_PEER_SECRET_ACCESS_KEY",
    )


def _peer_entry(text: str) -> tuple[str, str]:
    """One ``--peer REGION=URL``: checked here, so that argparse names the flag in its error."""
    try:
        peers = peer_map([text])
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if len(peers) != 1:
        raise argparse.ArgumentTypeError(f"one REGION=URL per --peer, not {text!r}")
    return next(iter(peers.items()))


def _check_peers(serve: argparse.ArgumentParser, config: Config) -> None:
    """A server does not replicate to itself, and signs its requests to peers with a whole key."""
    from dynastore import messages

    if config.region in config.peers:
        serve.error(messages.CLI_PEER_OWN_REGION.format(region=config.region))
    if config.peer_access_key_id and not config.peer_secret_access_key:
        serve.error(messages.CLI_PEER_KEY_WITHOUT_SECRET)


# ---- authentication and TLS (docs/security.md) ------------------------------------------------------------------
def _add_security_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    serve.add_argument(
        "--auth",
        choices=("none", "sigv4"),
        default=defaults.auth,
        help="none: any access key and signature are taken; sigv4: every request must be signed with the key "
        "of a user of the credentials store (dynastore users)",
    )
    serve.add_argument(
        "--users-file",
        type=Path,
        default=defaults.users_file,
        metavar="PATH",
        help="the credentials store to read instead of <data dir>/security/credentials.json (e.g. for --in-memory)",
    )
    serve.add_argument(
        "--tls-cert", type=Path, default=defaults.tls_cert, metavar="PEM", help="serve HTTPS with this certificate"
    )
    serve.add_argument(
        "--tls-key", type=Path, default=defaults.tls_key, metavar="PEM", help="the private key of --tls-cert"
    )
    serve.add_argument(
        "--allowed-hosts",
        default=",".join(defaults.allowed_hosts) or None,
        metavar="NAMES",
        help="host names (comma-separated) a request's Host may give besides localhost, IP addresses and --host; "
        "* accepts any (against DNS rebinding: docs/security.md)",
    )


def _with_security(config: Config, args: argparse.Namespace) -> Config:
    return dataclasses.replace(
        config,
        auth=args.auth,
        users_file=args.users_file,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        allowed_hosts=host_list(args.allowed_hosts or ""),
    )


# A host name (letters, digits, dots, hyphens, underscores) or "*": no scheme, port or path.
_ALLOWED_HOST = re.compile(r"\*|[A-Za-z0-9_.-]+")


def _check_security(serve: argparse.ArgumentParser, config: Config) -> None:
    """A start that could not serve anyone, or half a TLS setup, stops with one line before the store is opened."""
    from dynastore import messages

    if (config.tls_cert is None) != (config.tls_key is None):
        serve.error("--tls-cert and --tls-key go together")
    seeded = bool(config.admin_access_key_id) and bool(config.admin_secret_access_key)
    if config.admin_access_key_id and not config.admin_secret_access_key:
        serve.error("DYNASTORE_ADMIN_ACCESS_KEY_ID needs DYNASTORE_ADMIN_SECRET_ACCESS_KEY")
    if config.auth == "sigv4" and config.in_memory and config.users_file is None and not seeded:
        serve.error(messages.CLI_AUTH_NO_USERS)
    for name in config.allowed_hosts:
        if not _ALLOWED_HOST.fullmatch(name):
            serve.error(messages.CLI_BAD_ALLOWED_HOST.format(name=name))
    _check_cluster(serve, config)
    _check_peers(serve, config)


def _check_cluster(serve: argparse.ArgumentParser, config: Config) -> None:
    """A cluster node names its etcd members well and keeps its replica on disk."""
    from dynastore import messages
    from dynastore.replication.etcd_config import parse_endpoints

    if config.cluster is None:
        return
    try:
        parse_endpoints(config.cluster)
    except ValueError as e:
        serve.error(f"--cluster: {e}")
    if config.in_memory:
        serve.error(messages.CLI_CLUSTER_IN_MEMORY)


# ---- triggers (docs/triggers.md) --------------------------------------------------------------------------------
def _add_trigger_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    serve.add_argument(
        "--trigger",
        dest="triggers",
        action="append",
        default=None,
        metavar="JSON",
        help="a trigger: a JSON object with Lambda's event source mapping parameters and a Command or Url "
        "(repeatable; flags replace DYNASTORE_TRIGGERS, a JSON array)",
    )
    serve.add_argument(
        "--triggers-file",
        type=Path,
        default=defaults.triggers_file,
        metavar="PATH",
        help="a JSON or TOML file of more triggers",
    )


def _with_triggers(config: Config, args: argparse.Namespace) -> Config:
    triggers = config.triggers if args.triggers is None else tuple(args.triggers)
    return dataclasses.replace(config, triggers=triggers, triggers_file=args.triggers_file)


def _check_triggers(serve: argparse.ArgumentParser, config: Config) -> None:
    """A wrong trigger stops the start with one line, before the store is opened."""
    from dynastore.triggers.spec import TriggerConfigError, parse_triggers

    try:
        parse_triggers(config.triggers, file=config.triggers_file)
    except TriggerConfigError as e:
        serve.error(str(e))


# ---- export and import destinations (docs/backups.md "Export and import") ---------------------------------------
def _add_s3_flags(serve: argparse.ArgumentParser, defaults: Config) -> None:
    serve.add_argument(
        "--s3-endpoint-url",
        default=defaults.s3_endpoint_url,
        metavar="URL",
        help="exports and imports use the buckets of this S3-compatible server (aws: Amazon S3 itself); without "
        "it a directory stands in for the buckets",
    )
    serve.add_argument(
        "--s3-root",
        type=Path,
        default=defaults.s3_root,
        metavar="DIR",
        help="the directory standing in for S3 without --s3-endpoint-url: each bucket a subdirectory (default: "
        "<data dir>/s3; for --in-memory, dynastore-s3 in the system's temporary directory)",
    )
    serve.add_argument(
        "--s3-region", default=defaults.s3_region, help="the S3 server's region (default: the server's --region)"
    )
    serve.add_argument(
        "--s3-access-key-id",
        default=defaults.s3_access_key_id or None,
        metavar="KEY",
        help="the S3 server's access key (its secret only from DYNASTORE_S3_SECRET_ACCESS_KEY; default: boto3's "
        "credential chain, AWS_ACCESS_KEY_ID and the rest)",
    )


def _with_s3(config: Config, args: argparse.Namespace) -> Config:
    return dataclasses.replace(
        config,
        s3_endpoint_url=args.s3_endpoint_url or None,
        s3_root=args.s3_root,
        s3_region=args.s3_region or None,
        s3_access_key_id=args.s3_access_key_id or "",
    )
