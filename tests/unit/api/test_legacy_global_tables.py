"""Global tables, version 2017.11.29 (api/legacy_global_tables.py): the request rules of CreateGlobalTable,
UpdateGlobalTable and UpdateGlobalTableSettings, what a member records, ListGlobalTables' pages, and the
authorization of the operations (the Developer Guide's "Using IAM with global tables")."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore import messages
from dynastore.api import create_table, legacy_global_tables
from dynastore.engine.context import Context
from dynastore.errors import DynamoError, ValidationException
from dynastore.global_tables import replicas
from dynastore.util.clock import ManualClock
from tests.unit.api.test_authorization import ACCOUNT, TABLE, Server, allow, denial
from tests.unit.engine.tables import make_ctx, restart

EAST, WEST, CENTRAL = "us-east-1", "us-west-2", "eu-central-1"
GLOBAL = f"arn:aws:dynamodb::{ACCOUNT}:global-table/"
WEST_TABLE = f"arn:aws:dynamodb:{WEST}:{ACCOUNT}:table/"
NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


def make_table(ctx: Context, region: str, name: str, key: str = "pk") -> None:
    req = {
        "TableName": name,
        "KeySchema": [{"AttributeName": key, "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": key, "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
        "StreamSpecification": NEW_AND_OLD,
    }
    create_table.handle(req, ctx.in_namespace(ctx.namespace.account_id, region))


def invalid(detail: str) -> str:
    return messages.INVALID_PARAMS.format(detail=detail)


def refusal(call: Any, req: dict[str, Any], ctx: Context) -> DynamoError:
    with pytest.raises(DynamoError) as info:
        call(req, ctx)
    return info.value


@pytest.fixture
def ctx() -> Context:
    context, _ = make_ctx(peers={"eu-west-1": "http://127.0.0.1:1"})
    return context


class TestCreateRules:
    def test_group_rules(self, ctx: Context) -> None:
        def create(*regions: str) -> str:
            group = [{"RegionName": r} for r in regions]
            error = refusal(
                legacy_global_tables.handle_create, {"GlobalTableName": "g1", "ReplicationGroup": group}, ctx
            )
            assert isinstance(error, ValidationException)
            return str(error.message)

        assert create() == invalid(messages.LEGACY_NO_REGION)
        assert create(EAST, EAST) == invalid(messages.LEGACY_DUPLICATE_REGION.format(region=EAST))
        assert create("US-EAST-1") == invalid(messages.REPLICA_INVALID_REGION.format(region="US-EAST-1"))
        assert create(EAST, "eu-west-1") == messages.LEGACY_PEER_REGION.format(region="eu-west-1")

    def test_members_record_the_version_and_list_each_other(self, ctx: Context) -> None:
        for region in (EAST, WEST):
            make_table(ctx, region, "g1")
        answer = legacy_global_tables.handle_create(
            {"GlobalTableName": "g1", "ReplicationGroup": [{"RegionName": EAST}, {"RegionName": WEST}]}, ctx
        )
        assert answer["GlobalTableDescription"]["CreationDateTime"] == ctx.clock.now()
        west = ctx.in_namespace(ACCOUNT, WEST).catalog.get("g1")
        assert west.global_table_version == "2017.11.29"
        assert west.global_table_created_at == ctx.clock.now()
        # Every member joins CREATING; the caller's region seeds the others (a progress has the replicator seed).
        east = ctx.in_namespace(ACCOUNT, EAST).catalog.get("g1")
        assert [(r.region, r.status, r.progress) for r in east.replicas] == [(WEST, "CREATING", "0")]
        assert [(r.region, r.status, r.progress) for r in west.replicas] == [(EAST, "CREATING", None)]

    def test_a_member_added_is_creating_and_seeded_by_the_callers_region(self, ctx: Context) -> None:
        for region in (EAST, WEST, CENTRAL):
            make_table(ctx, region, "g1")
        legacy_global_tables.handle_create(
            {"GlobalTableName": "g1", "ReplicationGroup": [{"RegionName": EAST}, {"RegionName": WEST}]}, ctx
        )
        for region in (EAST, WEST):  # as the replicator leaves them once it has seeded them
            replicas.set_replica_status(
                ctx.in_namespace(ACCOUNT, region), "g1", WEST if region == EAST else EAST, "ACTIVE"
            )
        answer = legacy_global_tables.handle_update(
            {"GlobalTableName": "g1", "ReplicaUpdates": [{"Create": {"RegionName": CENTRAL}}]},
            ctx.in_namespace(ACCOUNT, WEST),
        )
        assert answer["GlobalTableDescription"]["GlobalTableStatus"] == "UPDATING"
        group = answer["GlobalTableDescription"]["ReplicationGroup"]
        assert [(r["RegionName"], r["ReplicaStatus"]) for r in group] == [
            (CENTRAL, "CREATING"),
            (EAST, "ACTIVE"),
            (WEST, "ACTIVE"),
        ]

        def listed(region: str) -> list[tuple[str, str, str | None]]:
            td = ctx.in_namespace(ACCOUNT, region).catalog.get("g1")
            return [(r.region, r.status, r.progress) for r in td.replicas]

        assert listed(WEST) == [(EAST, "ACTIVE", None), (CENTRAL, "CREATING", "0")]
        assert listed(EAST) == [(WEST, "ACTIVE", None), (CENTRAL, "CREATING", None)]
        assert listed(CENTRAL) == [(EAST, "ACTIVE", None), (WEST, "ACTIVE", None)]

    def test_a_member_that_left_takes_no_list_from_a_seeding_still_under_way(self, ctx: Context) -> None:
        for region in (EAST, WEST):
            make_table(ctx, region, "g1")
        legacy_global_tables.handle_create(
            {"GlobalTableName": "g1", "ReplicationGroup": [{"RegionName": EAST}, {"RegionName": WEST}]}, ctx
        )
        east_ctx, west_ctx = ctx.in_namespace(ACCOUNT, EAST), ctx.in_namespace(ACCOUNT, WEST)
        # The seeding's definition, as the replicator made it before WEST left (EAST seeds WEST).
        seeding = replicas.replica_set_definition(east_ctx, east_ctx.catalog.get("g1"), create=False)
        legacy_global_tables.handle_update(
            {"GlobalTableName": "g1", "ReplicaUpdates": [{"Delete": {"RegionName": WEST}}]}, ctx
        )
        assert replicas.ensure_replica_table(west_ctx, seeding) is None
        west = west_ctx.catalog.get("g1")
        assert (west.replicas, west.global_table_version) == ((), None)

    def test_the_membership_survives_a_restart(self, ctx: Context) -> None:
        make_table(ctx, EAST, "g1")
        clock = ctx.clock
        assert isinstance(clock, ManualClock)
        clock.advance(60)  # the global table is younger than its member table
        legacy_global_tables.handle_create({"GlobalTableName": "g1", "ReplicationGroup": [{"RegionName": EAST}]}, ctx)
        again = restart(ctx)
        described = legacy_global_tables.handle_describe({"GlobalTableName": "g1"}, again)["GlobalTableDescription"]
        assert described["CreationDateTime"] == ctx.clock.now()
        assert again.catalog.get("g1").global_table_version == "2017.11.29"

    def test_key_schemas_must_match(self, ctx: Context) -> None:
        make_table(ctx, EAST, "g1")
        make_table(ctx, WEST, "g1", key="id")
        group = [{"RegionName": EAST}, {"RegionName": WEST}]
        error = refusal(legacy_global_tables.handle_create, {"GlobalTableName": "g1", "ReplicationGroup": group}, ctx)
        assert error.message == messages.LEGACY_SCHEMA_DIFFERS.format(name="g1", region=WEST, other=EAST)


class TestUpdateRules:
    def test_each_update_holds_one_action(self, ctx: Context) -> None:
        both = {"Create": {"RegionName": WEST}, "Delete": {"RegionName": WEST}}
        for update in ({}, both):
            error = refusal(
                legacy_global_tables.handle_update, {"GlobalTableName": "g1", "ReplicaUpdates": [update]}, ctx
            )
            assert error.message == invalid(messages.LEGACY_ONE_ACTION)

    def test_auto_scaling_is_refused_before_any_change(self, ctx: Context) -> None:
        make_table(ctx, EAST, "g1")
        legacy_global_tables.handle_create({"GlobalTableName": "g1", "ReplicationGroup": [{"RegionName": EAST}]}, ctx)
        req = {
            "GlobalTableName": "g1",
            "ReplicaSettingsUpdate": [
                {"RegionName": EAST, "ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate": {"MinimumUnits": 1}}
            ],
        }
        error = refusal(legacy_global_tables.handle_update_settings, req, ctx)
        assert error.message == messages.AUTO_SCALING_NOT_SUPPORTED.format(name="g1")


class TestList:
    def test_pages_in_name_order(self, ctx: Context) -> None:
        for name in ("g3", "g1", "g2"):
            make_table(ctx, EAST, name)
            legacy_global_tables.handle_create(
                {"GlobalTableName": name, "ReplicationGroup": [{"RegionName": EAST}]}, ctx
            )
        first = legacy_global_tables.handle_list({"Limit": 2}, ctx)
        assert [t["GlobalTableName"] for t in first["GlobalTables"]] == ["g1", "g2"]
        assert first["LastEvaluatedGlobalTableName"] == "g2"
        rest = legacy_global_tables.handle_list({"ExclusiveStartGlobalTableName": "g2"}, ctx)
        assert rest == {"GlobalTables": [{"GlobalTableName": "g3", "ReplicationGroup": [{"RegionName": EAST}]}]}
        assert legacy_global_tables.handle_list({"RegionName": WEST}, ctx) == {"GlobalTables": []}


class TestAuthorization:
    def test_create_needs_create_global_table_on_the_global_table_and_each_table(self) -> None:
        server = Server()
        group = [{"RegionName": EAST}, {"RegionName": WEST}]
        refused = server.refused("CreateGlobalTable", GlobalTableName="Music", ReplicationGroup=group)
        assert refused == denial("dynamodb:CreateGlobalTable", GLOBAL + "Music")
        server.grant(allow("dynamodb:CreateGlobalTable", [GLOBAL + "Music", TABLE + "Music"]))
        refused = server.refused("CreateGlobalTable", GlobalTableName="Music", ReplicationGroup=group)
        assert refused == denial("dynamodb:CreateGlobalTable", WEST_TABLE + "Music")

    def test_update_needs_update_global_table(self) -> None:
        server = Server()
        server.grant(allow("dynamodb:CreateGlobalTable", "*"))
        refused = server.refused(
            "UpdateGlobalTable", GlobalTableName="Music", ReplicaUpdates=[{"Create": {"RegionName": WEST}}]
        )
        assert refused == denial("dynamodb:UpdateGlobalTable", GLOBAL + "Music")

    def test_update_settings_needs_update_global_table_and_describe_limits(self) -> None:
        server = Server()
        server.grant(allow("dynamodb:UpdateGlobalTable", GLOBAL + "Music"))
        refused = server.refused("UpdateGlobalTableSettings", GlobalTableName="Music")
        assert refused == denial("dynamodb:DescribeLimits", "*")
