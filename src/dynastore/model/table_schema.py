"""Table metadata as frozen values: key schema, indexes, throughput, billing, streams, SSE, TTL, tags.

A ``TableDef`` is immutable; every control-plane change builds a new one (``dataclasses.replace``) and the
catalog swaps it in. Lifecycle transitions are *lazy*: a transitional status (CREATING, UPDATING) carries the
time it ends (``status_until``) and ``settle(now)`` returns the table as it is at ``now``. Nothing has to run
when the time passes, and a persisted ``CREATING until T`` record means ``ACTIVE`` once ``T`` is behind us.

``to_record``/``from_record`` give the JSON-able form the catalog stores; api/table_description.py builds
DynamoDB's wire ``TableDescription`` from these values.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from dynastore.model.warm_throughput import WarmThroughput

__all__ = [
    "ACTIVE",
    "CREATING",
    "DELETING",
    "UPDATING",
    "ZERO_THROUGHPUT",
    "BillingMode",
    "IndexDef",
    "KeyAttr",
    "KeySchema",
    "OnDemandThroughput",
    "PitrSpec",
    "Projection",
    "ProvisionedThroughput",
    "ReplicaDef",
    "RestoreSummary",
    "SSE",
    "StreamSpec",
    "TableDef",
    "TtlSpec",
    "table_arn",
]

CREATING: Final = "CREATING"
UPDATING: Final = "UPDATING"
DELETING: Final = "DELETING"
ACTIVE: Final = "ACTIVE"

_DAY = 86400


class BillingMode(StrEnum):
    PROVISIONED = "PROVISIONED"
    PAY_PER_REQUEST = "PAY_PER_REQUEST"


def table_arn(region: str, account_id: str, name: str) -> str:
    return f"arn:aws:dynamodb:{region}:{account_id}:table/{name}"


@dataclass(frozen=True, slots=True)
class KeyAttr:
    """A key attribute: its name and scalar type ("S", "N" or "B")."""

    name: str
    type: str


@dataclass(frozen=True, slots=True)
class KeySchema:
    """A key schema. Tables and LSIs have one partition attribute and at most one sort attribute; a GSI may
    have up to four of each (DynamoDB's multi-attribute keys): ``hash_key``/``range_key`` are the first of
    each, ``more_hash``/``more_range`` the others in KeySchema order. ``hash_keys``/``range_keys`` give all."""

    hash_key: KeyAttr
    range_key: KeyAttr | None = None
    more_hash: tuple[KeyAttr, ...] = ()
    more_range: tuple[KeyAttr, ...] = ()

    @property
    def hash_keys(self) -> tuple[KeyAttr, ...]:
        return (self.hash_key, *self.more_hash)

    @property
    def range_keys(self) -> tuple[KeyAttr, ...]:
        return () if self.range_key is None else (self.range_key, *self.more_range)

    @property
    def attributes(self) -> tuple[KeyAttr, ...]:
        """Every key attribute, partition attributes first, in KeySchema order."""
        return self.hash_keys + self.range_keys

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.attributes)

    @property
    def is_multi_attribute(self) -> bool:
        return bool(self.more_hash or self.more_range)

    def to_record(self) -> list[list[str]]:
        if not self.is_multi_attribute:
            return [[k.name, k.type] for k in self.attributes]
        # Multi-attribute keys name each element's role (the classic form is positional).
        return [[k.name, k.type, "H"] for k in self.hash_keys] + [[k.name, k.type, "R"] for k in self.range_keys]

    @classmethod
    def from_record(cls, rec: list[list[str]]) -> KeySchema:
        if any(len(entry) > 2 for entry in rec):
            hashes = tuple(KeyAttr(e[0], e[1]) for e in rec if e[2] == "H")
            ranges = tuple(KeyAttr(e[0], e[1]) for e in rec if e[2] == "R")
            return cls(hashes[0], ranges[0] if ranges else None, hashes[1:], ranges[1:])
        hash_key = KeyAttr(rec[0][0], rec[0][1])
        range_key = KeyAttr(rec[1][0], rec[1][1]) if len(rec) > 1 else None
        return cls(hash_key, range_key)


@dataclass(frozen=True, slots=True)
class Projection:
    type: str  # "ALL" | "KEYS_ONLY" | "INCLUDE"
    non_key_attributes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProvisionedThroughput:
    read: int
    write: int
    last_increase: float | None = None
    last_decrease: float | None = None
    decreases_today: int = 0

    def decreases_on(self, now: float) -> int:
        """Decreases in the UTC day of ``now`` (the counter resets at midnight UTC)."""
        if self.last_decrease is None or int(self.last_decrease // _DAY) != int(now // _DAY):
            return 0
        return self.decreases_today

    def to_record(self) -> list[Any]:
        return [self.read, self.write, self.last_increase, self.last_decrease, self.decreases_today]

    @classmethod
    def from_record(cls, rec: list[Any]) -> ProvisionedThroughput:
        return cls(rec[0], rec[1], rec[2], rec[3], rec[4])


ZERO_THROUGHPUT = ProvisionedThroughput(0, 0)


@dataclass(frozen=True, slots=True)
class OnDemandThroughput:
    max_read: int | None = None
    max_write: int | None = None


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """The table's stream. ``label`` is the latest stream's label; it outlives a disable (as in DynamoDB)."""

    enabled: bool
    view_type: str | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class SSE:
    """Server-side encryption with a KMS key (the default AWS-owned-key encryption is ``sse=None``)."""

    sse_type: str
    kms_key_arn: str


@dataclass(frozen=True, slots=True)
class TtlSpec:
    attribute_name: str
    enabled: bool


@dataclass(frozen=True, slots=True)
class PitrSpec:
    """Point-in-time recovery, while it is on (``TableDef.pitr`` is None while it is off): how many days back a
    table can be restored to, and when it was turned on (the earliest restorable time until that many days
    have passed; turning it off and on again starts anew, as in DynamoDB)."""

    recovery_days: int
    enabled_at: float

    def to_record(self) -> list[Any]:
        return [self.recovery_days, self.enabled_at]

    @classmethod
    def from_record(cls, rec: list[Any] | None) -> PitrSpec | None:
        return None if rec is None else cls(int(rec[0]), float(rec[1]))


@dataclass(frozen=True, slots=True)
class IndexDef:
    name: str
    kind: str  # "LSI" | "GSI"
    key_schema: KeySchema
    projection: Projection
    index_id: int
    throughput: ProvisionedThroughput | None = None  # GSI only; None for LSI
    on_demand: OnDemandThroughput | None = None
    status: str = ACTIVE
    backfilling: bool = False
    pending_throughput: ProvisionedThroughput | None = None
    online: bool = False  # added by UpdateTable (DescribeTable shows Backfilling only for those)
    item_count: int = 0  # as last persisted; the catalog keeps the live counters (like the table's)
    size_bytes: int = 0
    warm: WarmThroughput | None = None  # GSI only: as configured (model/warm_throughput.py)

    @property
    def readable(self) -> bool:
        """Query and Scan may read it: ACTIVE, or UPDATING its throughput after the backfill."""
        return self.status == ACTIVE or (self.status == UPDATING and not self.backfilling)

    def settle(self) -> IndexDef | None:
        """The index once its transition is over; None when it was being deleted."""
        if self.status == DELETING:
            return None
        if self.backfilling:
            return self  # a new GSI stays CREATING until its backfill copied every item (engine/indexes.py)
        if self.status == ACTIVE and self.pending_throughput is None:
            return self
        throughput = self.pending_throughput if self.pending_throughput is not None else self.throughput
        return dataclasses.replace(
            self, status=ACTIVE, backfilling=False, throughput=throughput, pending_throughput=None
        )

    def to_record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "keys": self.key_schema.to_record(),
            "projection": [self.projection.type, list(self.projection.non_key_attributes)],
            "id": self.index_id,
            "pt": None if self.throughput is None else self.throughput.to_record(),
            "odt": None if self.on_demand is None else [self.on_demand.max_read, self.on_demand.max_write],
            "status": self.status,
            "backfilling": self.backfilling,
            "pending": None if self.pending_throughput is None else self.pending_throughput.to_record(),
            "online": self.online,
            "items": self.item_count,
            "bytes": self.size_bytes,
            "warm": None if self.warm is None else self.warm.to_record(),
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> IndexDef:
        return cls(
            name=rec["name"],
            kind=rec["kind"],
            key_schema=KeySchema.from_record(rec["keys"]),
            projection=Projection(rec["projection"][0], tuple(rec["projection"][1])),
            index_id=rec["id"],
            throughput=None if rec["pt"] is None else ProvisionedThroughput.from_record(rec["pt"]),
            on_demand=None if rec["odt"] is None else OnDemandThroughput(rec["odt"][0], rec["odt"][1]),
            status=rec["status"],
            backfilling=rec["backfilling"],
            pending_throughput=None if rec["pending"] is None else ProvisionedThroughput.from_record(rec["pending"]),
            online=rec.get("online", False),
            item_count=rec.get("items", 0),
            size_bytes=rec.get("bytes", 0),
            warm=WarmThroughput.from_record(rec.get("warm")),
        )


@dataclass(frozen=True, slots=True)
class RestoreSummary:
    """Where a restored table came from (DescribeTable's RestoreSummary): a backup's ARN (None for a restore to a
    point in time), the source table's ARN, the time restored from, and whether its data is still being loaded."""

    source_backup_arn: str | None
    source_table_arn: str | None
    restored_at: float
    in_progress: bool

    def to_record(self) -> list[Any]:
        return [self.source_backup_arn, self.source_table_arn, self.restored_at, self.in_progress]

    @classmethod
    def from_record(cls, rec: list[Any] | None) -> RestoreSummary | None:
        return None if rec is None else cls(rec[0], rec[1], rec[2], rec[3])


@dataclass(frozen=True, slots=True)
class ReplicaDef:
    """One other region of a global table's replica set, as this table's definition lists it (DescribeTable's
    Replicas: every region of the set but the table's own). ``status``: CREATING, ACTIVE, UPDATING, DELETING,
    CREATION_FAILED, REGION_DISABLED or INACCESSIBLE_ENCRYPTION_CREDENTIALS; ``progress``: the
    ReplicaStatusPercentProgress while CREATING; ``gsi_overrides``: (index name, read capacity override or None);
    ``max_read_override`` and ``gsi_max_read_overrides`` (index name, units): an on-demand replica's
    OnDemandThroughputOverride MaxReadRequestUnits, of the table and of its GSIs; ``overrides_version``: when the
    replica's own settings (the overrides and the table class) were last set, as (milliseconds, region that set
    them): every region's list takes the newest, and so does the replica's table
    (``TableDef.own_overrides_version``)."""

    region: str
    status: str = CREATING
    status_description: str | None = None
    read_capacity_override: int | None = None
    gsi_overrides: tuple[tuple[str, int | None], ...] = ()
    table_class: str | None = None
    progress: str | None = None
    overrides_version: tuple[int, str] | None = None
    max_read_override: int | None = None
    gsi_max_read_overrides: tuple[tuple[str, int], ...] = ()

    def to_record(self) -> list[Any]:
        overrides = [list(o) for o in self.gsi_overrides]
        return [
            self.region,
            self.status,
            self.status_description,
            self.read_capacity_override,
            overrides,
            self.table_class,
            self.progress,
            None if self.overrides_version is None else list(self.overrides_version),
            self.max_read_override,
            [list(o) for o in self.gsi_max_read_overrides],
        ]

    @classmethod
    def from_record(cls, rec: list[Any]) -> ReplicaDef:
        overrides = tuple((str(o[0]), o[1]) for o in rec[4])
        # (records written before versions, or on-demand overrides, were kept are shorter)
        version = rec[7] if len(rec) > 7 else None
        max_reads = _named_units(rec[9]) if len(rec) > 9 else ()
        return cls(
            rec[0],
            rec[1],
            rec[2],
            rec[3],
            overrides,
            rec[5],
            rec[6],
            None if version is None else _version(version),
            rec[8] if len(rec) > 8 else None,
            max_reads,
        )


@dataclass(frozen=True, slots=True)
class TableDef:
    """Everything the server knows about one table.

    ``table_id`` is an integer unique for the life of the data directory (never reused, so a recreated table
    never sees the old table's keys); index ids come from the same sequence. ``uuid`` is the wire ``TableId``.
    ``item_count``/``size_bytes`` are the values last persisted; the catalog keeps the live counters.
    """

    name: str
    table_id: int
    uuid: str
    key_schema: KeySchema
    attribute_definitions: tuple[KeyAttr, ...]
    created_at: float
    billing_mode: BillingMode = BillingMode.PROVISIONED
    billing_mode_explicit: bool = False
    last_update_to_pay_per_request: float | None = None
    throughput: ProvisionedThroughput = ZERO_THROUGHPUT
    pending_throughput: ProvisionedThroughput | None = None
    on_demand: OnDemandThroughput | None = None
    lsis: tuple[IndexDef, ...] = ()
    gsis: tuple[IndexDef, ...] = ()
    stream: StreamSpec | None = None
    sse: SSE | None = None
    table_class: str | None = None
    table_class_updated_at: float | None = None
    deletion_protection: bool = False
    tags: tuple[tuple[str, str], ...] = ()
    ttl: TtlSpec | None = None
    status: str = ACTIVE
    status_until: float | None = None
    item_count: int = 0
    size_bytes: int = 0
    warm: WarmThroughput | None = None  # as configured (model/warm_throughput.py)
    # Resource-based policies (docs/security.md "Policies"): the table's as (policy JSON, revision id), its
    # stream's as (stream label, policy JSON, revision id); a stream's policy belongs to that stream only.
    resource_policy: tuple[str, str] | None = None
    stream_policy: tuple[str, str, str] | None = None
    # A table made by a restore: where it came from and whether its data is still loading (engine/restore.py).
    restore: RestoreSummary | None = None
    pitr: PitrSpec | None = None  # point-in-time recovery (engine/point_in_time.py), None while off
    # Global tables (global_tables/): the other regions of the table's replica set, and the version of global
    # tables it is ("2019.11.21" once it has had a replica, "2017.11.29" a member of a legacy global table made
    # with CreateGlobalTable), and when that legacy global table was created.
    replicas: tuple[ReplicaDef, ...] = ()
    global_table_version: str | None = None
    global_table_created_at: float | None = None
    # The version (hybrid clock stamp, region) of the settings every replica of a global table shares (GSIs,
    # billing mode, write capacity, on-demand and warm throughput, time to live), set when a change of them is
    # announced or received (None until one is), and the digest of those settings as of that version: settings
    # that no longer match it were changed in this region since (global_tables/replicas.py ``synchronized_settings``).
    settings_version: tuple[int, str] | None = None
    settings_digest: str | None = None
    # The version of this replica's own settings (``ReplicaDef.overrides_version``) it last took from the list of
    # another region of its set (None: none taken since it was created without overrides).
    own_overrides_version: tuple[int, str] | None = None
    # That replica's own MaxReadRequestUnits (OnDemandThroughputOverride), of the table and of its GSIs (index
    # name, units): they win over ``on_demand``'s, which stays the set's (``on_demand_of``).
    own_max_read: int | None = None
    own_gsi_max_reads: tuple[tuple[str, int], ...] = ()
    # Multi-region strong consistency (MultiRegionConsistency STRONG, global_tables/strong.py): the id of the
    # strong log every replica of the set commits its writes to (None: the table is not an MRSC global table),
    # and the set's witness region (it holds the log and serves no table) if it has one.
    strong_log: str | None = None
    witness_region: str | None = None

    # ---- lookups ------------------------------------------------------------------------------------------
    def attribute_type(self, name: str) -> str | None:
        for attr in self.attribute_definitions:
            if attr.name == name:
                return attr.type
        return None

    def index(self, name: str) -> IndexDef | None:
        for idx in self.lsis + self.gsis:
            if idx.name == name:
                return idx
        return None

    def on_demand_of(self, index: IndexDef | None = None) -> OnDemandThroughput | None:
        """The on-demand throughput of the table (``index`` None) or of one of its GSIs as it applies here: the
        set's, with this replica's own MaxReadRequestUnits where it overrides them (while it is on demand: on a
        set switched to provisioned capacity they are kept, and apply to nothing)."""
        on_demand = self.on_demand if index is None else index.on_demand
        own = self.own_max_read if index is None else dict(self.own_gsi_max_reads).get(index.name)
        if own is None or self.billing_mode is BillingMode.PROVISIONED:
            return on_demand
        return OnDemandThroughput(own, None if on_demand is None else on_demand.max_write)

    def index_ids(self) -> tuple[int, ...]:
        return tuple(idx.index_id for idx in self.lsis + self.gsis)

    def replica(self, region: str) -> ReplicaDef | None:
        for replica in self.replicas:
            if replica.region == region:
                return replica
        return None

    @property
    def is_strong(self) -> bool:
        """Whether the table is a replica of a global table with multi-region strong consistency."""
        return self.strong_log is not None

    @property
    def is_active(self) -> bool:
        return self.status in (ACTIVE, UPDATING)

    # ---- lifecycle ----------------------------------------------------------------------------------------
    def settle(self, now: float) -> TableDef:
        """The table as it is at ``now``: a CREATING/UPDATING transition whose time has passed is over."""
        if self.status not in (CREATING, UPDATING) or self.status_until is None or now < self.status_until:
            return self
        throughput = self.throughput
        if self.pending_throughput is not None:
            throughput = self.pending_throughput
        gsis = tuple(s for s in (g.settle() for g in self.gsis) if s is not None)
        attribute_definitions = self.attribute_definitions
        if len(gsis) < len(self.gsis):
            # A deleted GSI's key attributes leave AttributeDefinitions unless another key still uses them.
            used = set(self.key_schema.names)
            for idx in self.lsis + gsis:
                used.update(idx.key_schema.names)
            attribute_definitions = tuple(a for a in attribute_definitions if a.name in used)
        return dataclasses.replace(
            self,
            status=ACTIVE,
            status_until=None,
            throughput=throughput,
            pending_throughput=None,
            gsis=gsis,
            attribute_definitions=attribute_definitions,
        )

    # ---- persistence --------------------------------------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        return {
            "kind": "table",
            "v": 1,
            "name": self.name,
            "id": self.table_id,
            "uuid": self.uuid,
            "keys": self.key_schema.to_record(),
            "attrs": [[a.name, a.type] for a in self.attribute_definitions],
            "created": self.created_at,
            "billing": self.billing_mode.value,
            "billing_explicit": self.billing_mode_explicit,
            "ppr_at": self.last_update_to_pay_per_request,
            "pt": self.throughput.to_record(),
            "pending_pt": None if self.pending_throughput is None else self.pending_throughput.to_record(),
            "odt": None if self.on_demand is None else [self.on_demand.max_read, self.on_demand.max_write],
            "lsis": [i.to_record() for i in self.lsis],
            "gsis": [i.to_record() for i in self.gsis],
            "stream": None if self.stream is None else [self.stream.enabled, self.stream.view_type, self.stream.label],
            "sse": None if self.sse is None else [self.sse.sse_type, self.sse.kms_key_arn],
            "class": self.table_class,
            "class_at": self.table_class_updated_at,
            "dp": self.deletion_protection,
            "tags": [list(t) for t in self.tags],
            "ttl": None if self.ttl is None else [self.ttl.attribute_name, self.ttl.enabled],
            "status": self.status,
            "until": self.status_until,
            "items": self.item_count,
            "bytes": self.size_bytes,
            "warm": None if self.warm is None else self.warm.to_record(),
            "policy": None if self.resource_policy is None else list(self.resource_policy),
            "stream_policy": None if self.stream_policy is None else list(self.stream_policy),
            "restore": None if self.restore is None else self.restore.to_record(),
            "pitr": None if self.pitr is None else self.pitr.to_record(),
            "replicas": [r.to_record() for r in self.replicas],
            "gtv": self.global_table_version,
            "gtc": self.global_table_created_at,
            "gsv": None if self.settings_version is None else list(self.settings_version),
            "gsd": self.settings_digest,
            "oov": None if self.own_overrides_version is None else list(self.own_overrides_version),
            "omr": self.own_max_read,
            "ogmr": [list(o) for o in self.own_gsi_max_reads],
            "slog": self.strong_log,
            "wit": self.witness_region,
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> TableDef:
        stream = rec["stream"]
        odt = rec["odt"]
        return cls(
            name=rec["name"],
            table_id=rec["id"],
            uuid=rec["uuid"],
            key_schema=KeySchema.from_record(rec["keys"]),
            attribute_definitions=tuple(KeyAttr(n, t) for n, t in rec["attrs"]),
            created_at=rec["created"],
            billing_mode=BillingMode(rec["billing"]),
            billing_mode_explicit=rec["billing_explicit"],
            last_update_to_pay_per_request=rec["ppr_at"],
            throughput=ProvisionedThroughput.from_record(rec["pt"]),
            pending_throughput=None
            if rec["pending_pt"] is None
            else ProvisionedThroughput.from_record(rec["pending_pt"]),
            on_demand=None if odt is None else OnDemandThroughput(odt[0], odt[1]),
            lsis=tuple(IndexDef.from_record(i) for i in rec["lsis"]),
            gsis=tuple(IndexDef.from_record(i) for i in rec["gsis"]),
            stream=None if stream is None else StreamSpec(stream[0], stream[1], stream[2]),
            sse=None if rec["sse"] is None else SSE(rec["sse"][0], rec["sse"][1]),
            table_class=rec["class"],
            table_class_updated_at=rec["class_at"],
            deletion_protection=rec["dp"],
            tags=tuple((k, v) for k, v in rec["tags"]),
            ttl=None if rec["ttl"] is None else TtlSpec(rec["ttl"][0], rec["ttl"][1]),
            status=rec["status"],
            status_until=rec["until"],
            item_count=rec["items"],
            size_bytes=rec["bytes"],
            warm=WarmThroughput.from_record(rec.get("warm")),
            resource_policy=None if rec.get("policy") is None else (rec["policy"][0], rec["policy"][1]),
            stream_policy=None if rec.get("stream_policy") is None else _stream_policy(rec["stream_policy"]),
            restore=RestoreSummary.from_record(rec.get("restore")),
            pitr=PitrSpec.from_record(rec.get("pitr")),
            replicas=tuple(ReplicaDef.from_record(r) for r in rec.get("replicas", ())),
            global_table_version=rec.get("gtv"),
            global_table_created_at=rec.get("gtc"),
            settings_version=None if rec.get("gsv") is None else _version(rec["gsv"]),
            settings_digest=rec.get("gsd"),
            own_overrides_version=None if rec.get("oov") is None else _version(rec["oov"]),
            own_max_read=rec.get("omr"),
            own_gsi_max_reads=_named_units(rec.get("ogmr") or []),
            strong_log=rec.get("slog"),
            witness_region=rec.get("wit"),
        )

    # ---- names --------------------------------------------------------------------------------------------
    def arn(self, region: str, account_id: str) -> str:
        return table_arn(region, account_id, self.name)


def _stream_policy(rec: list[str]) -> tuple[str, str, str]:
    return rec[0], rec[1], rec[2]


def _version(record: list[Any]) -> tuple[int, str]:
    """A (stamp, region) version from its record."""
    return int(record[0]), str(record[1])


def _named_units(record: list[list[Any]]) -> tuple[tuple[str, int], ...]:
    """(index name, units) pairs from their record."""
    return tuple((str(name), int(units)) for name, units in record)
