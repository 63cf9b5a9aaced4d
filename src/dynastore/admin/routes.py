"""dynastore's own HTTP endpoints under ``/dynastore/`` (JSON in, JSON out; no DynamoDB protocol, no auth), and
the web console's files under ``/console/`` (admin/console.py; docs/console.md).

* ``GET  /dynastore/partitions/<table>``: every partition of the table and its GSIs (engine/capacity/view.py);
  with ``?window=`` (seconds, or ``90s``, ``15m``, ``1h``) and/or ``?since=``/``?until=`` (clock seconds), also
  each partition's kept use and throttles over that window (engine/capacity/history.py; at most the last hour).
* ``POST /dynastore/partitions/<table>`` ``{"as_if": N}`` (0 or null: stop) and/or ``{"rebuild": true}`` and/or
  ``{"spend_burst": true}`` (every partition of the table and its GSIs loses its burst credit).
* ``GET  /dynastore/contributors/<table>?index=&window=&until=&top=``: Contributor Insights' top keys over the
  ``window`` (as above; default the hour the counters keep) up to ``until`` (default now).
* ``GET  /dynastore/indexes``: the GSI propagation lag (percentiles in milliseconds of the last records applied)
  and the backlog; ``POST`` ``{"reset": true}`` forgets the lag samples (to measure one load phase).
* ``GET  /dynastore/triggers``: every trigger (docs/triggers.md) and, per shard of its stream, the checkpoint,
  the batch in flight, retries, the last error and the batches discarded.
* ``GET  /dynastore/recovery``: the backups being created and the restores loading now, each with its items done
  and total, and the backups that failed (docs/backups.md "On-demand backups").
* ``GET  /dynastore/progress``: the long work running now (GSI backfills, TTL sweeps deleting many items,
  partition splits, backups, restores, exports, imports), each with its kind, table and index, done and total
  (null when unknown), start, rate and estimated end (engine/progress.py; docs/operations.md).
* ``GET  /dynastore/cluster``: a cluster node's view of the cluster (its role, the leader, every node's applied
  index and the log's head: docs/cluster.md); 404 on a server started without ``--cluster``.
* ``POST /dynastore/global-tables/changes``, ``.../replica-set`` and ``.../drop``: what another dynastore sends to
  keep this server's replicas of its global tables (admin/peer_endpoints.py; docs/global-tables.md "Peers").
* ``GET  /dynastore/clock`` and, with ``--manual-clock``, ``POST /dynastore/clock`` ``{"advance": seconds}`` or
  ``{"set": epoch_seconds}``: the server's time, for tests that must not sleep.

``<table>`` is a table of the default namespace (the server's ``--region`` and account). A table of another
account or region (tables live per account and region, docs/design.md "Accounts and regions") is named by
``?account=<id>&region=<region>`` (either may be left out: it is the default's), or by its table ARN in place of
the name (URL-encoded: ``arn%3Aaws%3Adynamodb%3A<region>%3A<account>%3Atable%2F<name>``).

Errors are ``{"error": text}`` with 400 (bad request), 404 (unknown path, table or index), 405 (a method other than
GET and POST) or 415 (a POST without ``Content-Type: application/json``).

A POST changes state, so it must carry ``Content-Type: application/json``: a browser sends that content type
cross-site only after a CORS preflight, and these endpoints answer no CORS headers, so a page on another site can
neither change the server's state nor read what these endpoints show.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import orjson

from dynastore.admin import console, peer_endpoints
from dynastore.engine import backups, indexes
from dynastore.engine.capacity.view import contributors_view, partitions_view
from dynastore.engine.context import Context
from dynastore.errors import DynamoError
from dynastore.global_tables.hybrid_clock import HybridClock
from dynastore.limits import CONTRIBUTOR_WINDOW_SECONDS, MAX_AS_IF_PARTITIONS, PARTITION_HISTORY_SECONDS
from dynastore.protocol.protocol import CONSOLE_PREFIX, RawResponse
from dynastore.triggers.service import Triggers
from dynastore.util.clock import ManualClock

__all__ = ["bind", "handle"]

_JSON = "application/json"


class _Refused(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


ClusterStatus = Callable[[], dict[str, Any]]


def bind(
    ctx: Context,
    triggers: Triggers | None = None,
    cluster_status: ClusterStatus | None = None,
    global_clock: HybridClock | None = None,
) -> Callable[[str, dict[str, str], str, bytes], RawResponse]:
    """The handler of ``/dynastore/`` and ``/console/``; ``cluster_status`` is a cluster node's status (None: the
    server is not clustered); ``global_clock`` the hybrid clock of global tables, told the stamps peers send."""

    def run(method: str, headers: dict[str, str], path: str, body: bytes) -> RawResponse:
        return handle(ctx, method, headers, path, body, triggers, cluster_status, global_clock)

    return run


def handle(
    ctx: Context,
    method: str,
    headers: dict[str, str],
    target: str,
    body: bytes,
    triggers: Triggers | None = None,
    cluster_status: ClusterStatus | None = None,
    global_clock: HybridClock | None = None,
) -> RawResponse:
    if target.startswith(CONSOLE_PREFIX):
        verifies = ctx.config.auth == "sigv4"
        return console.serve(method, target, verifies_signatures=verifies, clustered=cluster_status is not None)
    if method not in ("GET", "POST"):
        return _refusal(405, f"{method} is not supported here")
    if method == "POST" and headers.get("content-type", "").split(";", 1)[0].strip().lower() != _JSON:
        return _refusal(415, "a POST to a dynastore endpoint must have Content-Type: application/json")
    url = urlsplit(target)
    parts = [unquote(p) for p in url.path.split("/")[2:] if p]
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    try:
        if parts == ["triggers"]:
            if method != "GET":
                raise _Refused(405, f"{method} is not supported here")
            payload: Any = {"triggers": [] if triggers is None else triggers.view()}
        elif parts == ["cluster"]:
            payload = _cluster(method, cluster_status)
        elif len(parts) == 2 and parts[0] == "global-tables":
            return peer_endpoints.handle(ctx, method, parts[1], body, global_clock)
        else:
            payload = _route(ctx, method, parts, query, body)
    except _Refused as e:
        return _refusal(e.status, e.text)
    except DynamoError as error:
        return RawResponse(404, orjson.dumps({"error": error.message or type(error).__name__}), _JSON)
    return RawResponse(200, orjson.dumps(payload), _JSON)


def _cluster(method: str, cluster_status: ClusterStatus | None) -> dict[str, Any]:
    if cluster_status is None:
        raise _Refused(404, "this server is not part of a cluster (it was started without --cluster)")
    if method != "GET":
        raise _Refused(405, f"{method} is not supported here")
    return cluster_status()


def _refusal(status: int, text: str) -> RawResponse:
    return RawResponse(status, orjson.dumps({"error": text}), _JSON)


def _route(ctx: Context, method: str, parts: list[str], query: dict[str, str], body: bytes) -> Any:
    if parts == ["clock"]:
        return _clock(ctx, method, body)
    if parts == ["progress"]:
        if method != "GET":
            raise _Refused(405, f"{method} is not supported here")
        return ctx.engine.progress.view()
    if parts == ["recovery"]:
        if method != "GET":
            raise _Refused(405, f"{method} is not supported here")
        return backups.recovery_view(ctx)
    if parts == ["indexes"]:
        if method == "POST" and _body(body).get("reset"):
            ctx.propagation.reset_lag()
        return indexes.lag_summary(ctx)
    if len(parts) == 2 and parts[0] in ("partitions", "contributors"):
        ctx = _namespace(ctx, parts[1], query)
        st = ctx.capacity.state(ctx.catalog.get(parts[1]))
        if parts[0] == "partitions":
            if method == "POST":
                _change_partitions(ctx, st, _body(body))
            elif method != "GET":
                raise _Refused(400, f"{method} is not supported here")
            return partitions_view(ctx, st, _history_window(query, ctx.clock.now()))
        index = query.get("index")
        if index is not None and index not in st.gsis:
            raise _Refused(404, f"no global secondary index {index} on table {parts[1]}")
        try:
            top = int(query.get("top", 10))
        except ValueError:
            raise _Refused(400, "top must be a number") from None
        window = _duration(query["window"]) if "window" in query else float(CONTRIBUTOR_WINDOW_SECONDS)
        until = _instant(query, "until")
        return contributors_view(ctx, st, index, window, top, until)
    raise _Refused(404, "unknown dynastore endpoint")


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(text: str) -> float:
    """``300``, ``90s``, ``15m`` or ``1h`` in seconds: more than 0 (a longer one than the server keeps shows what
    it keeps)."""
    unit = _UNITS.get(text[-1:].lower(), 0.0)
    try:
        seconds = float(text[:-1] if unit else text) * (unit or 1.0)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise _Refused(400, f"window must be a duration such as 300, 90s, 15m or 1h, not {text!r}")
    return seconds


def _instant(query: dict[str, str], name: str) -> float | None:
    text = query.get(name)
    if text is None:
        return None
    try:
        at = float(text)
    except ValueError:
        at = float("nan")
    if at != at or at in (float("inf"), float("-inf")):
        raise _Refused(400, f"{name} must be a time in seconds since the epoch (the server's clock), not {text!r}")
    return at


def _history_window(query: dict[str, str], now: float) -> tuple[float, float] | None:
    """The (since, until) of the partition history asked for: ``window`` up to ``until`` (default now), or
    ``since`` to ``until``; None when none is given (the partitions only, as a live poll wants them)."""
    if not {"window", "since", "until"} & query.keys():
        return None
    if "window" in query and "since" in query:
        raise _Refused(400, "give either window or since, not both")
    until = _instant(query, "until")
    end = now if until is None else until
    since = _instant(query, "since")
    if since is None:
        since = end - (_duration(query["window"]) if "window" in query else PARTITION_HISTORY_SECONDS)
    if since >= end:
        raise _Refused(400, "since must be before until")
    return max(since, now - PARTITION_HISTORY_SECONDS), end


def _namespace(ctx: Context, table: str, query: dict[str, str]) -> Context:
    """The context of the namespace a table path names: its ARN's, or ``?account=&region=``, or the default."""
    if table.startswith("arn:"):
        fields = table.split(":", 5)
        if len(fields) == 6:
            return ctx.in_namespace(fields[4], fields[3])
    namespace = ctx.namespace
    return ctx.in_namespace(query.get("account", namespace.account_id), query.get("region", namespace.region))


def _change_partitions(ctx: Context, st: Any, request: dict[str, Any]) -> None:
    cap = ctx.capacity
    if "as_if" in request:
        count = request["as_if"]
        bad = not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_AS_IF_PARTITIONS
        if count is not None and bad:
            raise _Refused(
                400, f"as_if must be a whole number of partitions from 0 (stop) to {MAX_AS_IF_PARTITIONS}, or null"
            )
        cap.set_as_if(st, count)
    if request.get("rebuild"):
        cap.rebuild(st)
    if request.get("spend_burst"):
        cap.spend_burst(st)


def _clock(ctx: Context, method: str, body: bytes) -> dict[str, Any]:
    clock = ctx.clock
    manual = isinstance(clock, ManualClock)
    if method == "POST":
        if not isinstance(clock, ManualClock):
            raise _Refused(400, "the clock is the system's: start the server with --manual-clock")
        request = _body(body)
        advance, at = request.get("advance"), request.get("set")
        if isinstance(advance, int | float) and not isinstance(advance, bool) and advance >= 0:
            clock.advance(float(advance))
        elif isinstance(at, int | float) and not isinstance(at, bool) and at >= clock.now():
            clock.advance(float(at) - clock.now())
        else:
            raise _Refused(400, 'expected {"advance": seconds >= 0} or {"set": epoch seconds, not in the past}')
    return {"now": clock.now(), "manual": manual}


def _body(body: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        raise _Refused(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise _Refused(400, "the body must be a JSON object")
    return data
