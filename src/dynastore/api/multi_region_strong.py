"""The control plane of multi-Region strong consistency (MRSC): UpdateTable's MultiRegionConsistency and
GlobalTableWitnessUpdates, and what a strongly consistent global table refuses elsewhere (time to live,
transactions).

The Developer Guide ("How DynamoDB global tables work", Multi-Region strong consistency) sets the rules:

* the mode is chosen when a table becomes a global table and never changes after;
* an MRSC global table has exactly three Regions: it is made from an existing, empty table by adding two
  replicas, or one replica and a witness (a Region that holds the replicated log and serves no table);
* every Region is in one Region set (``REGION_SETS``); the witness is in a Region of neither replica;
* replicas cannot be added later; a single replica or the witness cannot be deleted: the two other replicas,
  or one replica and the witness, are deleted together, leaving a single-Region table (so DeleteTable of a
  replica whose set is still there is refused too);
* time to live and local secondary indexes are not supported, nor are transactions (an error);
* unlike MREC, replication does not read the table's stream: no stream is required.

``check_request`` holds the rules that need no table (api/replica_updates.py calls it); ``create_strong`` and
``delete_strong`` check the table and hand the change to global_tables/replicas.py. Where DynamoDB's text for a
refusal is not public, messages.py words it (docs/global-tables.md lists which).
"""

from __future__ import annotations

from typing import Any

from dynastore import messages
from dynastore.api.table_requests import invalid
from dynastore.engine.context import Context
from dynastore.errors import ValidationException
from dynastore.model.table_schema import ACTIVE, TableDef

__all__ = [
    "REGION_SETS",
    "STRONG",
    "check_consistency_settable",
    "check_region_set",
    "check_replica_addable",
    "check_request",
    "check_strong_deletes",
    "check_strong_table",
    "check_table_deletable",
    "check_transaction_table",
    "check_ttl_enable",
    "region_set",
    "replica_deletes",
    "strong_creates",
    "witness_action",
]

STRONG = "STRONG"
# The Region sets of MRSC global tables (the Developer Guide; the API Reference's
# CreateGlobalTableWitnessGroupMemberAction): US, EU, AP.
REGION_SETS: tuple[frozenset[str], ...] = (
    frozenset({"us-east-1", "us-east-2", "us-west-2"}),
    frozenset({"eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"}),
    frozenset({"ap-northeast-1", "ap-northeast-2", "ap-northeast-3"}),
)
_WITNESS_ACTIONS = ("Create", "Delete")


# ---- the request (no table) ------------------------------------------------------------------------------


def witness_action(req: dict[str, Any]) -> tuple[str, str] | None:
    """(``Create`` / ``Delete``, its region) of the request's one GlobalTableWitnessGroupUpdate (None: none);
    a group update without an action or with both is refused."""
    updates: list[dict[str, Any]] = req.get("GlobalTableWitnessUpdates") or []
    if not updates:
        return None
    update = updates[0]  # the list holds one at most (api/schemas.py)
    present = [a for a in _WITNESS_ACTIONS if update.get(a) is not None]
    if not present:
        raise invalid(messages.WITNESS_UPDATE_NO_ACTION)
    if len(present) > 1:
        raise invalid(messages.WITNESS_UPDATE_MANY_ACTIONS)
    return present[0], str(update[present[0]]["RegionName"])


def strong_creates(req: dict[str, Any]) -> list[str]:
    """The regions of the request's ReplicaUpdates Create actions."""
    return [u["Create"]["RegionName"] for u in req.get("ReplicaUpdates") or [] if u.get("Create") is not None]


def replica_deletes(req: dict[str, Any]) -> list[str]:
    """The regions of the request's ReplicaUpdates Delete actions."""
    return [u["Delete"]["RegionName"] for u in req.get("ReplicaUpdates") or [] if u.get("Delete") is not None]


def check_request(req: dict[str, Any], region: str) -> None:
    """The MRSC rules that need no table (``region``: the caller's), after every ReplicationGroupUpdate was
    found to hold one action: MultiRegionConsistency only with Create actions; STRONG with exactly three
    Regions of one Region set; a witness created only with STRONG and deleted only with one replica."""
    consistency = req.get("MultiRegionConsistency")
    witness = witness_action(req)
    updates: list[dict[str, Any]] = req.get("ReplicaUpdates") or []
    creates = strong_creates(req)
    if consistency is not None and not creates:
        raise invalid(messages.MRSC_CONSISTENCY_WITHOUT_CREATE)
    if consistency == STRONG:
        _check_strong_creation(region, updates, creates, witness)
    elif witness is not None and witness[0] == "Create":
        raise invalid(messages.WITNESS_WITHOUT_STRONG)
    elif witness is not None and (len(updates) != 1 or updates[0].get("Delete") is None):
        raise invalid(messages.WITNESS_DELETE_ALONE)


def _check_strong_creation(
    region: str, updates: list[dict[str, Any]], creates: list[str], witness: tuple[str, str] | None
) -> None:
    witness_created = witness is not None and witness[0] == "Create"
    three = len(creates) == len(updates) and (
        (len(creates) == 2 and witness is None) or (len(creates) == 1 and witness_created)
    )
    if not three:
        raise invalid(messages.MRSC_THREE_REGIONS)
    if len(set(creates)) != len(creates):
        raise invalid(messages.MRSC_DUPLICATE_REGION.format(region=creates[0]))
    if witness is not None and (witness[1] == region or witness[1] in creates):
        raise invalid(messages.WITNESS_SAME_REGION.format(region=witness[1]))


def check_region_set(region: str, others: list[str]) -> None:
    """Every one of ``others`` in the Region set of ``region`` (the caller's), which must have one. Run after
    the region names were checked (api/replica_updates.py)."""
    home = region_set(region)
    if home is None:
        raise invalid(messages.MRSC_REGION_UNSUPPORTED.format(region=region))
    for other in others:
        if other not in home:
            if region_set(other) is None:
                raise invalid(messages.MRSC_REGION_UNSUPPORTED.format(region=other))
            raise invalid(messages.MRSC_REGION_SET.format(local=region, region=other))


def region_set(region: str) -> frozenset[str] | None:
    for regions in REGION_SETS:
        if region in regions:
            return regions
    return None


# ---- against the table ---------------------------------------------------------------------------------


def check_consistency_settable(td: TableDef) -> None:
    """MultiRegionConsistency is set when a table becomes global, never on one that has replicas."""
    if td.replicas:
        raise ValidationException(messages.MRSC_CONSISTENCY_UNCHANGEABLE.format(name=td.name), bare=True)


def check_strong_table(ctx: Context, td: TableDef) -> None:
    """What a table must be to become an MRSC global table: empty (its live item count), without local
    secondary indexes, without time to live."""
    items, _ = ctx.catalog.stats(td.name)
    if items:
        raise ValidationException(messages.MRSC_TABLE_NOT_EMPTY.format(name=td.name), bare=True)
    if td.lsis:
        raise ValidationException(messages.MRSC_LSI.format(name=td.name), bare=True)
    if td.ttl is not None and td.ttl.enabled:
        raise ValidationException(messages.MRSC_TTL_ENABLED.format(name=td.name), bare=True)


def check_strong_deletes(td: TableDef, deletes: list[str], witness: tuple[str, str] | None) -> None:
    """A deletion from an MRSC global table takes away both other replicas, or one replica and the witness;
    a witness deletion needs the table's witness. Each replica's existence is checked after."""
    if witness is not None and witness[1] != td.witness_region:
        raise ValidationException(messages.WITNESS_NOT_FOUND.format(name=td.name, region=witness[1]), bare=True)
    if not td.is_strong:
        if len(deletes) > 1:
            raise invalid(messages.REPLICA_UPDATES_ONE_AT_A_TIME)
        return
    together = (len(deletes) == 2 and witness is None) or (len(deletes) == 1 and witness is not None)
    if not together:
        raise ValidationException(messages.MRSC_DELETE.format(name=td.name), bare=True)


def check_replica_addable(td: TableDef) -> None:
    """An MRSC global table keeps the Regions it was created in."""
    if td.is_strong:
        raise ValidationException(messages.MRSC_ADD_REPLICA.format(name=td.name), bare=True)


# ---- elsewhere ------------------------------------------------------------------------------------------


def check_table_deletable(ctx: Context, name: str) -> None:
    """DeleteTable of an ACTIVE MRSC replica would take a single Region out of its three: refused while the
    table has replicas (the other states are the catalog's to refuse)."""
    td = ctx.catalog.find(name)
    if td is not None and td.status == ACTIVE and td.is_strong and td.replicas:
        raise ValidationException(messages.MRSC_DELETE_TABLE.format(name=td.name), bare=True)


def check_ttl_enable(td: TableDef) -> None:
    """UpdateTimeToLive cannot enable time to live on an MRSC global table."""
    if td.is_strong:
        raise ValidationException(messages.MRSC_TTL.format(name=td.name), bare=True)


def check_transaction_table(td: TableDef) -> None:
    """Transactions (TransactWriteItems, TransactGetItems, ExecuteTransaction) refuse an MRSC global table
    (DynamoDB documents an error and not its type: a ValidationException)."""
    if td.is_strong:
        raise ValidationException(messages.MRSC_TRANSACTION.format(name=td.name), bare=True)
