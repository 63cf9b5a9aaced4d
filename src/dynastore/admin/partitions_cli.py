"""``dynastore partitions TABLE``: show a running server's partitions of a table (the extension endpoint)."""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urlsplit

from dynastore.security.sigv4 import sign_headers

__all__ = ["LEGEND", "default_endpoint", "endpoint_url", "format_history", "format_partitions", "run"]


class Signer:
    """SigV4 credentials for a server with ``--auth sigv4`` (its endpoints need an admin user's signature); with
    no access key, requests go unsigned (``--auth none``)."""

    def __init__(self, access_key_id: str, secret: str, session_token: str, region: str) -> None:
        self.access_key_id = access_key_id
        self.secret = secret
        self.session_token = session_token
        self.region = region

    def headers(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        if not self.access_key_id:
            return headers
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        return sign_headers(
            method,
            path,
            {**headers, "Host": parts.netloc},
            body,
            access_key_id=self.access_key_id,
            secret=self.secret,
            region=self.region,
            amz_date=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
            session_token=self.session_token,
        )


def signer_from(args: argparse.Namespace) -> Signer:
    """Credentials from the options, else from the standard AWS environment variables."""
    env = os.environ
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or env.get("DYNASTORE_REGION", "us-east-1")
    return Signer(
        args.access_key_id or env.get("AWS_ACCESS_KEY_ID", ""),
        args.secret_access_key or env.get("AWS_SECRET_ACCESS_KEY", ""),
        args.session_token or env.get("AWS_SESSION_TOKEN", ""),
        args.region or region,
    )


_SIGNER = Signer("", "", "", "us-east-1")
_CONTEXT: ssl.SSLContext | None = None


def _call(url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    method = "GET" if body is None else "POST"
    headers = _SIGNER.headers(method, url, {"Content-Type": "application/json"}, data or b"")
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=30, context=_CONTEXT) as response:
        return json.loads(response.read())


LEGEND = """\
columns (one row per partition of the table, then of each global secondary index):
  #                 the partition's number
  hash range        the part of the 32-bit key-hash space it holds (hex, both ends included)
  items, bytes      the items stored in it and their size
  RCU, WCU          its share of the read / write units a second (on-demand: the partition maximum)
  used R, used W    capacity units it has consumed since the server started
  burst R, burst W  burst credit: capacity left unused in the last 300 seconds, beyond one second of its share
  thr R, thr W      requests it throttled since the server started (--capacity report: would have throttled)
  adaptive          shown when adaptive capacity lets it borrow the table's unused throughput"""


def endpoint_url(endpoint: str) -> str:
    """The server's base URL: ``host:port`` needs no scheme (http is assumed)."""
    endpoint = endpoint.strip().rstrip("/")
    return endpoint if "://" in endpoint else f"http://{endpoint}"


def default_endpoint(host: str, port: int) -> str:
    """Where ``dynastore serve`` listens when given the same host and port (DYNASTORE_HOST / DYNASTORE_PORT): an
    address that means every interface is reached on the loopback one."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def run(args: argparse.Namespace) -> int:
    global _SIGNER, _CONTEXT
    _SIGNER = signer_from(args)
    bundle = args.ca_bundle or os.environ.get("AWS_CA_BUNDLE")
    _CONTEXT = ssl.create_default_context(cafile=bundle) if bundle else None
    base = endpoint_url(args.endpoint)
    window = "" if not args.window else f"?window={quote(args.window, safe='')}"
    url = f"{base}/dynastore/partitions/{quote(args.table, safe='')}{window}"
    try:
        change: dict[str, Any] = {}
        if args.as_if is not None:
            change["as_if"] = args.as_if
        if args.rebuild:
            change["rebuild"] = True
        if args.spend_burst:
            change["spend_burst"] = True
        view = _call(url, change) if change else _call(url)
        contributors = None
        if args.contributors:
            contributors = _call(f"{base}/dynastore/contributors/{quote(args.table, safe='')}{window}")
    except urllib.error.HTTPError as e:
        return _fail(_refusal(e))
    except urllib.error.URLError as e:
        return _fail(f"cannot reach {base}: {e.reason}: is `dynastore serve` running there?")
    except (OSError, ValueError) as e:
        return _fail(f"cannot reach {base}: {e}")
    for line in changed_lines(args.table, change):  # JSON stays parseable: the notice then goes to stderr
        print(line, file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps({"partitions": view, "contributors": contributors} if contributors else view, indent=2))
    else:
        print(format_partitions(view))
        if "window" in view:
            print(format_history(view, args.window))
        if contributors is not None:
            print(format_contributors(contributors))
        print()
        print(LEGEND)
    return 0


def changed_lines(table: str, change: dict[str, Any]) -> list[str]:
    """What a change asked of the server did, one line each: it outlives the command and every client sees it."""
    lines = []
    if "as_if" in change:
        n = change["as_if"]
        lines.append(
            f"changed on the server: table {table} now behaves as if it held {plural(n, 'partition')} "
            f"(`--set-as-if 0` returns to its real partitions)"
            if n
            else f"changed on the server: table {table} has its real partitions again"
        )
    if change.get("rebuild"):
        lines.append(f"changed on the server: table {table} was re-partitioned from its throughput and size")
    if change.get("spend_burst"):
        lines.append(f"changed on the server: every partition of table {table} has spent its burst credit")
    return lines


def plural(count: int, noun: str) -> str:
    """``1 partition``, ``2 partitions``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _fail(text: str) -> int:
    print(f"dynastore partitions: error: {text}", file=sys.stderr)
    return 1


def _refusal(error: urllib.error.HTTPError) -> str:
    """The server's ``{"error": text}`` (admin/routes.py), or the HTTP status when the answer is something else."""
    body = error.read()
    try:
        text = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return f"HTTP {error.code} {body.decode(errors='replace')[:200]!r}"
    return str(text)


def _n(value: float) -> str:
    return f"{value:g}" if value == int(value) or abs(value) >= 100 else f"{value:.2f}"


def _block(title: str, res: dict[str, Any]) -> list[str]:
    lines = [
        f"{title}: {plural(res['partition_count'], 'partition')}, "
        f"{'provisioned' if res['provisioned'] else 'on-demand'} "
        f"{_n(res['throughput']['read'])} RCU / {_n(res['throughput']['write'])} WCU a second"
    ]
    header = (
        f"{'#':>3} {'hash range':<19} {'items':>8} {'bytes':>12} {'RCU':>8} {'WCU':>8} "
        f"{'used R':>9} {'used W':>9} {'burst R':>9} {'burst W':>9} {'thr R':>6} {'thr W':>6}"
    )
    lines.append(header)
    for p in res["partitions"]:
        lines.append(
            f"{p['partition']:>3} {p['hash_range'][0]}-{p['hash_range'][1]} {p['items']:>8} {p['bytes']:>12} "
            f"{_n(p['provisioned']['read']):>8} {_n(p['provisioned']['write']):>8} "
            f"{_n(p['consumed']['read']):>9} {_n(p['consumed']['write']):>9} "
            f"{_n(p['burst']['read']):>9} {_n(p['burst']['write']):>9} "
            f"{p['throttled']['read']:>6} {p['throttled']['write']:>6}"
            + ("  adaptive" if p["adaptive"]["read"] or p["adaptive"]["write"] else "")
        )
    return lines


def format_partitions(view: dict[str, Any]) -> str:
    lines = [
        f"table {view['table']} ({view['billing_mode']}, capacity {view['capacity_mode']}"
        + (f", as if {plural(view['as_if'], 'partition')}" if view.get("as_if") else "")
        + f"): {plural(view['item_count'], 'item')}, {plural(view['size_bytes'], 'byte')}"
    ]
    lines += _block("table", view)
    for idx in view["indexes"]:
        lines.append("")
        lines += _block(f"index {idx['index']}", idx)
    recovery = view.get("point_in_time")
    if recovery:
        lines.append("")
        lines.append(
            f"point-in-time recovery: {recovery['recovery_days']} day(s), {recovery['bases']} base(s) of "
            f"{recovery['base_bytes']} bytes, {recovery['log_bytes']} bytes of log records"
        )
    return "\n".join(lines)


def format_history(view: dict[str, Any], window: str) -> str:
    """Per partition, what the server's kept history (GET ...?window=) holds over the window: units consumed and
    requests throttled, and when it last throttled."""
    kept = view["window"]
    lines = ["", f"the last {window} ({_n(kept['bucket_seconds'])}-second buckets; the server keeps one hour):"]
    for title, res in (("table", view), *((f"index {i['index']}", i) for i in view["indexes"])):
        lines.append(f"{title}:")
        lines.append(f"{'#':>3} {'used R':>9} {'used W':>9} {'thr R':>6} {'thr W':>6}  last throttled")
        for index, total in sorted(_history_totals(res["history"]).items()):
            last = total["last_throttled"]
            ago = "" if last is None else f"{_n(view['now'] - last)} s ago"
            lines.append(
                f"{index:>3} {_n(total['read']):>9} {_n(total['write']):>9} "
                f"{total['read_throttled']:>6} {total['write_throttled']:>6}  {ago}"
            )
        if not res["history"]:
            lines.append("    (no use in this window)")
    return "\n".join(lines)


def _history_totals(history: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    totals: dict[int, dict[str, Any]] = {}
    for bucket in history:
        for row in bucket["partitions"]:
            total = totals.setdefault(
                row["partition"],
                {"read": 0.0, "write": 0.0, "read_throttled": 0, "write_throttled": 0, "last_throttled": None},
            )
            total["read"] += row["consumed"]["read"]
            total["write"] += row["consumed"]["write"]
            total["read_throttled"] += row["throttled"]["read"]
            total["write_throttled"] += row["throttled"]["write"]
            if row["throttled"]["read"] or row["throttled"]["write"]:
                total["last_throttled"] = bucket["start"]
    return totals


def format_contributors(view: dict[str, Any]) -> str:
    lines = ["", f"contributor insights: {view['status']}"]
    for rule, entries in view.get("rules", {}).items():
        lines.append(f"  {rule}:")
        for e in entries:
            counts = f"units={_n(e['ConsumedThroughputUnits'])}  throttled={e['ThrottleCount']}"
            lines.append(f"    {json.dumps(e['key'])}  {counts}  partition={e['partition']}")
    return "\n".join(lines)
