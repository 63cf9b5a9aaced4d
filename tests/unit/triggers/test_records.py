"""The stream record of a change as a trigger's handler gets it: images by view type, the TTL identity, sizes."""

from __future__ import annotations

import pytest

from dynastore.engine.changelog import INSERT, MODIFY, REMOVE, ChangeRecord
from dynastore.model.item_size import item_size
from dynastore.model.table_schema import KeyAttr, KeySchema
from dynastore.model.values import Item
from dynastore.storage.itemcodec import encode_item
from dynastore.triggers.records import sequence_number, stream_record
from tests.unit.engine.tables import create, make_ctx

OLD: Item = {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "old"}}
NEW: Item = {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "new"}}


def change(event: int, old: Item | None, new: Item | None, by_service: bool = False) -> ChangeRecord:
    def stored(item: Item | None) -> bytes | None:
        return None if item is None else encode_item(item, item_size(item))

    return ChangeRecord(42, 1_700_000_123.75, 7, 1, event, by_service, b"key", stored(old), stored(new), [])


@pytest.mark.parametrize(
    ("view", "images"),
    [
        ("KEYS_ONLY", set()),
        ("NEW_IMAGE", {"NewImage"}),
        ("OLD_IMAGE", {"OldImage"}),
        ("NEW_AND_OLD_IMAGES", {"NewImage", "OldImage"}),
    ],
)
def test_the_view_type_chooses_the_images(view: str, images: set[str]) -> None:
    ctx, _ = make_ctx()
    table = create(ctx, "t", range_key=KeyAttr("sk", "N"))
    assert table.key_schema == KeySchema(KeyAttr("pk", "S"), KeyAttr("sk", "N"))
    record = stream_record(change(MODIFY, OLD, NEW), table, view, "eu-west-1", "arn:stream")
    assert record is not None
    data = record["dynamodb"]
    assert (
        set(data) - {"ApproximateCreationDateTime", "Keys", "SequenceNumber", "SizeBytes", "StreamViewType"} == images
    )
    assert data["Keys"] == {"pk": {"S": "a"}, "sk": {"N": "1"}}
    assert data["SequenceNumber"] == sequence_number(42) == "100000000000000000042"  # as GetRecords shows it
    assert data["ApproximateCreationDateTime"] == 1_700_000_123.0
    expected_size = item_size(data["Keys"]) + sum(item_size(data[name]) for name in images)
    assert data["SizeBytes"] == expected_size
    assert (record["eventName"], record["awsRegion"], record["eventSourceARN"]) == ("MODIFY", "eu-west-1", "arn:stream")
    assert "userIdentity" not in record


def test_an_insert_has_no_old_image_and_a_ttl_removal_names_the_service() -> None:
    ctx, _ = make_ctx()
    table = create(ctx, "t", range_key=KeyAttr("sk", "N"))
    inserted = stream_record(change(INSERT, None, NEW), table, "NEW_AND_OLD_IMAGES", "us-east-1", "arn")
    assert inserted is not None and "OldImage" not in inserted["dynamodb"] and inserted["eventName"] == "INSERT"
    removed = stream_record(change(REMOVE, OLD, None, by_service=True), table, "NEW_AND_OLD_IMAGES", "us-east-1", "arn")
    assert removed is not None and removed["eventName"] == "REMOVE" and "NewImage" not in removed["dynamodb"]
    assert removed["dynamodb"]["Keys"] == {"pk": {"S": "a"}, "sk": {"N": "1"}}
    assert removed["userIdentity"] == {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
