"""UpdateTable's global-table members (api/replica_updates.py): the request rules that need no table, and the
authorization of a replica change, which DynamoDB checks in the replica's region too (api/authorization.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore import messages
from dynastore.api.replica_updates import check_request, replica_action
from dynastore.errors import ValidationException
from tests.unit.api.test_authorization import ACCOUNT, TABLE, Server, allow, denial

WEST = f"arn:aws:dynamodb:us-west-2:{ACCOUNT}:table/"
NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


def refusal(req: dict[str, Any], others: list[str] | None = None) -> str:
    with pytest.raises(ValidationException) as info:
        check_request(req, "us-east-1", others or [])
    return str(info.value.message)


def invalid(detail: str) -> str:
    return messages.INVALID_PARAMS.format(detail=detail)


class TestCheckRequest:
    def test_replica_actions_before_consistency_rules(self) -> None:
        req = {"MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{}]}
        assert refusal(req) == invalid(messages.REPLICA_UPDATE_NO_ACTION)

    def test_consistency_alone(self) -> None:
        for mode in ("EVENTUAL", "STRONG"):
            assert refusal({"MultiRegionConsistency": mode}) == invalid(messages.MRSC_CONSISTENCY_WITHOUT_CREATE)

    def test_witness_alone(self) -> None:
        assert refusal({"GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-west-2"}}]}) == invalid(
            messages.WITNESS_WITHOUT_STRONG
        )

    def test_strong_creation_passes_with_its_two_creates(self) -> None:
        creates = [{"Create": {"RegionName": "us-east-2"}}, {"Create": {"RegionName": "us-west-2"}}]
        check_request({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": creates}, "us-east-1", [])

    def test_two_deletes_wait_for_the_table(self) -> None:
        deletes = [{"Delete": {"RegionName": "us-east-2"}}, {"Delete": {"RegionName": "us-west-2"}}]
        check_request({"ReplicaUpdates": deletes}, "us-east-1", [])
        mixed = [{"Delete": {"RegionName": "us-east-2"}}, {"Create": {"RegionName": "us-west-2"}}]
        assert refusal({"ReplicaUpdates": mixed}) == invalid(messages.REPLICA_UPDATES_ONE_AT_A_TIME)

    def test_strong_regions_checked_after_their_names(self) -> None:
        creates = [{"Create": {"RegionName": "us-east-2"}}, {"Create": {"RegionName": "US-WEST-2"}}]
        assert refusal({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": creates}) == invalid(
            messages.REPLICA_INVALID_REGION.format(region="US-WEST-2")
        )

    def test_actions_per_update(self) -> None:
        assert refusal({"ReplicaUpdates": [{}]}) == invalid(messages.REPLICA_UPDATE_NO_ACTION)
        two = {"Create": {"RegionName": "us-west-2"}, "Update": {"RegionName": "us-west-2"}}
        assert refusal({"ReplicaUpdates": [two]}) == invalid(messages.REPLICA_UPDATE_MANY_ACTIONS)

    def test_one_replica_alone(self) -> None:
        create = {"Create": {"RegionName": "us-west-2"}}
        assert refusal({"ReplicaUpdates": [create, create]}) == invalid(messages.REPLICA_UPDATES_ONE_AT_A_TIME)
        assert refusal({"ReplicaUpdates": [create]}, ["TableClass"]) == invalid(messages.REPLICA_UPDATES_ALONE)

    def test_regions(self) -> None:
        assert refusal({"ReplicaUpdates": [{"Delete": {"RegionName": "us-east-1"}}]}) == messages.REPLICA_LOCAL_REGION
        for bad in ("", "US-WEST-2", "us-west", "uswest2", "us-west-2a"):
            assert refusal({"ReplicaUpdates": [{"Create": {"RegionName": bad}}]}) == invalid(
                messages.REPLICA_INVALID_REGION.format(region=bad)
            )
        check_request({"ReplicaUpdates": [{"Create": {"RegionName": "ap-southeast-2"}}]}, "us-east-1", [])

    def test_index_overrides_named_once(self) -> None:
        gsis = [{"IndexName": "g1"}, {"IndexName": "g2"}, {"IndexName": "g1"}]
        req = {"ReplicaUpdates": [{"Update": {"RegionName": "eu-west-1", "GlobalSecondaryIndexes": gsis}}]}
        assert refusal(req) == invalid(messages.REPLICA_GSI_DUPLICATE.format(index="g1"))

    def test_replica_action(self) -> None:
        assert replica_action({"Delete": {"RegionName": "eu-west-1"}}) == ("Delete", {"RegionName": "eu-west-1"})


class TestAuthorization:
    @pytest.fixture
    def server(self) -> Server:
        srv = Server()
        srv.table("Music", StreamSpecification=NEW_AND_OLD)
        return srv

    def test_create_needs_the_replica_regions_actions(self, server: Server) -> None:
        create = [{"Create": {"RegionName": "us-west-2"}}]
        server.grant(allow("dynamodb:UpdateTable", TABLE + "Music"))
        refused = server.refused("UpdateTable", TableName="Music", ReplicaUpdates=create)
        assert refused == denial("dynamodb:CreateTable", WEST + "Music")
        server.grant(allow(["dynamodb:CreateTable", "dynamodb:Scan", "dynamodb:Query"], WEST + "Music"), name="Q")
        refused = server.refused("UpdateTable", TableName="Music", ReplicaUpdates=create)
        assert refused == denial("dynamodb:CreateTableReplica", WEST + "Music")
        writes = ["dynamodb:CreateTableReplica", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:GetItem",
                  "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"]  # fmt: skip
        server.grant(allow(writes, WEST + "Music"), name="R")
        described = server.alice("UpdateTable", TableName="Music", ReplicaUpdates=create)["TableDescription"]
        assert described["Replicas"][0]["RegionName"] == "us-west-2"

    def test_the_source_table_needs_update_table(self, server: Server) -> None:
        server.grant(allow("dynamodb:*", WEST + "*"))
        refused = server.refused(
            "UpdateTable", TableName="Music", ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}]
        )
        assert refused == denial("dynamodb:UpdateTable", TABLE + "Music")

    def test_delete_needs_delete_table_replica(self, server: Server) -> None:
        server.grant(allow("dynamodb:UpdateTable", TABLE + "Music"), allow("dynamodb:DeleteTable", WEST + "Music"))
        refused = server.refused(
            "UpdateTable", TableName="Music", ReplicaUpdates=[{"Delete": {"RegionName": "us-west-2"}}]
        )
        assert refused == denial("dynamodb:DeleteTableReplica", WEST + "Music")

    def test_legacy_operations_name_the_global_table(self, server: Server) -> None:
        arn = f"arn:aws:dynamodb::{ACCOUNT}:global-table/Music"
        assert server.refused("DescribeGlobalTable", GlobalTableName="Music") == denial(
            "dynamodb:DescribeGlobalTable", arn
        )
