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
      IdempotentParameterMismatchException, RequestLimitExceeded,
      ReplicatedWriteConflictException  com.amazonaws.dynamodb.v20120810
      ExpiredIteratorException, TrimmedDataAccessException         (DynamoDB Streams) the same namespace
      BackupInUseException, BackupNotFoundException, ContinuousBackupsUnavailableException,
      TableAlreadyExistsException, TableInUseException, TableNotFoundException      (backups) the same namespace
      InternalServerError               500
      ServiceUnavailable                503 (writes refused while the store is read-only, e.g. a full disk)

Internal (non-wire) errors end in ``Error`` and never reach the protocol layer.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from dynastore import messages

__all__ = [
    "AccessDeniedException",
    "BackupInUseException",
    "BackupNotFoundException",
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
    "ReplicatedWriteConflictException",
    "TransactionConflictException",
    "TransactionInProgressException",
    "TrimmedDataAccessException",
    "UnknownOperationException",
    "UnrecognizedClientException",
    "OLD_FORM_REGIONS",
    "VALIDATION_PREFIX",
    "ValidationException",
    "Violation",
    "validation_message",
    # export and import
    "InvalidExportTimeException",
    "ExportConflictException",
    "ExportNotFoundException",
    "ImportConflictException",
    "ImportNotFoundException",
    # point-in-time recovery
    "ContinuousBackupsUnavailableException",
    "InvalidRestoreTimeException",
    "PointInTimeRecoveryUnavailableException",
    "TableAlreadyExistsException",
    "TableInUseException",
    "TableNotFoundException",
    "GlobalTableNotFoundException",
    "GlobalTableAlreadyExistsException",
    "ReplicaAlreadyExistsException",
    "ReplicaNotFoundException",
    "IndexNotFoundException",
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


# The regions whose DynamoDB still answers a request's validation errors in the form used before its request-
# validation framework of 2026: constraint failures aggregated, values echoed, members in lower camel case, no
# prefix on other texts (docs/operations.md "Validation messages"). Every other region answers in the new form.
OLD_FORM_REGIONS: Final = frozenset({"eu-south-2", "me-central-1"})

VALIDATION_PREFIX = messages.VALIDATION_PREFIX
_MAX_AGGREGATED = 10  # the older form lists at most 10 constraint failures


class Violation:
    """One failed constraint, as both forms name it: ``path`` in the API's own spelling (``RequestItems.t.member``),
    ``old_path`` in lower camel case (``requestItems.t.member``), ``echo`` the value as the older form quotes it
    (None: not echoed), ``rank`` the member's place in the service model's order (the new form reports the first)."""

    __slots__ = ("path", "old_path", "constraint", "echo", "rank", "old_constraint")

    def __init__(
        self,
        path: str,
        old_path: str,
        constraint: str,
        echo: str | None,
        rank: tuple[int, ...],
        old_constraint: str | None = None,
    ) -> None:
        self.path = path
        self.old_path = old_path
        self.constraint = constraint
        self.echo = echo
        self.rank = rank
        # The older form's constraint where it differs: a map's values checked as one ("Map value must satisfy
        # constraint: [...]" at the map) where the new form names the failing value and its own constraint.
        self.old_constraint = old_constraint


class ValidationException(DynamoError):
    """A request DynamoDB refuses as invalid. Carries the text without any prefix (``detail``) or the constraint
    failures found (``violations``); ``validation_message`` words them in the form of the request's region.

    ``bare``: the text is answered as it is in every region: a fault found against a table's definition or its
    items (key schema, indexes, the item being updated), which DynamoDB's request validation does not see.
    ``old_detail``: the older form's wording where it differs from the new one's."""

    namespace = "com.amazon.coral.validate"

    def __init__(
        self,
        message: str | None = None,
        *,
        bare: bool = False,
        old_detail: str | None = None,
        violations: tuple[Violation, ...] = (),
        **extra: Any,
    ) -> None:
        self.detail = message
        self.bare = bare
        self.old_detail = old_detail
        self.violations = violations
        super().__init__(validation_message(self, old_form=False), **extra)

    def in_old_form(self) -> None:
        """Word the message as the regions of OLD_FORM_REGIONS do."""
        self.message = validation_message(self, old_form=True)


def validation_message(error: ValidationException, *, old_form: bool) -> str | None:
    """The one place a ValidationException's message is worded (it runs only on errors).

    New form: the first constraint failure alone, ``1 validation error detected: Value at '<Member>' failed to
    satisfy constraint: <constraint>``; any other text prefixed with ``1 validation error detected: `` unless it is
    ``bare``. Old form: up to 10 failures aggregated, ``N validation error(s) detected: Value '<v>' at '<member>'
    ...`` joined by ``; ``; other texts as they are. A text that already carries the prefix is left alone."""
    violations = error.violations
    if violations:
        if old_form:
            listed = violations[:_MAX_AGGREGATED]
            count = len(listed)
            entries = "; ".join(_old_entry(v) for v in listed)
            return messages.CONSTRAINT_SUMMARY.format(count=count, plural="s" if count > 1 else "", entries=entries)
        first = min(violations, key=lambda v: v.rank)
        return VALIDATION_PREFIX + messages.CONSTRAINT_ENTRY_BARE.format(path=first.path, constraint=first.constraint)
    detail = error.detail
    if old_form and error.old_detail is not None:
        return error.old_detail
    if detail is None or old_form or error.bare or detail.startswith(_COUNTED_PREFIXES):
        return detail
    return VALIDATION_PREFIX + detail


_COUNTED_PREFIXES = tuple(f"{n} validation error" for n in range(1, _MAX_AGGREGATED + 1))


def _old_entry(violation: Violation) -> str:
    constraint = violation.constraint if violation.old_constraint is None else violation.old_constraint
    if violation.echo is None:
        return messages.CONSTRAINT_ENTRY_BARE.format(path=violation.path, constraint=constraint)
    return messages.CONSTRAINT_ENTRY.format(value=violation.echo, path=violation.old_path, constraint=constraint)


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


class ReplicatedWriteConflictException(DynamoError):
    """A write of a global table with multi-region strong consistency met a concurrent write of the same item
    committed from another region first: nothing was written, and it may be retried."""

    default_message = messages.REPLICATED_WRITE_CONFLICT


class IdempotentParameterMismatchException(DynamoError):
    message_key = "Message"


class ExpiredIteratorException(DynamoError):
    pass


class TrimmedDataAccessException(DynamoError):
    pass


# ---- point-in-time recovery: the wire types of its operations ----


class TableNotFoundException(DynamoError):
    pass


class TableAlreadyExistsException(DynamoError):
    pass


# ---- global tables, version 2017.11.29 (api/legacy_global_tables.py) ----


class GlobalTableNotFoundException(DynamoError):
    pass


class GlobalTableAlreadyExistsException(DynamoError):
    pass


class ReplicaAlreadyExistsException(DynamoError):
    pass


class ReplicaNotFoundException(DynamoError):
    pass


class IndexNotFoundException(DynamoError):
    pass


class TableInUseException(DynamoError):
    pass


class ContinuousBackupsUnavailableException(DynamoError):
    pass


class PointInTimeRecoveryUnavailableException(DynamoError):
    pass


class InvalidRestoreTimeException(DynamoError):
    pass


# ---- on-demand backups (api/backups.py) ----


class BackupInUseException(DynamoError):
    pass


class BackupNotFoundException(DynamoError):
    pass


class InternalServerError(DynamoError):
    status = 500
    default_message = "Internal server error"


class ServiceUnavailable(DynamoError):
    """DynamoDB's 503, "currently unavailable (this should be a temporary state)": the request was not carried
    out and may be retried as it is."""

    status = 503


# ---- export to and import from S3 ----------------------------------------------------------------------------


class InvalidExportTimeException(DynamoError):
    pass


class ExportConflictException(DynamoError):
    pass


class ExportNotFoundException(DynamoError):
    pass


class ImportConflictException(DynamoError):
    pass


class ImportNotFoundException(DynamoError):
    pass
