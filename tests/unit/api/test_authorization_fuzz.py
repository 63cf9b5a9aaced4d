"""Authorization never fails on its own: fuzzed requests (tests/fuzz) by an authenticated caller whose policy
reads every condition key are answered, allowed or refused, only with DynamoDB errors."""

from __future__ import annotations

import json
import random

from dynastore.app import request_services
from dynastore.errors import DynamoError
from dynastore.protocol import dispatch
from dynastore.security.caller import Caller
from dynastore.security.identity_policies import USER
from tests.fuzz import operations, shapes
from tests.fuzz.tables import create_table_request, fuzz_tables
from tests.unit.api.operations import ANYONE, make_ctx

ALICE = Caller("000000000000", "us-east-1", user_name="alice", user_id="k1", arn="arn:aws:iam::000000000000:user/alice",
               authenticated=True)  # fmt: skip
READS_EVERY_KEY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*",
         "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["k*", "${aws:userid}"],
                                                   "dynamodb:Attributes": ["*"]},
                       "StringEqualsIfExists": {"dynamodb:Select": ["ALL_ATTRIBUTES", "SPECIFIC_ATTRIBUTES"]}}},
        {"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*",
         "Condition": {"ForAnyValue:StringEquals": {"dynamodb:EnclosingOperation": "TransactGetItems"},
                       "StringEquals": {"dynamodb:ReturnValues": "ALL_OLD"}}},
    ],
}  # fmt: skip


def test_fuzzed_requests_get_only_dynamodb_errors() -> None:
    ctx, _, _ = make_ctx(auth="sigv4", capacity="report")
    services = request_services(ctx.config)
    ops = dispatch.bind(ctx, services)
    tables = fuzz_tables("authz")
    for table in tables:
        ops["CreateTable"].run(create_table_request(table), ANYONE)
    services.policies.put("000000000000", USER, "alice", "All", json.dumps(READS_EVERY_KEY))
    rng = random.Random(20261124)
    answered = refused = 0
    names = list(operations.BUILDERS)
    for _ in range(600):
        operation = rng.choice(names)
        body = operations.BUILDERS[operation](rng, tables)
        if rng.random() < 0.3:
            body = shapes.mutate(rng, body, rng.randint(1, 3))
        body = json.loads(json.dumps(body))  # as the protocol hands it over: decoded JSON
        try:
            ops[operation].run(body, ALICE)
            answered += 1
        except DynamoError as exc:
            refused += type(exc).__name__ == "AccessDeniedException"
    assert answered > 20 and refused > 10, (answered, refused)  # both outcomes were exercised
