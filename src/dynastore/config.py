"""Server configuration: one frozen value built by the CLI (or by tests) and passed down."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dynastore import messages
from dynastore.limits import (
    ADAPTIVE_CAPACITY_DELAY,
    BODY_TIMEOUT_SECONDS,
    DISK_RESERVE_BYTES,
    GSI_BACKFILL_ITEMS_PER_TXN,
    HEADER_TIMEOUT_SECONDS,
    IDLE_TIMEOUT_SECONDS,
    ITEM_COLLECTION_MAX_BYTES,
    MAX_BUFFERED_REQUEST_BYTES,
    MAX_CONNECTIONS,
    MAX_HEADER_BYTES,
    MAX_URL_BYTES,
    PARTITION_MAX_BYTES,
    PARTITION_MAX_RCU,
    PARTITION_MAX_WCU,
    RESERVED_DESCRIPTORS,
    SHUTDOWN_GRACE_SECONDS,
    WRITE_BUFFER_BYTES,
)
from dynastore.util.clock import Clock, ManualClock, SystemClock


@dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path("dynastore-data")
    in_memory: bool = False
    # Each batch commit (about once a second) syncs the write-ahead log and then LMDB's pages before its meta page,
    # so that an operating-system crash or power loss cannot leave the store corrupt; the loop waits for that sync.
    crash_safe: bool = False
    # Bytes of the reserve file kept in the data directory (storage/disk_space.py): on a full disk it is freed so
    # that deletes can still be logged and committed; writes resume once it can be made again. 0: no reserve.
    disk_reserve: int = DISK_RESERVE_BYTES
    region: str = "us-east-1"
    account_id: str = "000000000000"
    # Every caller uses the namespace of ``account_id`` and ``region`` (DynamoDB Local's -sharedDb); otherwise a
    # caller's tables are those of its account (``account_id`` without authentication) and of the region of its
    # request's credential scope.
    shared_namespace: bool = False
    # Simulated control-plane delays, in seconds: how long a table stays CREATING / UPDATING / DELETING.
    create_table_delay: float = 0.0
    update_table_delay: float = 0.0
    delete_table_delay: float = 0.0
    # Test aid: seconds a TransactWriteItems keeps its items locked after its commit became durable, so tests
    # can meet TransactionConflict deterministically (inf: until the server stops). Keep 0 in production.
    transaction_lock_hold: float = 0.0
    # Capacity model (docs/capacity.md): "enforce" throttles as DynamoDB does, "report" only counts. The partition
    # constants and the adaptive-capacity delay are DynamoDB's by default; smaller values are test/what-if aids.
    capacity: str = "enforce"
    partition_size_limit: int = PARTITION_MAX_BYTES
    partition_max_rcu: int = PARTITION_MAX_RCU
    partition_max_wcu: int = PARTITION_MAX_WCU
    adaptive_delay: float = ADAPTIVE_CAPACITY_DELAY
    manual_clock: bool = False  # test aid: time moves only through POST /dynastore/clock
    # Secondary indexes (docs/indexes.md). The item-collection limit is DynamoDB's 10 GB by default; the GSI
    # delays are test aids (seconds by the server's clock, 0 in production): a GSI update waits
    # ``gsi_propagation_delay`` in its durable backlog before it is applied, and a backfill copies
    # ``gsi_backfill_chunk`` items at most every ``gsi_backfill_interval`` seconds.
    item_collection_size_limit: int = ITEM_COLLECTION_MAX_BYTES
    gsi_propagation_delay: float = 0.0
    gsi_backfill_interval: float = 0.0
    gsi_backfill_chunk: int = GSI_BACKFILL_ITEMS_PER_TXN
    # Connection limits (docs/design.md "Limits and abuse"): what one client can make the server hold, and for how long.
    max_header_bytes: int = MAX_HEADER_BYTES
    max_url_bytes: int = MAX_URL_BYTES
    idle_timeout: float = IDLE_TIMEOUT_SECONDS
    header_timeout: float = HEADER_TIMEOUT_SECONDS
    body_timeout: float = BODY_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS
    reserved_descriptors: int = RESERVED_DESCRIPTORS
    max_buffered_request_bytes: int = MAX_BUFFERED_REQUEST_BYTES
    write_buffer_bytes: int = WRITE_BUFFER_BYTES
    shutdown_grace: float = SHUTDOWN_GRACE_SECONDS  # seconds a stop waits for the requests under way
    # The request log (protocol/request_log.py): one line per request on stderr, as "text" or "json".
    log_requests: bool = False
    log_format: str = "text"
    # Triggers (docs/triggers.md): each a JSON object (or a JSON array of them), and a JSON or TOML file of more;
    # parsed and checked by the triggers package when the dynastore is built.
    triggers: tuple[str, ...] = ()
    triggers_file: Path | None = None
    # Metrics for operators (docs/metrics.md): GET /metrics on the main port, and on ``metrics_port`` too if set.
    metrics: bool = True
    metrics_port: int | None = None
    # Authentication and authorization (docs/security.md): "none" takes every request as the one anonymous caller;
    # "sigv4" verifies each request's signature against the credentials store (<data dir>/security/credentials.json,
    # or ``users_file``), plus one admin user seeded from DYNASTORE_ADMIN_ACCESS_KEY_ID / _SECRET_ACCESS_KEY (only
    # from the environment: a secret on a command line is visible to every user of the machine), and evaluates the
    # caller's policies. ``policies_file``: the identity policies of users and groups (default: policies.json in
    # the data directory; an in-memory server reads one only if given).
    auth: str = "none"
    policies_file: Path | None = None
    users_file: Path | None = None
    admin_access_key_id: str = ""
    admin_secret_access_key: str = field(default="", repr=False)
    # HTTPS (docs/security.md): a PEM certificate chain and its private key; both or neither.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # Host names a request's Host header may give besides localhost, IP addresses and ``host`` ("*": any), against
    # DNS rebinding (protocol/hosts.py, docs/security.md "Browsers").
    allowed_hosts: tuple[str, ...] = ()
    clock: Clock = field(default_factory=SystemClock, compare=False)
    # Export to and import from S3 (docs/backups.md "Export and import"): with ``s3_endpoint_url`` the buckets are
    # those of that S3-compatible server ("aws": AWS's own S3 endpoint of ``s3_region``), reached with
    # ``s3_access_key_id`` / ``s3_secret_access_key`` (empty: boto3's usual credential chain); without it a
    # directory stands in for the buckets, each a subdirectory of ``s3_root`` (default: <data dir>/s3; for
    # --in-memory <system temporary directory>/dynastore-s3).
    s3_endpoint_url: str | None = None
    s3_root: Path | None = None
    s3_region: str | None = None
    s3_access_key_id: str = ""
    s3_secret_access_key: str = field(default="", repr=False)
    # A replicated node (docs/cluster.md): ``cluster`` names the etcd members (etcd://HOST:PORT[,HOST:PORT...]),
    # ``node_name`` this node among the cluster's, ``advertise_url`` where the other nodes reach it (default:
    # http://HOST:PORT of its listener). Without ``cluster`` the store is the embedded one.
    cluster: str | None = None
    node_name: str | None = None
    advertise_url: str | None = None
    # What a node shows another to fetch a copy of its store (seeding a replica) when requests are authenticated;
    # only from DYNASTORE_CLUSTER_SECRET (a secret on a command line is visible to every user of the machine).
    cluster_secret: str = field(default="", repr=False)
    # Global tables (docs/global-tables.md): seconds a deleted item's tombstone is kept (it must outlive the worst
    # replication lag, so that an older write arriving late never brings the item back).
    tombstone_retention_seconds: float = 86400.0
    # Global tables' replicas in other dynastore servers (docs/global-tables.md "Peers"): the region each peer
    # serves -> its URL (``--peer REGION=URL``, DYNASTORE_PEERS); a replica in any other region lives in this server.
    # This server signs its requests to them with ``peer_access_key_id`` / ``peer_secret_access_key`` (only from
    # DYNASTORE_PEER_ACCESS_KEY_ID / _SECRET_ACCESS_KEY: a secret on a command line is visible to every user of the
    # machine); without a key they go unsigned, which only a peer started with --auth none takes.
    peers: dict[str, str] = field(default_factory=dict, hash=False)
    peer_access_key_id: str = ""
    peer_secret_access_key: str = field(default="", repr=False)
    peer_session_token: str = field(default="", repr=False)
    # The certificates an https:// peer's is checked against (DYNASTORE_PEER_CA_BUNDLE; default: the system's).
    peer_ca_bundle: Path | None = None
    # Global tables with multi-region strong consistency (docs/global-tables.md "Multi-Region strong
    # consistency"): the etcd members of the strong log their writes are committed to, one or more per region
    # (``--strong-etcd``, DYNASTORE_STRONG_ETCD: etcd://HOST:PORT[,HOST:PORT...]). Without it, every region of
    # such a table must be served by this server.
    strong_etcd: str | None = None

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Config:
        """Defaults overridden by DYNASTORE_* environment variables (the CLI then applies its flags)."""
        env = os.environ if environ is None else environ
        base = cls()
        return cls(
            host=env.get("DYNASTORE_HOST", base.host),
            port=_int(env, "DYNASTORE_PORT", base.port),
            data_dir=Path(env.get("DYNASTORE_DATA_DIR", str(base.data_dir))),
            in_memory=env.get("DYNASTORE_IN_MEMORY", "").lower() in ("1", "true", "yes"),
            crash_safe=env.get("DYNASTORE_CRASH_SAFE", "").lower() in ("1", "true", "yes"),
            disk_reserve=_int(env, "DYNASTORE_DISK_RESERVE", base.disk_reserve),
            region=env.get("DYNASTORE_REGION", base.region),
            account_id=env.get("DYNASTORE_ACCOUNT_ID", base.account_id),
            shared_namespace=env.get("DYNASTORE_SHARED_NAMESPACE", "").lower() in ("1", "true", "yes"),
            create_table_delay=_float(env, "DYNASTORE_CREATE_TABLE_DELAY", base.create_table_delay),
            update_table_delay=_float(env, "DYNASTORE_UPDATE_TABLE_DELAY", base.update_table_delay),
            delete_table_delay=_float(env, "DYNASTORE_DELETE_TABLE_DELAY", base.delete_table_delay),
            transaction_lock_hold=_float(env, "DYNASTORE_TRANSACTION_LOCK_HOLD", base.transaction_lock_hold),
            log_requests=env.get("DYNASTORE_LOG_REQUESTS", "").lower() in ("1", "true", "yes"),
            log_format=env.get("DYNASTORE_LOG_FORMAT", base.log_format),
            triggers=(env["DYNASTORE_TRIGGERS"],) if env.get("DYNASTORE_TRIGGERS", "").strip() else (),
            triggers_file=Path(env["DYNASTORE_TRIGGERS_FILE"]) if env.get("DYNASTORE_TRIGGERS_FILE") else None,
            metrics=env.get("DYNASTORE_NO_METRICS", "").lower() not in ("1", "true", "yes"),
            metrics_port=_optional_int(env, "DYNASTORE_METRICS_PORT"),
            policies_file=Path(env["DYNASTORE_POLICIES_FILE"]) if env.get("DYNASTORE_POLICIES_FILE") else None,
            **_security_from_env(env, base),
            **_capacity_from_env(env, base),
            **_indexes_from_env(env, base),
            **_network_from_env(env, base),
            **_s3_from_env(env),
            cluster=env.get("DYNASTORE_CLUSTER") or None,
            node_name=env.get("DYNASTORE_NODE_NAME") or None,
            advertise_url=env.get("DYNASTORE_ADVERTISE_URL") or None,
            cluster_secret=env.get("DYNASTORE_CLUSTER_SECRET", ""),
            tombstone_retention_seconds=_float(
                env, "DYNASTORE_TOMBSTONE_RETENTION_SECONDS", base.tombstone_retention_seconds
            ),
            **_peers_from_env(env),
            strong_etcd=env.get("DYNASTORE_STRONG_ETCD") or None,
        )


# The connection limits, each from DYNASTORE_<NAME> (its field name in upper case).
NETWORK_LIMITS: dict[str, type] = {
    "max_header_bytes": int,
    "max_url_bytes": int,
    "idle_timeout": float,
    "header_timeout": float,
    "body_timeout": float,
    "max_connections": int,
    "reserved_descriptors": int,
    "max_buffered_request_bytes": int,
    "write_buffer_bytes": int,
    "shutdown_grace": float,
}


def policies_path(config: Config) -> Path | None:
    """Where the identity policies of users and groups live (None: nowhere, an in-memory server's default)."""
    if config.policies_file is not None:
        return config.policies_file
    return None if config.in_memory else config.data_dir / "policies.json"


def host_list(text: str) -> tuple[str, ...]:
    """``"a.example, b.example"`` -> ("a.example", "b.example"): names separated by commas or spaces."""
    return tuple(name for name in text.replace(",", " ").split() if name)


def _number(env: Mapping[str, str], name: str, default: Any, kind: type) -> Any:
    """The number ``env[name]`` holds (``default`` when unset); a ValueError naming the variable and what it takes
    otherwise (int's own message would not say which variable is wrong)."""
    text = env.get(name)
    if text is None:
        return default
    try:
        return kind(text)
    except ValueError:
        template = messages.CLI_ENV_NOT_INTEGER if kind is int else messages.CLI_ENV_NOT_NUMBER
        example = f"{default:g}" if isinstance(default, float) else default
        raise ValueError(template.format(name=name, example=example, value=text)) from None


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    value: int = _number(env, name, default, int)
    return value


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    value: float = _number(env, name, default, float)
    return value


def _optional_int(env: Mapping[str, str], name: str) -> int | None:
    """An unset or empty variable is None."""
    return _int(env, name, 9090) if env.get(name) else None


def _network_from_env(env: Mapping[str, str], base: Config) -> dict[str, Any]:
    return {
        name: _number(env, f"DYNASTORE_{name.upper()}", getattr(base, name), kind)
        for name, kind in NETWORK_LIMITS.items()
    }


def _security_from_env(env: Mapping[str, str], base: Config) -> dict[str, Any]:
    """DYNASTORE_AUTH, _USERS_FILE, _ADMIN_ACCESS_KEY_ID, _ADMIN_SECRET_ACCESS_KEY, _TLS_CERT, _TLS_KEY and
    _ALLOWED_HOSTS."""
    return {
        "auth": env.get("DYNASTORE_AUTH", base.auth),
        "users_file": Path(env["DYNASTORE_USERS_FILE"]) if env.get("DYNASTORE_USERS_FILE") else None,
        "admin_access_key_id": env.get("DYNASTORE_ADMIN_ACCESS_KEY_ID", ""),
        "admin_secret_access_key": env.get("DYNASTORE_ADMIN_SECRET_ACCESS_KEY", ""),
        "tls_cert": Path(env["DYNASTORE_TLS_CERT"]) if env.get("DYNASTORE_TLS_CERT") else None,
        "tls_key": Path(env["DYNASTORE_TLS_KEY"]) if env.get("DYNASTORE_TLS_KEY") else None,
        "allowed_hosts": host_list(env.get("DYNASTORE_ALLOWED_HOSTS", "")),
    }


def _indexes_from_env(env: Mapping[str, str], base: Config) -> dict[str, Any]:
    """DYNASTORE_ITEM_COLLECTION_SIZE_LIMIT, _GSI_PROPAGATION_DELAY, _GSI_BACKFILL_INTERVAL, _GSI_BACKFILL_CHUNK."""
    return {
        "item_collection_size_limit": _int(
            env, "DYNASTORE_ITEM_COLLECTION_SIZE_LIMIT", base.item_collection_size_limit
        ),
        "gsi_propagation_delay": _float(env, "DYNASTORE_GSI_PROPAGATION_DELAY", base.gsi_propagation_delay),
        "gsi_backfill_interval": _float(env, "DYNASTORE_GSI_BACKFILL_INTERVAL", base.gsi_backfill_interval),
        "gsi_backfill_chunk": _int(env, "DYNASTORE_GSI_BACKFILL_CHUNK", base.gsi_backfill_chunk),
    }


def _capacity_from_env(env: Mapping[str, str], base: Config) -> dict[str, Any]:
    """The capacity-model settings of DYNASTORE_CAPACITY, _PARTITION_SIZE_LIMIT, _PARTITION_MAX_RCU/WCU,
    _ADAPTIVE_DELAY and _MANUAL_CLOCK."""
    manual = env.get("DYNASTORE_MANUAL_CLOCK", "").lower() in ("1", "true", "yes")
    out: dict[str, Any] = {
        "capacity": env.get("DYNASTORE_CAPACITY", base.capacity),
        "partition_size_limit": _int(env, "DYNASTORE_PARTITION_SIZE_LIMIT", base.partition_size_limit),
        "partition_max_rcu": _int(env, "DYNASTORE_PARTITION_MAX_RCU", base.partition_max_rcu),
        "partition_max_wcu": _int(env, "DYNASTORE_PARTITION_MAX_WCU", base.partition_max_wcu),
        "adaptive_delay": _float(env, "DYNASTORE_ADAPTIVE_DELAY", base.adaptive_delay),
        "manual_clock": manual,
    }
    if manual:
        out["clock"] = ManualClock(time.time())
    return out


def _s3_from_env(env: Mapping[str, str]) -> dict[str, Any]:
    """DYNASTORE_S3_ENDPOINT_URL, _S3_ROOT, _S3_REGION, _S3_ACCESS_KEY_ID, _S3_SECRET_ACCESS_KEY."""
    return {
        "s3_endpoint_url": env.get("DYNASTORE_S3_ENDPOINT_URL") or None,
        "s3_root": Path(env["DYNASTORE_S3_ROOT"]) if env.get("DYNASTORE_S3_ROOT") else None,
        "s3_region": env.get("DYNASTORE_S3_REGION") or None,
        "s3_access_key_id": env.get("DYNASTORE_S3_ACCESS_KEY_ID", ""),
        "s3_secret_access_key": env.get("DYNASTORE_S3_SECRET_ACCESS_KEY", ""),
    }


def _peers_from_env(env: Mapping[str, str]) -> dict[str, Any]:
    """DYNASTORE_PEERS, _PEER_ACCESS_KEY_ID, _PEER_SECRET_ACCESS_KEY, _PEER_SESSION_TOKEN and _PEER_CA_BUNDLE."""
    try:
        peers = peer_map([env.get("DYNASTORE_PEERS", "")])
    except ValueError as e:
        raise ValueError(f"DYNASTORE_PEERS: {e}") from None
    return {
        "peers": peers,
        "peer_access_key_id": env.get("DYNASTORE_PEER_ACCESS_KEY_ID", ""),
        "peer_secret_access_key": env.get("DYNASTORE_PEER_SECRET_ACCESS_KEY", ""),
        "peer_session_token": env.get("DYNASTORE_PEER_SESSION_TOKEN", ""),
        "peer_ca_bundle": Path(env["DYNASTORE_PEER_CA_BUNDLE"]) if env.get("DYNASTORE_PEER_CA_BUNDLE") else None,
    }


# An AWS region's name (us-east-1, eu-central-2, us-gov-west-1): what a peer may serve.
_REGION_NAME = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")


def peer_map(entries: Sequence[str]) -> dict[str, str]:
    """``["us-west-2=http://h:8001", "eu-west-1=http://h2:8002,ap-south-1=https://h3"]`` (an entry may hold
    several, separated by commas or white space) -> {region: url without a final slash}; ValueError names the first
    one that is not ``REGION=URL`` with a URL of a server's root."""
    peers: dict[str, str] = {}
    for entry in entries:
        for item in entry.replace(",", " ").split():
            region, _, url = item.partition("=")
            url = url.rstrip("/")
            parts = urlsplit(url)
            if not _REGION_NAME.fullmatch(region) or parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(messages.CLI_BAD_PEER.format(entry=item))
            if parts.path or parts.query or parts.fragment:
                raise ValueError(messages.CLI_PEER_URL_NOT_ROOT.format(url=url))
            if peers.get(region, url) != url:
                raise ValueError(messages.CLI_PEER_TWICE.format(region=region, first=peers[region], second=url))
            peers[region] = url
    return peers
