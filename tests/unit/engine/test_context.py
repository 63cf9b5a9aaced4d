"""The engine holds the engine's components only, each built by the composition root (app.py) and passed in; a
call's context is a small value (the engine, the namespace, its catalog, the caller) through which the components
are read; the namespace and the caller travel with it, and a table's namespace is found from the table."""

from __future__ import annotations

from dynastore.engine import ttl, writes
from dynastore.engine.context import Engine
from dynastore.engine.keys import storage_key
from dynastore.model.namespace import SERVICE, Namespace, Origin
from dynastore.model.table_schema import StreamSpec, TtlSpec
from dynastore.protocol import dispatch
from dynastore.security.caller import anonymous
from tests.unit.api.operations import bound, call, user
from tests.unit.engine.tables import create, item, make_ctx

# Every component of the engine, read through a call's context.
COMPONENTS = ("config", "kv", "capacity", "indexes", "changelog", "propagation", "shards", "locks", "ttl_cursors",
              "expressions", "key_templates", "table_spaces")  # fmt: skip
OTHER = Namespace("111111111111", "eu-west-1")
STREAM = StreamSpec(True, "NEW_AND_OLD_IMAGES", "2026-11-23T00:00:00.000")
ALICE = Origin("arn:aws:iam::111111111111:user/alice", "AIDAALICE", "111111111111")


def test_an_engine_holds_the_components_it_is_given() -> None:
    """Passed in, not built (what else it may hold is checked by the layer test: nothing of partiql/ or security/)."""
    built, _ = make_ctx()
    given = {name: getattr(built, name) for name in COMPONENTS if name not in ("config", "kv")}
    engine = Engine(built.config, built.kv, built.catalog, **given)
    assert all(getattr(engine, name) is component for name, component in given.items())


def test_a_context_reads_every_component_through_to_its_engine() -> None:
    ctx, _ = make_ctx()
    other = ctx.engine.context(OTHER, ALICE)
    assert all(getattr(other, name) is getattr(ctx.engine, name) for name in COMPONENTS)
    assert other.clock is ctx.engine.config.clock


def test_another_namespace_has_its_own_catalog_and_the_same_config() -> None:
    ctx, _ = make_ctx()
    other = ctx.in_namespace(*OTHER)
    assert other.namespace == OTHER and (other.catalog.account_id, other.catalog.region) == OTHER
    assert other.catalog is not ctx.catalog and other.config is ctx.config and other.origin is ctx.origin
    assert ctx.in_namespace(*ctx.namespace) is ctx


def test_a_namespace_s_calls_build_its_own_arns_not_the_default_one_s() -> None:
    """A table created in another namespace is described with that namespace's ARN, and is not in the default's."""
    ctx, _ = make_ctx()
    other = ctx.in_namespace(*OTHER)
    table = create(other, name="Music")
    assert other.catalog.table_arn(table) == "arn:aws:dynamodb:eu-west-1:111111111111:table/Music"
    assert ctx.catalog.table_arn(table) == "arn:aws:dynamodb:eu-west-1:111111111111:table/Music"  # from the table
    assert ctx.catalog.find("Music") is None and ctx.catalog.namespace_of_table(table) == OTHER


def test_a_table_s_statistics_go_to_its_namespace_whichever_context_writes() -> None:
    ctx, _ = make_ctx()
    other = ctx.in_namespace(*OTHER)
    table = create(other, name="Music")
    writes.execute(ctx, table, storage_key(table, item("a")), writes.PutPlan(item("a")))
    assert other.catalog.stats("Music")[0] == 1 and ctx.catalog.stats("Music") == (0, 0)


def test_background_work_walks_the_tables_of_every_namespace_as_the_service() -> None:
    """A TTL sweep given the default namespace's context finds another namespace's table from the table, deletes
    its expired item there (its statistics follow) and logs the deletion as the service's."""
    ctx, clock = make_ctx()
    other = ctx.in_namespace(*OTHER)
    table = create(other, name="Music", ttl=TtlSpec("expires", True), stream=STREAM)
    expired = {**item("a"), "expires": {"N": str(int(clock.now()) - 1)}}
    writes.execute(other, table, storage_key(table, expired), writes.PutPlan(expired))
    assert [t.name for t in ctx.catalog.every_table()] == ["Music"]
    assert ctx.for_table(table).catalog is other.catalog and ctx.for_table(table).namespace == OTHER
    ttl.sweep(ctx)
    assert other.catalog.stats("Music") == (0, 0)
    records = ctx.changelog.read(-1, 10)
    assert [(r.event_name, r.by_service) for r in records] == [("INSERT", False), ("REMOVE", True)]


def test_dispatch_gives_each_call_its_caller_s_namespace_and_origin() -> None:
    ctx, _ = make_ctx()
    alice = user(*OTHER)
    call(bound(ctx, alice), "CreateTable", **_music())
    contexts = dispatch._Contexts(ctx.engine)
    made = contexts.of(alice)
    assert made.origin == Origin(alice.arn, alice.user_id, alice.account_id) and not made.origin.is_service
    assert made.namespace == OTHER and made.catalog.find("Music") is not None
    assert ctx.catalog.find("Music") is None
    anyone = anonymous(*ctx.namespace)
    assert contexts.of(anyone) is contexts.of(anyone)  # the embedded default makes nothing per call
    assert contexts.of(anyone).catalog is ctx.catalog and contexts.of(anyone).origin == anyone.origin


def test_the_service_is_the_origin_of_its_own_work_only() -> None:
    ctx, _ = make_ctx()
    assert not ctx.origin.is_service and ctx.as_service().origin is SERVICE
    service = ctx.as_service()
    assert service.catalog is ctx.catalog and service.as_service() is service


def _music() -> dict[str, object]:
    return {
        "TableName": "Music",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
