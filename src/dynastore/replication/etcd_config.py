"""How dynastore runs etcd, and the keys it keeps there (docs/cluster.md "etcd").

etcd is configured as its operators recommend for a small, latency-sensitive cluster: pre-vote on (a member that
was cut off does not depose a healthy leader when it returns; Debian's 3.4 has it off by default), a request
limit large enough for the largest group-commit transaction dynastore sends, a backend quota with room for the
log's tail, and history compacted by dynastore itself once every replica has applied it.
"""

from __future__ import annotations

__all__ = [
    "APPLIED_PREFIX",
    "ETCD_MEMBER_FLAGS",
    "HEAD_KEY",
    "KEY_PREFIX",
    "LEADER_KEY",
    "LOG_PREFIX",
    "MAX_REQUEST_BYTES",
    "MAX_TXN_BYTES",
    "MAX_TXN_ENTRIES",
    "MEMBERS_PREFIX",
    "log_key",
    "parse_endpoints",
]

KEY_PREFIX = b"/dynastore/"
LEADER_KEY = KEY_PREFIX + b"leader"  # the write lease: JSON {"node", "url"}, attached to the holder's etcd lease
HEAD_KEY = KEY_PREFIX + b"head"  # the index of the newest log entry (decimal), written with every append
LOG_PREFIX = KEY_PREFIX + b"log/"  # log/<index as 20 decimal digits>: one sealed batch of physical operations
APPLIED_PREFIX = KEY_PREFIX + b"applied/"  # applied/<node>: the index that node's store holds durably
MEMBERS_PREFIX = KEY_PREFIX + b"members/"  # members/<node>: JSON {"url"}, attached to the node's lease

# etcd refuses larger requests; a group-commit transaction is kept below MAX_TXN_BYTES, so one 4 MB
# TransactWriteItems with its index entries and stream images always fits.
MAX_REQUEST_BYTES = 32 << 20
MAX_TXN_BYTES = 24 << 20
# etcd refuses a transaction of more than --max-txn-ops operations (128 unless raised), and an append puts each
# entry and the head: a group-commit sync sends at most this many entries per transaction.
MAX_TXN_ENTRIES = 127

ETCD_MEMBER_FLAGS: tuple[str, ...] = (
    "--pre-vote=true",
    f"--max-request-bytes={MAX_REQUEST_BYTES}",
    f"--quota-backend-bytes={8 << 30}",
    "--heartbeat-interval=100",
    "--election-timeout=1000",
    "--snapshot-count=10000",
    "--logger=zap",
    "--log-level=warn",
)
"""Flags every etcd member dynastore starts is given (its name, directories and URLs come beside them)."""


def log_key(index: int) -> bytes:
    """The key of log entry ``index``: fixed width, so that keys sort in log order."""
    return LOG_PREFIX + b"%020d" % index


def parse_endpoints(spec: str) -> list[tuple[str, int]]:
    """``etcd://HOST:PORT[,HOST:PORT...]`` (the scheme is optional) as (host, port) pairs. Raises ValueError."""
    text = spec.strip().removeprefix("etcd://").rstrip("/")
    endpoints: list[tuple[str, int]] = []
    for part in text.split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"expected etcd://HOST:PORT[,HOST:PORT...], got {spec!r}")
        endpoints.append((host, int(port)))
    return endpoints
