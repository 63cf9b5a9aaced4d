"""Phase-1 pieces shared by the structure coercers (``typecheck``) and the AttributeValue walk
(``attribute_values``): the deserializer's texts for a JSON value of the wrong type.

Kept below both modules so that ``typecheck`` can build AttributeValue coercers without the two importing
each other.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

from dynastore import messages
from dynastore.errors import SerializationException

__all__ = ["Coercer", "blob_error", "scalar_error", "type_token"]

Coercer = Callable[[Any], Any]


def type_token(value: Any) -> str:
    """The Jackson token name DynamoDB prints for a JSON scalar."""
    if value is True:
        return "TRUE_VALUE"
    if value is False:
        return "FALSE_VALUE"
    if isinstance(value, int):
        return "NUMBER_VALUE"
    if isinstance(value, float):
        return "DECIMAL_VALUE"
    return "STRING_VALUE"


def scalar_error(value: Any, simple_name: str, java_name: str) -> SerializationException:
    """The error for ``value`` where a String/Integer/Long/Boolean (``simple_name``) was expected."""
    if isinstance(value, list):
        return SerializationException(messages.SER_UNRECOGNIZED_COLLECTION.format(java_type="class " + java_name))
    if isinstance(value, dict):
        return SerializationException(messages.SER_STRUCT_NOT_EXPECTED)
    if simple_name == "Boolean" and isinstance(value, str):
        return SerializationException(messages.SER_BOOLEAN_FROM_STRING)
    return SerializationException(messages.SER_CANNOT_CONVERT.format(token=type_token(value), java_type=simple_name))


def blob_error(value: Any) -> SerializationException | None:
    """None if ``value`` is a well-formed base64 string, else DynamoDB's error for it."""
    if type(value) is not str:
        if isinstance(value, list):
            return SerializationException(
                messages.SER_UNRECOGNIZED_COLLECTION.format(java_type="class java.nio.ByteBuffer")
            )
        if isinstance(value, dict):
            return SerializationException(messages.SER_STRUCT_NOT_EXPECTED)
        return SerializationException(messages.SER_BLOB_NOT_STRING)
    if len(value) % 4:
        return SerializationException(messages.SER_BLOB_LENGTH.format(length=len(value)))
    try:
        raw = binascii.a2b_base64(value, strict_mode=True)
    except (binascii.Error, ValueError):
        return SerializationException(messages.SER_BLOB_LAST_CHAR)
    if binascii.b2a_base64(raw, newline=False) != value.encode("ascii"):
        return SerializationException(messages.SER_BLOB_LAST_CHAR)
    return None
