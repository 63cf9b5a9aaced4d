"""Parsing of the table ARNs that the tagging operations take, with DynamoDB's error texts."""

from __future__ import annotations

from dynastore import messages
from dynastore.errors import AccessDeniedException, ValidationException

__all__ = ["table_name_from_arn", "table_name_in"]


def _invalid(detail: str) -> ValidationException:
    return ValidationException(messages.INVALID_PARAMS.format(detail=detail), bare=True)


def table_name_from_arn(arn: str, region: str, account_id: str) -> tuple[str, bool]:
    """``(table name, is_stream_arn)`` of ``arn:aws:dynamodb:<region>:<account>:table/<name>[/stream/<l>]``.

    Raises AccessDeniedException for another account's or region's ARN, whatever resource it names (authorization
    comes first), else ValidationException for a malformed, foreign-service or index ARN (DynamoDB's texts).
    """
    if not arn.startswith("arn:"):
        raise _invalid(messages.ARN_MUST_START_WITH_ARN.format(arn=arn))
    parts = arn.split(":", 5)
    if len(parts) != 6 or not parts[5]:
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn), bare=True)
    _, partition, service, arn_region, account, resource = parts
    if service != "dynamodb":
        raise _invalid(messages.ARN_NOT_DYNAMODB.format(arn=arn))
    if partition == "aws" and account.isdigit() and (account != account_id or arn_region != region):
        # Another account's (or region's) resource: authorization refuses it before its path is looked at.
        raise AccessDeniedException(messages.ACCESS_DENIED)
    if partition != "aws" or not account.isdigit() or not resource.startswith("table/"):
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn), bare=True)
    segments = resource.split("/")
    name = segments[1]
    if len(name) < 3:
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn), bare=True)
    is_stream = False
    if len(segments) > 2:
        if len(segments) == 4 and segments[2] == "stream" and segments[3]:
            is_stream = True
        elif segments[2] == "index":
            raise _invalid(messages.ARN_NOT_TABLE_OR_STREAM.format(arn=arn))
        else:
            raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=arn), bare=True)
    if account != account_id or arn_region != region:  # a table this endpoint does not hold for the caller
        raise AccessDeniedException(messages.ACCESS_DENIED)
    return name, is_stream


def table_name_in(table_name: str, region: str, account_id: str) -> str:
    """The table a ``TableName`` means: the text itself, or the name inside a table ARN
    (``arn:aws:dynamodb:<region>:<account>:table/<name>``; DynamoDB's "table name overloading").

    Another account's or region's ARN raises AccessDeniedException whatever it names (authorization comes first);
    an ARN of the caller's that names no table (a stream, an index, another service) raises ValidationException
    with the tagging operations' text.
    """
    if not table_name.startswith("arn:"):
        return table_name
    parts = table_name.split(":", 5)
    if len(parts) != 6 or parts[1] != "aws" or parts[2] != "dynamodb" or not parts[4].isdigit():
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=table_name), bare=True)
    if parts[3] != region or parts[4] != account_id:  # authorization first, as for the tagging operations
        raise AccessDeniedException(messages.ACCESS_DENIED)
    resource = parts[5]
    name = resource[len("table/") :]
    if not resource.startswith("table/") or not name or "/" in name:
        raise ValidationException(messages.INVALID_TABLE_ARN.format(arn=table_name), bare=True)
    return name
