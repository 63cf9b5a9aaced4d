"""Request validation: phase 1 (JSON types) and phase 2 (constraints), behind one entry point.

``request_validator(shape)`` makes what runs on every request of an operation. Phase-3 semantic checks
(AttributeValue well-formedness, expressions, keys) are called by the operation handlers in DynamoDB's order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dynastore.errors import SerializationException
from dynastore.validation import constraints
from dynastore.validation.shapes import Struct
from dynastore.validation.typecheck import coercer

__all__ = ["request_validator", "validate_request"]


def request_validator(shape: Struct) -> Callable[[Any], dict[str, Any]]:
    """What validates every request of ``shape`` (an operation binds it at start-up): coerce the body (what the
    JSON decoder produced) to ``shape`` and check its constraints.

    The validation raises ``SerializationException`` (phase 1, first mismatch; also for a non-object body) or
    ``ValidationException`` (phase 2, up to 10 aggregated failures), and returns the coerced request: unknown and
    ``null`` members dropped, AttributeValue maps as ``AttributeMap`` with numbers canonical.
    """
    coerce = coercer(shape)
    check = constraints.request_checker(shape)

    def validate(body: Any) -> dict[str, Any]:
        if type(body) is not dict:
            raise SerializationException()
        request: dict[str, Any] = coerce(body)
        check(request)
        return request

    return validate


def validate_request(shape: Struct, body: Any) -> dict[str, Any]:
    """One request validated as ``request_validator(shape)`` validates it (for a caller without a bound one)."""
    return request_validator(shape)(body)
