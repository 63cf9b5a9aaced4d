"""The per-request cost of authorization in process: ``authorize()`` (api/authorization.py) of a GetItem by an
authenticated caller whose one policy limits it to its own items (``dynamodb:LeadingKeys`` against
``${aws:userid}``), and of a plain allow; prints the median microseconds per call of each, over rounds.

    python -m tests.authorization_cost [--rounds 7] [--calls 20000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from dynastore.api.authorization import authorize
from dynastore.engine.context import Context
from dynastore.security.caller import Caller
from dynastore.security.identity_policies import USER
from tests.unit.api.operations import ANYONE, make_ctx

ACCOUNT = "000000000000"
MUSIC = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/Music"
POLICIES = {
    "leading-keys": {
        "Effect": "Allow",
        "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"],
        "Resource": MUSIC,
        "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:userid}"]}},
    },
    "plain-allow": {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": MUSIC},
}


def caller(name: str) -> Caller:
    return Caller(ACCOUNT, "us-east-1", user_name=name, user_id=name.upper(), arn=f"arn:aws:iam::{ACCOUNT}:user/{name}",
                  authenticated=True)  # fmt: skip


def setup() -> Context:
    ctx, ops, _ = make_ctx()
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
        ctx.policies.put(ACCOUNT, USER, name, "P", doc)
    assert ANYONE is not None
    return ctx


def measure(ctx: Context, who: Caller, calls: int) -> float:
    req: dict[str, Any] = {"TableName": "Music", "Key": {"pk": {"S": who.user_id}}}
    authorize("GetItem", req, who, ctx)  # warm: compiled policies, the caller's policy set
    start = time.perf_counter()
    for _ in range(calls):
        authorize("GetItem", req, who, ctx)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    ctx = setup()
    results: dict[str, list[float]] = {name: [] for name in POLICIES}
    for _ in range(args.rounds):
        for name in POLICIES:
            results[name].append(measure(ctx, caller(name), args.calls))
    for name, samples in results.items():
        print(f"{name}: {statistics.median(samples):.2f} us per authorize() (median of {args.rounds} rounds)")


if __name__ == "__main__":
    main()
