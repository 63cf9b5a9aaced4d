"""The request rules of multi-Region strong consistency (api/multi_region_strong.py), which need no table, and
its Region sets."""

from __future__ import annotations

from typing import Any

import pytest

from dynastore import messages
from dynastore.api.multi_region_strong import REGION_SETS, check_region_set, check_request, region_set, witness_action
from dynastore.errors import ValidationException


def create(region: str) -> dict[str, Any]:
    return {"Create": {"RegionName": region}}


def delete(region: str) -> dict[str, Any]:
    return {"Delete": {"RegionName": region}}


def strong(*updates: dict[str, Any], witness: dict[str, Any] | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"MultiRegionConsistency": "STRONG", "ReplicaUpdates": list(updates)}
    if witness is not None:
        req["GlobalTableWitnessUpdates"] = [witness]
    return req


def refusal(call: Any) -> str:
    with pytest.raises(ValidationException) as info:
        call()
    return str(info.value.message)


def invalid(detail: str) -> str:
    return messages.INVALID_PARAMS.format(detail=detail)


class TestCheckRequest:
    def test_the_two_shapes_of_three_regions(self) -> None:
        check_request(strong(create("us-east-2"), create("us-west-2")), "us-east-1")
        check_request(strong(create("us-east-2"), witness=create("us-west-2")), "us-east-1")

    @pytest.mark.parametrize(
        ("updates", "witness"),
        [
            ([create("us-east-2")], None),
            ([create("us-east-2"), create("us-west-2"), create("us-west-1")], None),
            ([create("us-east-2"), create("us-west-2")], create("eu-west-1")),
            ([create("us-east-2"), delete("us-west-2")], None),
            ([create("us-east-2"), {"Update": {"RegionName": "us-west-2"}}], None),
            ([create("us-east-2")], delete("us-west-2")),
        ],
    )
    def test_anything_else_is_refused(self, updates: list[dict[str, Any]], witness: dict[str, Any] | None) -> None:
        assert refusal(lambda: check_request(strong(*updates, witness=witness), "us-east-1")) == invalid(
            messages.MRSC_THREE_REGIONS
        )

    def test_duplicate_and_witness_regions(self) -> None:
        assert refusal(lambda: check_request(strong(create("us-east-2"), create("us-east-2")), "us-east-1")) == (
            invalid(messages.MRSC_DUPLICATE_REGION.format(region="us-east-2"))
        )
        for region in ("us-east-1", "us-east-2"):
            req = strong(create("us-east-2"), witness=create(region))
            assert refusal(lambda r=req: check_request(r, "us-east-1")) == invalid(
                messages.WITNESS_SAME_REGION.format(region=region)
            )

    def test_witness_rules_without_strong(self) -> None:
        req = {"ReplicaUpdates": [create("us-east-2")], "GlobalTableWitnessUpdates": [create("us-west-2")]}
        assert refusal(lambda: check_request(req, "us-east-1")) == invalid(messages.WITNESS_WITHOUT_STRONG)
        req = {"ReplicaUpdates": [create("us-east-2")], "GlobalTableWitnessUpdates": [delete("us-west-2")]}
        assert refusal(lambda: check_request(req, "us-east-1")) == invalid(messages.WITNESS_DELETE_ALONE)
        check_request({"ReplicaUpdates": [delete("us-east-2")], "GlobalTableWitnessUpdates": [delete("us-west-2")]},
                      "us-east-1")  # fmt: skip

    def test_eventual_without_strong_rules(self) -> None:
        check_request({"MultiRegionConsistency": "EVENTUAL", "ReplicaUpdates": [create("eu-west-1")]}, "us-east-1")
        check_request({"ReplicaUpdates": [delete("us-east-2")]}, "us-east-1")


class TestWitnessAction:
    def test_actions(self) -> None:
        assert witness_action({}) is None
        assert witness_action({"GlobalTableWitnessUpdates": [delete("us-west-2")]}) == ("Delete", "us-west-2")
        assert refusal(lambda: witness_action({"GlobalTableWitnessUpdates": [{}]})) == invalid(
            messages.WITNESS_UPDATE_NO_ACTION
        )
        both = {**create("us-west-2"), **delete("us-west-2")}
        assert refusal(lambda: witness_action({"GlobalTableWitnessUpdates": [both]})) == invalid(
            messages.WITNESS_UPDATE_MANY_ACTIONS
        )


class TestRegionSets:
    def test_the_documented_sets(self) -> None:
        assert (
            frozenset({"us-east-1", "us-east-2", "us-west-2"}),
            frozenset({"eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"}),
            frozenset({"ap-northeast-1", "ap-northeast-2", "ap-northeast-3"}),
        ) == REGION_SETS
        assert region_set("us-west-1") is None

    def test_one_set_for_every_region(self) -> None:
        check_region_set("eu-west-3", ["eu-central-1", "eu-west-1"])
        assert refusal(lambda: check_region_set("eu-west-3", ["us-east-1"])) == invalid(
            messages.MRSC_REGION_SET.format(local="eu-west-3", region="us-east-1")
        )
        assert refusal(lambda: check_region_set("eu-west-3", ["sa-east-1"])) == invalid(
            messages.MRSC_REGION_UNSUPPORTED.format(region="sa-east-1")
        )
        assert refusal(lambda: check_region_set("sa-east-1", ["us-east-1"])) == invalid(
            messages.MRSC_REGION_UNSUPPORTED.format(region="sa-east-1")
        )
