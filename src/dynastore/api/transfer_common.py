"""What ExportTableToPointInTime and ImportTable share: their ARNs, client tokens and list paging tokens."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import orjson

from dynastore import messages
from dynastore.errors import ValidationException

__all__ = ["CLIENT_TOKEN_WINDOW", "decode_token", "encode_token", "fingerprint", "transfer_arn"]

CLIENT_TOKEN_WINDOW = 8 * 3600.0  # seconds a ClientToken identifies its request (DynamoDB's 8 hours)


def transfer_arn(table_arn: str, kind: str, now: float) -> str:
    """``<table arn>/export/<ms since the epoch, 14 digits>-<8 hex digits>`` (or ``/import/``), as DynamoDB
    forms them: in time order per table."""
    return f"{table_arn}/{kind}/{int(now * 1000):014d}-{secrets.token_hex(4)}"


def fingerprint(request: dict[str, Any]) -> str:
    """A digest of a request's parameters: the same request sent again has the same one."""
    return hashlib.sha256(orjson.dumps(request, option=orjson.OPT_SORT_KEYS)).hexdigest()


def encode_token(arn: str) -> str:
    """A list's NextToken: the last ARN returned, in hex, padded to whole groups of 16 digits (ListImports'
    pattern ``([0-9a-f]{16})+``; ListExports takes the same form)."""
    text = arn.encode("utf-8").hex()
    return text + "0" * (-len(text) % 16)


def decode_token(token: str | None) -> str | None:
    if token is None:
        return None
    try:
        raw = bytes.fromhex(token if len(token) % 2 == 0 else token + "0").rstrip(b"\x00")
        return raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise ValidationException(messages.LIST_NEXT_TOKEN_INVALID, bare=True) from None
