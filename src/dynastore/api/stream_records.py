"""A stream record as DynamoDB writes it (GetRecords' ``Record``, and each of a Lambda event's ``Records``).

Members, in DynamoDB's order: eventID, eventName, eventVersion ("1.1"), eventSource ("aws:dynamodb"), awsRegion,
dynamodb (ApproximateCreationDateTime in epoch seconds rounded down, Keys, NewImage and OldImage as the stream's
view type shows them, SequenceNumber, SizeBytes, StreamViewType) and, for a deletion by Time to Live,
userIdentity. GetRecords names the identity's members ``Type`` / ``PrincipalId`` (the Streams API's model); a
Lambda event ``type`` / ``principalId``.
"""

from __future__ import annotations

from typing import Any

from dynastore.engine.streams import StreamChange, sequence_number

__all__ = ["stream_record"]

_TTL_PRINCIPAL = "dynamodb.amazonaws.com"


def stream_record(change: StreamChange, region: str, *, lambda_event: bool = False) -> dict[str, Any]:
    """The record of ``change`` (engine/streams.decode_change) in ``region``; ``lambda_event``: as a Lambda
    event writes it."""
    data: dict[str, Any] = {"ApproximateCreationDateTime": int(change.at), "Keys": change.keys}
    if change.new_image is not None:
        data["NewImage"] = change.new_image
    if change.old_image is not None:
        data["OldImage"] = change.old_image
    data["SequenceNumber"] = sequence_number(change.seq)
    data["SizeBytes"] = change.size_bytes
    data["StreamViewType"] = change.view_type
    record: dict[str, Any] = {
        "eventID": f"{change.seq:032x}",  # unique: no two changes share a sequence number
        "eventName": change.event_name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": region,
        "dynamodb": data,
    }
    if change.by_service:
        record["userIdentity"] = (
            {"type": "Service", "principalId": _TTL_PRINCIPAL}
            if lambda_event
            else {"Type": "Service", "PrincipalId": _TTL_PRINCIPAL}
        )
    return record
