"""Parsing of the table ARNs that the tagging operations take, with DynamoDB's error texts."""

from __future__ import annotations

from dynastore import messages
from dynastore.errors import AccessDeniedException, ValidationException

__all__ = ["table_name_from_arn"]


def _invalid(detail: str) -> ValidationException:
    return ValidationException(messages.INVALID_PARAMS.format(detail=detail))


def table_name_from_arn(arn: str, region: str, account_id: str) -> tuple[str, bool]:
    """``(table name, is_stream_arn)`` of ``arn:aws:dynamodb:<region>:<account>:table/<name>[/stream/<l>]``.

    Raises ValidationException for a malformed, foreign-service, index or other-region ARN (DynamoDB's texts),
    AccessDeniedException for another account's ARN.
    """
    if not arn.startswith("arn:"):
        raise _invalid(messages.ARN_MUST_START_WITH_ARN.format(arn=arn))
    parts = arn.split(":", 5)
    if len(parts) != 6 or not parts[5]:
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn))
    _, partition, service, arn_region, account, resource = parts
    if service != "dynamodb":
        raise _invalid(messages.ARN_NOT_DYNAMODB.format(arn=arn))
    if partition != "aws" or arn_region != region or not account.isdigit() or not resource.startswith("table/"):
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn))
    segments = resource.split("/")
    name = segments[1]
    if len(name) < 3:
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn))
    is_stream = False
    if len(segments) > 2:
        if len(segments) == 4 and segments[2] == "stream" and segments[3]:
            is_stream = True
        elif segments[2] == "index":
            raise _invalid(messages.ARN_NOT_TABLE_OR_STREAM.format(arn=arn))
        else:
            raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn))
    if account != account_id:
        raise AccessDeniedException(messages.ACCESS_DENIED)
    return name, is_stream
