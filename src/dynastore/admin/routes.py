"""dynastore's own HTTP endpoints under ``/dynastore/`` (JSON in, JSON out; no DynamoDB protocol, no auth), and
the web console's files under ``/console/`` (admin/console.py; docs/console.md).

* ``GET  /dynastore/partitions/<table>``: every partition of the table and its GSIs (engine/capacity/view.py).
* ``POST /dynastore/partitions/<table>`` ``{"as_if": N}`` (0 or null: stop) and/or ``{"rebuild": true}`` and/or
  ``{"spend_burst": true}`` (every partition of the table and its GSIs loses its burst credit).
* ``GET  /dynastore/contributors/<table>?index=&window=&top=``: Contributor Insights' top keys.
* ``GET  /dynastore/indexes``: the GSI propagation lag (percentiles in milliseconds of the last records applied)
  and the backlog; ``POST`` ``{"reset": true}`` forgets the lag samples (to measure one load phase).
* ``GET  /dynastore/triggers``: every trigger (docs/triggers.md) and, per shard of its stream, the checkpoint,
  the batch in flight, retries, the last error and the batches discarded.
* ``GET  /dynastore/recovery``: the backups being created and the restores loading now, each with its items done
  and total, and the backups that failed (docs/backups.md "On-demand backups").
* ``GET  /dynastore/cluster``: a cluster node's view of the cluster (its role, the leader, every node's applied
  index and the log's head: docs/cluster.md); 404 on a server started without ``--cluster``.
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

from dynastore.admin import console
from dynastore.engine import backups, indexes
from dynastore.engine.capacity.view import contributors_view, partitions_view
from dynastore.engine.context import Context
from dynastore.errors import DynamoError
from dynastore.limits import MAX_AS_IF_PARTITIONS
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
    ctx: Context, triggers: Triggers | None = None, cluster_status: ClusterStatus | None = None
) -> Callable[[str, dict[str, str], str, bytes], RawResponse]:
    """The handler of ``/dynastore/`` and ``/console/``; ``cluster_status`` is a cluster node's status (None: the
    server is not clustered)."""

    def run(method: str, headers: dict[str, str], path: str, body: bytes) -> RawResponse:
        return handle(ctx, method, headers, path, body, triggers, cluster_status)

    return run


def handle(
    ctx: Context,
    method: str,
    headers: dict[str, str],
    target: str,
    body: bytes,
    triggers: Triggers | None = None,
    cluster_status: ClusterStatus | None = None,
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
            return partitions_view(ctx, st)
        index = query.get("index")
        if index is not None and index not in st.gsis:
            raise _Refused(404, f"no global secondary index {index} on table {parts[1]}")
        try:
            window = float(query.get("window", 3600))
            top = int(query.get("top", 10))
        except ValueError:
            raise _Refused(400, "window and top must be numbers") from None
        return contributors_view(ctx, st, index, window, top)
    raise _Refused(404, "unknown dynastore endpoint")


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
