"""Parsing of DynamoDB ARNs: the table ARNs that the tagging operations take, with DynamoDB's error texts, and
the parts of any ``arn:aws:dynamodb:`` ARN (whose account and region say which namespace holds the resource)."""

from __future__ import annotations

from typing import Final

from dynastore import messages
from dynastore.errors import AccessDeniedException, ValidationException

__all__ = ["DynamoArn", "account_of", "parse_dynamodb_arn", "table_name_from_arn", "table_name_in"]

_PREFIX: Final = "arn:aws:dynamodb:"


class DynamoArn:
    """The parts of ``arn:aws:dynamodb:<region>:<account>:<resource>``: ``table`` is the name in a resource
    ``table/<name>[/...]`` ("" for another resource), ``stream_label`` the label of ``table/<name>/stream/<label>``."""

    __slots__ = ("region", "account", "table", "stream_label")

    def __init__(self, region: str, account: str, table: str, stream_label: str | None) -> None:
        self.region = region
        self.account = account
        self.table = table
        self.stream_label = stream_label


def parse_dynamodb_arn(text: str) -> DynamoArn | None:
    """The parts of a DynamoDB ARN; None for a text that is none (another service's, or too few fields). Nothing
    is checked beyond that: an operation refuses a malformed ARN with its own text."""
    if not text.startswith(_PREFIX):
        return None
    parts = text.split(":", 5)
    if len(parts) < 6:
        return None
    segments = parts[5].split("/")
    table = segments[1] if len(segments) > 1 and segments[0] == "table" else ""
    label = segments[3] if len(segments) == 4 and segments[2] == "stream" else None
    return DynamoArn(parts[3], parts[4], table, label)


def account_of(text: str) -> str:
    """The account of a DynamoDB ARN (a table's, an index's or a stream's); "" when ``text`` is none or names
    no account."""
    if not text.startswith(_PREFIX):
        return ""
    parts = text.split(":", 5)
    return parts[4] if len(parts) >= 6 else ""


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
