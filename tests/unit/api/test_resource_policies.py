"""Resource-based policies are part of the table's durable definition."""

from __future__ import annotations

import json

from dynastore.app import build_context
from dynastore.storage.catalog import Catalog
from tests.unit.api.operations import call, create, make_ctx

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/Music"
POLICY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "dynamodb:DeleteItem", "Resource": ARN}],
    }
)


def test_policy_survives_a_reload_of_the_catalog() -> None:
    ctx, ops, _ = make_ctx()
    create(ops, "Music", 5, 5)
    revision = call(ops, "PutResourcePolicy", ResourceArn=ARN, Policy=POLICY)["RevisionId"]
    reloaded = build_context(ctx.config, ctx.kv, Catalog.load(ctx.kv, ctx.config))
    td = reloaded.catalog.get("Music")
    assert td.resource_policy == (json.dumps(json.loads(POLICY), separators=(",", ":")), revision)


def test_revision_ids_grow_with_the_clock() -> None:
    _, ops, clock = make_ctx()
    create(ops, "Music", 5, 5)
    first = call(ops, "PutResourcePolicy", ResourceArn=ARN, Policy=POLICY)["RevisionId"]
    assert first == str(int(clock.now() * 1000))
    second = call(ops, "PutResourcePolicy", ResourceArn=ARN, Policy=POLICY.replace("DeleteItem", "PutItem"))
    assert int(second["RevisionId"]) == int(first) + 1  # the same millisecond: still a new, later revision
