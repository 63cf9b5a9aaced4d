"""Where a call runs and who makes it: the two small values that travel with every engine call (engine/context.py).

``Namespace``: tables live per account and region, as in DynamoDB; a table belongs to exactly one namespace and its
ARN names it. ``Origin``: who makes a call, as the engine and what follows the change log (stream records, a
replicator, an audit) may know it: a client's principal, set at dispatch from the authenticated caller, or the
service itself (``SERVICE``: TTL deletions, and every other piece of background work).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["SERVICE", "SERVICE_PRINCIPAL", "Namespace", "Origin"]

# The principal DynamoDB names as the author of its own changes (a TTL deletion's userIdentity in a stream record).
SERVICE_PRINCIPAL = "dynamodb.amazonaws.com"


class Namespace(NamedTuple):
    """An account's tables in one region. A tuple: it compares and hashes as ``(account_id, region)`` does."""

    account_id: str
    region: str

    def table_arn(self, table_name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.account_id}:table/{table_name}"


@dataclass(frozen=True, slots=True)
class Origin:
    """Who makes a call. ``arn``: the principal as IAM names it (``arn:aws:iam::<account>:user/<name>``, or the
    service's principal); ``user_id``: its ``aws:userid``; ``account_id``: the principal's account (not always the
    namespace's: a cross-account request runs in the table's); ``is_service``: the service itself made the call."""

    arn: str
    user_id: str = ""
    account_id: str = ""
    is_service: bool = False


SERVICE = Origin(SERVICE_PRINCIPAL, SERVICE_PRINCIPAL, is_service=True)
