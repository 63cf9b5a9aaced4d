"""The ``X-Amz-Target`` prefixes dynastore answers: DynamoDB's (the current API version and the 2011 one that old
SDKs still send) and DynamoDB Streams', served on the same endpoint."""

from __future__ import annotations

from typing import Final

__all__ = ["DYNAMODB_TARGET_PREFIXES", "STREAMS_TARGET_PREFIX"]

DYNAMODB_TARGET_PREFIXES: Final = ("DynamoDB_20120810.", "DynamoDB_20111205.")
STREAMS_TARGET_PREFIX: Final = "DynamoDBStreams_20120810."
