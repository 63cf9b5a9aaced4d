"""The per-request cost of authorization in process: ``authorize()`` (api/authorization.py) of a GetItem by an
authenticated caller whose one policy limits it to its own items (``dynamodb:LeadingKeys`` against
``${aws:userid}``), and of a plain allow; then the whole GetItem operation (``Operation.run``: validation,
authorization, the read) of a server without authentication and of one with it; then the same two for a PartiQL
SELECT by partition-key equality (ExecuteStatement), whose authorization parses nothing (the statement cache)
but works out the statement's leading keys. Prints the median microseconds per call of each, over interleaved
rounds.

    python -m tests.authorization_cost [--rounds 7] [--calls 20000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, NamedTuple

from dynastore.api.authorization import authorize
from dynastore.api.services import RequestServices
from dynastore.app import request_services
from dynastore.engine.context import Context
from dynastore.protocol import dispatch
from dynastore.security.caller import Caller
from dynastore.security.identity_policies import USER
from tests.unit.api.operations import ANYONE, make_ctx

ACCOUNT = "000000000000"
MUSIC = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/Music"
POLICIES = {
    "leading-keys": {
        "Effect": "Allow",
        "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:PartiQLSelect"],
        "Resource": MUSIC,
        "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:userid}"]}},
    },
    "plain-allow": {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": MUSIC},
}


def caller(name: str) -> Caller:
    return Caller(ACCOUNT, "us-east-1", user_name=name, user_id=name.upper(), arn=f"arn:aws:iam::{ACCOUNT}:user/{name}",
                  authenticated=True)  # fmt: skip


class Served(NamedTuple):
    """A dynastore's engine and its request-side services (the identity policies)."""

    ctx: Context
    services: RequestServices


def setup(**config: Any) -> Served:
    ctx, ops, _ = make_ctx(capacity="report", **config)  # a benchmark reads one key at will
    services = request_services(ctx.config)
    ops["CreateTable"](
        {
            "TableName": "Music",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        }
    )
    for name, statement in POLICIES.items():
        doc = json.dumps({"Version": "2012-10-17", "Statement": [statement]})
        services.policies.put(ACCOUNT, USER, name, "P", doc)
    return Served(ctx, services)


def measure(served: Served, who: Caller, calls: int) -> float:
    req: dict[str, Any] = {"TableName": "Music", "Key": {"pk": {"S": who.user_id}}}
    authorize("GetItem", req, who, *served)  # warm: compiled policies, the caller's policy set
    start = time.perf_counter()
    for _ in range(calls):
        authorize("GetItem", req, who, *served)
    return (time.perf_counter() - start) / calls * 1e6


SELECT: dict[str, Any] = {"Statement": "SELECT * FROM Music WHERE pk = ?", "Parameters": [{"S": "LEADING-KEYS"}]}


def measure_select(served: Served, who: Caller, calls: int) -> float:
    authorize("ExecuteStatement", SELECT, who, *served)
    start = time.perf_counter()
    for _ in range(calls):
        authorize("ExecuteStatement", SELECT, who, *served)
    return (time.perf_counter() - start) / calls * 1e6


def measure_operation(served: Served, who: Caller, calls: int, operation: str = "GetItem") -> float:
    run = dispatch.bind(*served)[operation]
    body: dict[str, Any] = {"TableName": "Music", "Key": {"pk": {"S": "LEADING-KEYS"}}}
    if operation == "ExecuteStatement":
        body = SELECT
    run.run(body, who)
    start = time.perf_counter()
    for _ in range(calls):
        run.run(body, who)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    ctx = setup()
    with_auth = setup(auth="sigv4")
    results: dict[str, list[float]] = {name: [] for name in POLICIES}
    whole: dict[str, list[float]] = {
        "GetItem, auth none": [],
        "GetItem, auth sigv4 (leading-keys)": [],
        "authorize() of a PartiQL SELECT by key (leading-keys)": [],
        "ExecuteStatement SELECT by key, auth none": [],
        "ExecuteStatement SELECT by key, auth sigv4 (leading-keys)": [],
    }
    tenant = caller("leading-keys")
    for _ in range(args.rounds):
        for name in POLICIES:
            results[name].append(measure(ctx, caller(name), args.calls))
        whole["GetItem, auth none"].append(measure_operation(ctx, ANYONE, args.calls))
        whole["GetItem, auth sigv4 (leading-keys)"].append(measure_operation(with_auth, tenant, args.calls))
        whole["authorize() of a PartiQL SELECT by key (leading-keys)"].append(measure_select(ctx, tenant, args.calls))
        whole["ExecuteStatement SELECT by key, auth none"].append(
            measure_operation(ctx, ANYONE, args.calls, "ExecuteStatement")
        )
        whole["ExecuteStatement SELECT by key, auth sigv4 (leading-keys)"].append(
            measure_operation(with_auth, tenant, args.calls, "ExecuteStatement")
        )
    results.update(whole)
    for name, samples in results.items():
        print(f"{name}: {statistics.median(samples):.2f} us per call (median of {args.rounds} rounds, fastest "
              f"{min(samples):.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
