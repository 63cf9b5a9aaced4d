"""Every DynamoDB numeric limit, named once."""

from __future__ import annotations

from typing import Final

MAX_ITEM_BYTES: Final = 400 * 1024
MAX_HASH_KEY_BYTES = 2048
MAX_RANGE_KEY_BYTES = 1024
MAX_EXPRESSION_BYTES = 4096
MAX_EXPRESSION_OPERATORS = 300
MAX_PLACEHOLDER_BYTES = 255
MAX_PATH_DEPTH = 32
MAX_LIST_INDEX = 4294967294  # a larger [index] in a document path: "List index is not within the allowable range"
MAX_NESTING_DEPTH = 32
MAX_BATCH_WRITE = 25
MAX_BATCH_GET = 100
MAX_TRANSACT_ITEMS = 100
MAX_PAGE_BYTES = 1024 * 1024
MAX_REQUEST_BYTES = 16 * 1024 * 1024
MAX_BATCH_GET_RESPONSE_BYTES = 16 * 1024 * 1024

NUMBER_MAX_DIGITS = 38
NUMBER_MAX_EXPONENT = 125
NUMBER_MIN_EXPONENT = -130

TABLE_NAME_MIN = 3
TABLE_NAME_MAX = 255
MAX_LSI_PER_TABLE = 5
MAX_GSI_PER_TABLE = 20
MAX_PROJECTED_NON_KEY_ATTRIBUTES = 100
MAX_GSI_KEY_ATTRIBUTES = 4  # multi-attribute GSI keys: up to 4 partition and 4 sort attributes
MAX_PARTIQL_KEY_PARTITIONS = 100  # a SELECT naming more combinations of multi-attribute partition values scans
MAX_TAGS_PER_RESOURCE = 50

READ_UNIT_BYTES: Final = 4 * 1024
WRITE_UNIT_BYTES: Final = 1024

# Account and table quotas reported by DescribeLimits (DynamoDB's defaults).
ACCOUNT_MAX_READ_CAPACITY = 80000
ACCOUNT_MAX_WRITE_CAPACITY = 80000
TABLE_MAX_READ_CAPACITY = 40000
TABLE_MAX_WRITE_CAPACITY = 40000
MAX_TABLES_PER_ACCOUNT = 2500
MAX_THROUGHPUT_DECREASES_PER_DAY = 27

PARTITION_MAX_RCU = 3000
PARTITION_MAX_WCU = 1000
PARTITION_MAX_BYTES = 10 * 1024 * 1024 * 1024

# Transactions.
MAX_TRANSACT_PAYLOAD_BYTES = 4 * 1024 * 1024  # items plus expressions of one TransactWriteItems
CLIENT_TOKEN_TTL_SECONDS = 600  # a ClientRequestToken is remembered this long after its request finished
TOKEN_SWEEP_PER_WRITE = 8  # expired tokens forgotten by each TransactWriteItems that stores one

# Capacity model (engine/capacity/partitions.py, engine/capacity/buckets.py; see docs/capacity.md).
BURST_SECONDS = 300  # unused capacity a partition retains for bursts
PARTITION_SLACK_WRITE_UNITS = 1  # throughput within one write unit of a partition boundary needs no new partition
ON_DEMAND_INITIAL_READ = 12000  # what a new on-demand table sustains at once (read request units/s)
ON_DEMAND_INITIAL_WRITE = 4000  # (write request units/s)
ADAPTIVE_CAPACITY_DELAY = 300.0  # seconds a partition throttles before adaptive capacity lifts it (default)
THROUGHPUT_FREE_DECREASES = 4  # decreases per UTC day before the once-an-hour rule applies
THROUGHPUT_DECREASE_INTERVAL = 3600  # seconds between later decreases
CONTRIBUTOR_WINDOW_SECONDS = 3600  # how far back Contributor Insights counters reach
PARTITION_HISTORY_BUCKET_SECONDS = 5  # the resolution of each partition's kept use and throttles
PARTITION_HISTORY_SECONDS = 3600  # how far back they reach (720 buckets of 5 seconds)

# Streams (engine/changelog.py, engine/stream_shards.py; see docs/streams.md).
STREAM_RETENTION_SECONDS = 24 * 3600  # a stream record is readable this long; a disabled stream too
STREAM_ITERATOR_LIFETIME_SECONDS = 15 * 60  # a shard iterator expires this long after it was issued
STREAM_READ_MAX_BYTES = 1024 * 1024  # GetRecords returns at most this many bytes of records (one at least)
STREAM_SHARD_ROLLOVER_SECONDS = 4 * 3600  # an open shard is closed and succeeded by a child after this long
CHANGELOG_TRIM_RECORDS = 1000  # records a maintenance pass trims per storage transaction
CONTRIBUTOR_TOP = 10  # keys reported per rule by default

# Secondary indexes (engine/indexes.py, engine/changelog.py; see docs/indexes.md).
ITEM_COLLECTION_MAX_BYTES = 10 * 1024 * 1024 * 1024  # one partition key's items plus LSI entries (tables with LSIs)
GSI_BACKLOG_RECORDS_PER_TXN = 512  # backlog records applied per storage transaction by the propagator
GSI_READ_CATCH_UP_RECORDS = 8192  # at most this many pending backlog records applied by a GSI read before it reads
GSI_BACKFILL_ITEMS_PER_TXN = 256  # table items copied into a new GSI per storage transaction

# Connections (protocol/connections.py; docs/design.md "Limits and abuse"). DynamoDB refuses over 16 KB of headers;
# the rest bound what one client can make the server hold, sized so a 2-core, 1 GB machine stays up under abuse.
MAX_HEADER_BYTES = 16 * 1024  # request line and headers together
MAX_URL_BYTES = 8 * 1024
IDLE_TIMEOUT_SECONDS = 60.0  # a connection with no request under way (or output the client does not read)
HEADER_TIMEOUT_SECONDS = 10.0  # from a request's first byte to the end of its headers
BODY_TIMEOUT_SECONDS = 60.0  # from the end of the headers to the end of the body
MAX_CONNECTIONS = 4096  # and never more than the descriptor limit less RESERVED_DESCRIPTORS
RESERVED_DESCRIPTORS = 64  # kept for storage: log segments, LMDB's files, the lock file, the sync helper
MAX_BUFFERED_REQUEST_BYTES = 256 * 1024 * 1024  # request bodies held by all connections together
WRITE_BUFFER_BYTES = 1024 * 1024  # unsent output past which a connection's requests wait (backpressure)
MAX_HELD_RESPONSES: Final = 128  # responses of one connection waiting for durability before its reading pauses
# A stop (SIGTERM, SIGINT) lets the requests under way finish and their writes become durable for this long at
# most before the connections still open are closed (docs/operations.md "Stopping").
SHUTDOWN_GRACE_SECONDS = 5.0
# A what-if partition count (POST /dynastore/partitions): each simulated partition holds its own buckets and
# counters, about 3.4 KB built in about 15 microseconds, so 10,000 is about 34 MB and 0.15 s of the event loop
# (a table that large sustains 10 million write units a second); a million took 3.4 GB and 15 s.
MAX_AS_IF_PARTITIONS = 10_000
TABLE_ARN_MAX_LENGTH = 1024  # a TableName given as a table ARN (the service model's TableArn shape)
# The warm throughput every new table and GSI starts with (read / write units per second).
WARM_READ_UNITS = 12000
WARM_WRITE_UNITS = 4000
# Attribute names: 1 to 65,535 bytes of UTF-8 (a name of 64 KB itself is refused).
MAX_ATTRIBUTE_NAME_BYTES = 65535
# The reserve file a store keeps for a full disk (storage/disk_space.py): room for the batch in flight (up to
# 16 MB of writes, whose pages LMDB copies on write) and for the deletes that free space.
DISK_RESERVE_BYTES = 32 * 1024 * 1024

# ---- triggers (docs/triggers.md): Lambda's bounds for a DynamoDB event source mapping ---------------------------
TRIGGER_BATCH_SIZE_DEFAULT = 100
TRIGGER_BATCH_SIZE_MAX = 10_000
TRIGGER_BATCHING_WINDOW_MAX = 300  # seconds (MaximumBatchingWindowInSeconds)
TRIGGER_RETRY_ATTEMPTS_MAX = 10_000  # MaximumRetryAttempts (-1: until the record expires)
TRIGGER_RECORD_AGE_MIN = 60  # MaximumRecordAgeInSeconds (-1: until the record expires)
TRIGGER_RECORD_AGE_MAX = 604_800
TRIGGER_TIMEOUT_DEFAULT = 60.0  # seconds a command or HTTP delivery may take before it counts as failed
TRIGGER_RETRY_DELAY_DEFAULT = 1.0  # seconds before the first retry of a failed batch; doubled per retry
TRIGGER_RETRY_DELAY_MAX = 60.0

# Policies (docs/security.md "Policies"). A resource-based policy counts every byte of its text, whitespace too
# (DynamoDB's 20 KB); identity policies follow IAM's inline-policy quotas, which count characters but not
# whitespace: 2,048 for a user's policies, 5,120 for a group's (each the sum over that user's or group's policies).
MAX_RESOURCE_POLICY_BYTES = 20480
MAX_USER_POLICY_CHARS = 2048
MAX_GROUP_POLICY_CHARS = 5120
MAX_ROLE_POLICY_CHARS = 10_240  # IAM's quota of a role's inline policies (characters without whitespace)
MAX_TRUST_POLICY_CHARS = 2048  # IAM's default quota of a role's trust policy
ROLE_SESSION_SECONDS_MIN = 900  # STS AssumeRole*'s DurationSeconds: 15 minutes up to the role's maximum
ROLE_SESSION_SECONDS_DEFAULT = 3600
ROLE_MAX_SESSION_SECONDS = 43_200  # the largest MaxSessionDuration a role may have (12 hours)
SESSION_POLICY_PACKED_CHARS = 2048  # what a session's policies may take once packed (100% of PackedPolicySize)
WEB_TOKEN_SKEW_SECONDS = 60  # the clock skew allowed on a web identity token's exp, nbf and iat
# ---- authentication (docs/security.md): SigV4's, IAM's and STS's bounds -----------------------------------------
SIGV4_MAX_SKEW_SECONDS: Final = 15 * 60  # a signed request's time against the server's clock, either way
SIGV4_MAX_PRESIGNED_EXPIRES = 7 * 24 * 3600  # X-Amz-Expires
ACCESS_KEYS_PER_USER = 2  # IAM's: one in use and one being rotated in
SESSION_SECONDS_MIN = 900  # STS GetSessionToken's DurationSeconds bounds and default
SESSION_SECONDS_MAX = 129_600
SESSION_SECONDS_DEFAULT = 43_200
CREDENTIALS_RECHECK_SECONDS: Final = 0.25  # how often the server looks whether the credentials store changed

# On-demand backups (engine/backups.py; docs/backups.md "On-demand backups").
MAX_CONCURRENT_BACKUPS = 50  # backups CREATING at once per account (dynastore's choice: DynamoDB publishes none)
MAX_CONCURRENT_RESTORES = 50  # restores loading at once per account ("up to 50 concurrent restores", the API Reference)

# OpenID Connect providers added with --jwks-url: the server fetches their keys itself (security/jwks_cache.py).
JWKS_CACHE_DEFAULT_SECONDS = 3600  # how long fetched keys are kept when the answer names no Cache-Control max-age
JWKS_CACHE_MIN_SECONDS = 300  # a max-age is honoured within these bounds
JWKS_CACHE_MAX_SECONDS = 86400
JWKS_REFETCH_MIN_SECONDS = 30  # at most one fetch per provider this often (unknown kids, failed fetches)
JWKS_FETCH_TIMEOUT_SECONDS = 5  # the server's fetches; the command's wait longer
