"""Every error a client can see, one class per wire ``__type``.

Hierarchy::

    DynamoError                         -> the only exception protocol.handle turns into an error response
      ValidationException               com.amazon.coral.validate
      SerializationException            com.amazon.coral.service (key "Message")
      UnknownOperationException         com.amazon.coral.service
      MissingAuthenticationTokenException, IncompleteSignatureException,
      InvalidSignatureException, UnrecognizedClientException, AccessDeniedException
      ThrottlingException               com.amazon.coral.availability
      RequestEntityTooLargeException    413
      ResourceNotFoundException, ResourceInUseException, ConditionalCheckFailedException, PolicyNotFoundException,
      ProvisionedThroughputExceededException, LimitExceededException, ItemCollectionSizeLimitExceededException,
      TransactionCanceledException, TransactionConflictException, TransactionInProgressException,
      IdempotentParameterMismatchException, RequestLimitExceeded     com.amazonaws.dynamodb.v20120810
      ExpiredIteratorException, TrimmedDataAccessException         (DynamoDB Streams) the same namespace
      InternalServerError               500
      ServiceUnavailable                503 (writes refused while the store is read-only, e.g. a full disk)

Internal (non-wire) errors end in ``Error`` and never reach the protocol layer.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AccessDeniedException",
    "ConditionalCheckFailedException",
    "DuplicateItemException",
    "DynamoError",
    "ExpiredIteratorException",
    "IdempotentParameterMismatchException",
    "IncompleteSignatureException",
    "InternalServerError",
    "InvalidSignatureException",
    "ItemCollectionSizeLimitExceededException",
    "LimitExceededException",
    "MissingAuthenticationTokenException",
    "PolicyNotFoundException",
    "ProvisionedThroughputExceededException",
    "RequestEntityTooLargeException",
    "RequestLimitExceeded",
    "ResourceInUseException",
    "ResourceNotFoundException",
    "SerializationException",
    "ServiceUnavailable",
    "ThrottlingException",
    "TransactionCanceledException",
    "TransactionConflictException",
    "TransactionInProgressException",
    "TrimmedDataAccessException",
    "UnknownOperationException",
    "UnrecognizedClientException",
    "ValidationException",
]

_DYNAMODB = "com.amazonaws.dynamodb.v20120810"
_CORAL_SERVICE = "com.amazon.coral.service"


class DynamoError(Exception):
    """Base of every client-visible error. ``extra`` members are added to the JSON body as they are."""

    namespace: ClassVar[str] = _DYNAMODB
    status: ClassVar[int] = 400
    message_key: ClassVar[str] = "message"
    default_message: ClassVar[str | None] = None

    def __init__(self, message: str | None = None, **extra: Any) -> None:
        self.message = message if message is not None else self.default_message
        self.extra = extra
        super().__init__(self.message)

    @property
    def type_name(self) -> str:
        return f"{self.namespace}#{type(self).__name__}"

    def to_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"__type": self.type_name}
        if self.message is not None:
            body[self.message_key] = self.message
        body.update(self.extra)
        return body

    def __repr__(self) -> str:
        return f"{type(self).__name__}(message={self.message!r})"


class ValidationException(DynamoError):
    namespace = "com.amazon.coral.validate"


class SerializationException(DynamoError):
    namespace = _CORAL_SERVICE
    message_key = "Message"


class UnknownOperationException(DynamoError):
    namespace = _CORAL_SERVICE


class MissingAuthenticationTokenException(DynamoError):
    namespace = _CORAL_SERVICE
    status = 400


class IncompleteSignatureException(DynamoError):
    namespace = _CORAL_SERVICE


class InvalidSignatureException(DynamoError):
    namespace = _CORAL_SERVICE


class UnrecognizedClientException(DynamoError):
    namespace = _CORAL_SERVICE


class ExpiredTokenException(DynamoError):
    namespace = _CORAL_SERVICE


class AccessDeniedException(DynamoError):
    namespace = _CORAL_SERVICE


class ThrottlingException(DynamoError):
    namespace = "com.amazon.coral.availability"


class RequestEntityTooLargeException(DynamoError):
    status = 413


class PolicyNotFoundException(DynamoError):
    pass


class ResourceNotFoundException(DynamoError):
    default_message = "Requested resource not found"


class ResourceInUseException(DynamoError):
    pass


class ConditionalCheckFailedException(DynamoError):
    default_message = "The conditional request failed"


class DuplicateItemException(DynamoError):
    """A PartiQL INSERT of a key that exists."""

    default_message = "Duplicate primary key exists in table"


class ProvisionedThroughputExceededException(DynamoError):
    default_message = (
        "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API."
    )


class RequestLimitExceeded(DynamoError):
    pass


class LimitExceededException(DynamoError):
    pass


class ItemCollectionSizeLimitExceededException(DynamoError):
    default_message = "Item collection size limit exceeded"


class TransactionCanceledException(DynamoError):
    message_key = "Message"


class TransactionConflictException(DynamoError):
    pass


class TransactionInProgressException(DynamoError):
    message_key = "Message"


class IdempotentParameterMismatchException(DynamoError):
    message_key = "Message"


class ExpiredIteratorException(DynamoError):
    pass


class TrimmedDataAccessException(DynamoError):
    pass


class InternalServerError(DynamoError):
    status = 500
    default_message = "Internal server error"


class ServiceUnavailable(DynamoError):
    """DynamoDB's 503, "currently unavailable (this should be a temporary state)": the request was not carried
    out and may be retried as it is."""

    status = 503
