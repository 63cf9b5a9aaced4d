"""Every client-visible error text, as templates with named fields. The only place error texts live.

Grouped by area; each area appends its own section. Tests assert literal strings, never these constants.
"""

from __future__ import annotations

# --- numbers -------------------------------------------------------------------------------------------------
NUMBER_NOT_NUMERIC = "The parameter cannot be converted to a numeric value"
NUMBER_NOT_NUMERIC_VALUE = "The parameter cannot be converted to a numeric value: {value}"
NUMBER_OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"
NUMBER_UNDERFLOW = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
NUMBER_PRECISION = "Attempting to store more than 38 significant digits in a Number"

# --- protocol ------------------------------------------------------------------------------------------------
AUTH_MISSING_TOKEN = "Request is missing Authentication Token"
AUTH_REQUIRES_PARAM = "Authorization header requires '{param}' parameter. "
AUTH_REQUIRES_DATE = "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. "
# Signature verification (security/authenticator.py, --auth sigv4): DynamoDB's texts.
AUTH_UNKNOWN_KEY = "The security token included in the request is invalid."
AUTH_EXPIRED_TOKEN = "The security token included in the request is expired"
AUTH_SIGNATURE_MISMATCH = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
AUTH_SIGNATURE_EXPIRED = "Signature expired: {signed} is now earlier than {earliest} ({now} - 15 min.)"
AUTH_SIGNATURE_NOT_YET_CURRENT = "Signature not yet current: {signed} is still later than {latest} ({now} + 15 min.)"
AUTH_PRESIGNED_EXPIRED = "Signature expired: {signed} is now earlier than {earliest} ({now} - {expires} sec.)"
AUTH_SCOPE_DATE = "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{scope}' != '{date}', from '{amz_date}'."
AUTH_HOST_NOT_SIGNED = "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."
AUTH_SCOPE_REGION = "Credential should be scoped to a valid region, not '{region}'. "
AUTH_SCOPE_SERVICE = "Credential should be scoped to correct service: '{service}'. "
AUTH_SCOPE_TERMINATOR = "Credential should be scoped with a valid terminator: 'aws4_request', not '{terminator}'. "
AUTH_CREDENTIAL_ELEMENTS = (
    "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '{credential}'"
)
AUTH_BAD_DATE = "Date must be in ISO-8601 'basic format'. Got '{date}'. See http://en.wikipedia.org/wiki/ISO_8601"
AUTH_QUERY_REQUIRES_PARAM = "AWS query-string parameters must include '{param}'. "
AUTH_QUERY_AND_HEADER = "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header."
AUTH_BAD_EXPIRES = "X-Amz-Expires must be a number of seconds from 1 to 604800; got '{expires}'."
AUTH_UNSUPPORTED_ALGORITHM = "Unsupported AWS 'algorithm': '{algorithm}'"
# dynastore's own endpoints (/dynastore/...) with --auth sigv4: JSON {"error": text} with 403.
ADMIN_NOT_SIGNED = "this endpoint needs a request signed (SigV4) by an admin user: {reason}"
ADMIN_NOT_ADMIN = "{arn} is not an admin user (dynastore users add NAME --admin)"
# The endpoints peers call to keep this server's replicas of global tables (admin/peer_endpoints.py): JSON
# {"error": text} with 400 (404 for an unknown endpoint, 405 for a method other than POST).
PEER_POST_ONLY = "{method} is not supported here: a peer POSTs to /dynastore/global-tables/..."
PEER_UNKNOWN_ENDPOINT = "unknown global tables endpoint {endpoint!r} (changes, replica-set or drop)"
PEER_NOT_JSON = "the body must be a JSON object"
PEER_MEMBER_TYPE = "{member} must be {kind}"
PEER_WRONG_REGION = (
    "this server serves region {served}, not {region}: the sending server's --peer for {region} names the wrong server"
)
PEER_BAD_CHANGES = "Changes is not a batch of replicated changes: {reason}"
PEER_BAD_CHANGE = "a replicated change does not fit the replica: {reason}"
PEER_REPLICA_DELETING = "the replica table {table} is being deleted"
PEER_BAD_DEFINITION = "Definition is not a replica set's definition: {reason}"
# Requests a listening server refuses by their Host or Origin (protocol/hosts.py): JSON {"message": text} with 403.
HOST_NOT_ALLOWED = (
    "Host '{host}' is not allowed: this server answers localhost, IP addresses, its --host name and the names "
    "given with --allowed-hosts (DYNASTORE_ALLOWED_HOSTS); see docs/security.md"
)
ORIGIN_NOT_ALLOWED = (
    "Origin '{origin}' is not allowed: with --auth none this server answers browser requests only from its own "
    "pages and from pages of localhost, a loopback address or a name given with --allowed-hosts "
    "(DYNASTORE_ALLOWED_HOSTS); see docs/security.md"
)
# Connection limits (protocol/http_server.py; docs/design.md "Limits and abuse").
HEADERS_TOO_LARGE = "The request line and headers exceed {limit} bytes"
URL_TOO_LONG = "The request URL exceeds {limit} bytes"
SERVER_BUSY = "The server holds as many requests or connections as it can; retry the request"
CLI_CLUSTER_IN_MEMORY = "--cluster keeps the node's replica on disk: it cannot be combined with --in-memory"
CLUSTER_NO_LEADER = "No node of the cluster holds the write lease right now (an election); retry the request"
CLUSTER_LEASE_LAPSED = "This node's write lease may have lapsed; retry the request"
SERVER_STOPPING = "The server is stopping and takes no new requests; retry the request"
# dynastore's own: DynamoDB answers an unknown target with no message; a DynamoDB operation dynastore does not serve
# yet is named, so that a client's error says which call to avoid (docs/operations.md).
OPERATION_NOT_SERVED = "{operation} is a DynamoDB operation that dynastore does not serve yet (see docs/operations.md)"

# --- shared request semantics ----------------------------------------------------------------------------------
MIXED_EXPRESSION_PARAMS = (
    "Can not use both expression and non-expression parameters in the same request: "
    "Non-expression parameters: {{{legacy}}} Expression parameters: {{{expressions}}}"
)
NAMES_WITHOUT_EXPRESSIONS = "ExpressionAttributeNames can only be specified when using expressions"
VALUES_WITHOUT_EXPRESSIONS = "ExpressionAttributeValues can only be specified when using expressions"
VALUES_WITHOUT_EXPRESSIONS_OLD = (
    "ExpressionAttributeValues can only be specified when using expressions: {expressions} {verb} null"
)
RETURN_VALUES_PUT_DELETE = "ReturnValues can only be ALL_OLD or NONE"
ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"
ITEM_TOO_LARGE_AFTER_UPDATE = "Item size to update has exceeded the maximum allowed size"

# --- expressions ---------------------------------------------------------------------------------------------
# Parse/semantic details below are prefixed at the call site with EXPR_INVALID ("Invalid <Kind>: ").
EXPR_INVALID = "Invalid {kind}: {detail}"
EXPR_EMPTY = "The expression can not be empty;"
EXPR_SYNTAX = 'Syntax error; token: "{token}", near: "{near}"'
EXPR_TOO_LONG = "Expression size has exceeded the maximum allowed size; expression size: {size}"
EXPR_TOO_MANY_OPERATORS = "The expression contains too many operators; operator count: {count}"
EXPR_REDUNDANT_PARENS = "The expression has redundant parentheses;"
EXPR_PATH_TOO_DEEP = "The document path has too many nesting levels; nesting levels: {depth}"
EXPR_PLACEHOLDER_TOO_LONG = "Expression attribute placeholder is too long; placeholder: {name}, length: {length}"
EXPR_UNKNOWN_FUNCTION = "Invalid function name; function: {name}"
EXPR_MISUSED_FUNCTION = "The function is not allowed to be used this way in an expression; function: {name}"
EXPR_FUNCTION_NOT_IN_UPDATE = "The function is not allowed in an update expression; function: {name}"
EXPR_FUNCTION_NOT_IN_CONDITION = "The function is not allowed in a condition expression; function: {name}"
EXPR_LIST_INDEX_RANGE = "List index is not within the allowable range; index: [{index}]"
EXPR_RESERVED = "Attribute name is a reserved keyword; reserved keyword: {name}"
EXPR_NAME_UNDEFINED = "An expression attribute name used in the document path is not defined; attribute name: {name}"
EXPR_VALUE_UNDEFINED = "An expression attribute value used in expression is not defined; attribute value: {name}"
EXPR_OPERAND_COUNT = (
    "Incorrect number of operands for operator or function; operator or function: {name}, number of operands: {count}"
)
EXPR_OPERAND_TYPE = (
    "Incorrect operand type for operator or function; operator or function: {name}, operand type: {type}"
)
EXPR_UPDATE_OPERAND_TYPE = "Incorrect operand type for operator or function; operator: {name}, operand type: {type}"
EXPR_REQUIRES_PATH = "Operator or function requires a document path; operator or function: {name}"
EXPR_DISTINCT = (
    "The first operand must be distinct from the remaining operands for this operator or function; "
    "operator: {name}, first operand: {path}"
)
EXPR_BETWEEN_TYPES = (
    "The BETWEEN operator requires same data type for lower and upper bounds; "
    "lower bound operand: AttributeValue: {{{lt}:{lv}}}, upper bound operand: AttributeValue: {{{ut}:{uv}}}"
)
EXPR_BETWEEN_ORDER = (
    "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; "
    "lower bound operand: AttributeValue: {{{lt}:{lv}}}, upper bound operand: AttributeValue: {{{ut}:{uv}}}"
)
EXPR_IN_TOO_MANY = "The IN operator is provided with too many operands; number of operands: {count}"
EXPR_ATTRIBUTE_TYPE_NAME = (
    "Invalid attribute type name found; type: {type}, valid types: {{B,NULL,SS,BOOL,L,BS,N,NS,S,M}}"
)
EXPR_SECTION_TWICE = 'The "{section}" section can only be used once in an update expression;'
EXPR_PATHS_OVERLAP = (
    "Two document paths overlap with each other; must remove or rewrite one of these paths; "
    "path one: {one}, path two: {two}"
)
EXPR_PATHS_CONFLICT = (
    "Two document paths conflict with each other; must remove or rewrite one of these paths; "
    "path one: {one}, path two: {two}"
)
EXPR_NAMES_UNUSED = "Value provided in ExpressionAttributeNames unused in expressions: keys: {{{keys}}}"
EXPR_VALUES_UNUSED = "Value provided in ExpressionAttributeValues unused in expressions: keys: {{{keys}}}"
EXPR_NAMES_INVALID_KEY = 'ExpressionAttributeNames contains invalid key: Syntax error; key: "{key}"'
EXPR_VALUES_INVALID_KEY = 'ExpressionAttributeValues contains invalid key: Syntax error; key: "{key}"'
# runtime (UpdateItem) errors, never prefixed
UPDATE_MISSING_ATTRIBUTE = "The provided expression refers to an attribute that does not exist in the item"
UPDATE_BAD_OPERAND = "An operand in the update expression has an incorrect data type"
UPDATE_INVALID_PATH = "The document path provided in the update expression is invalid for update"
UPDATE_TYPE_MISMATCH = "Type mismatch for attribute to update"
# key conditions (shape errors are not prefixed)
KEY_INVALID_OPERATOR = "Invalid operator used in KeyConditionExpression: {op}"
KEY_NESTED_OPERATION = "KeyConditionExpressions cannot contain nested operations"
KEY_NESTED_ATTRIBUTE = "KeyConditionExpressions cannot have conditions on nested attributes"
KEY_MULTIPLE_NAMES = "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"
KEY_NO_ATTRIBUTE = "Invalid condition in KeyConditionExpression: No key attribute specified"
KEY_FIRST_OPERAND = (
    "Invalid condition in KeyConditionExpression: {op} operator must have the key attribute as its first operand"
)
KEY_ONE_PER_KEY = "KeyConditionExpressions must only contain one condition per key"
KEY_MISSED_ELEMENT = "Query condition missed key schema element: {name}"
KEY_NOT_SUPPORTED = "Query key condition not supported"
KEY_TYPE_MISMATCH = "One or more parameter values were invalid: Condition parameter type does not match schema type"
# legacy parameters (dynalite texts)
LEGACY_EXISTS_WITH_OPERATOR = (
    "1 validation error detected: "
    "One or more parameter values were invalid: "
    "Exists and ComparisonOperator cannot be used together for Attribute: {name}"
)
LEGACY_VALUE_WITH_LIST = (
    "One or more parameter values were invalid: "
    "Value and AttributeValueList cannot be used together for Attribute: {name}"
)
LEGACY_ARGUMENT_COUNT = (
    "One or more parameter values were invalid: Invalid number of argument(s) for the {op} ComparisonOperator"
)
LEGACY_LIST_WITHOUT_OPERATOR = (
    "One or more parameter values were invalid: "
    "AttributeValueList can only be used with a ComparisonOperator for Attribute: {name}"
)
LEGACY_VALUE_REQUIRED = (
    "1 validation error detected: "
    "One or more parameter values were invalid: Value must be provided when Exists is {exists} for Attribute: {name}"
)
LEGACY_VALUE_WITH_EXISTS_FALSE = (
    "1 validation error detected: "
    "One or more parameter values were invalid: Value cannot be used when Exists is false for Attribute: {name}"
)
LEGACY_FILTER_ARGUMENT_COUNT = "The attempted filter operation is not supported for the provided filter argument count"
LEGACY_OPERATOR_TYPE = (
    "One or more parameter values were invalid: ComparisonOperator {op} is not valid for {type} AttributeValue type"
)
LEGACY_LIST_TYPES = (
    "One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type"
)
LEGACY_BETWEEN_ORDER = (
    "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"
)
LEGACY_CONDITIONAL_OPERATOR_ALONE = "ConditionalOperator cannot be used without Filter or Expected"
LEGACY_CONDITIONAL_OPERATOR_ONE = (
    "ConditionalOperator can only be used when Filter or Expected has two or more elements"
)
LEGACY_NOT_INDEXABLE = "Attempted conditional constraint is not an indexable operation"
LEGACY_CONDITIONS_LENGTH = "Conditions can be of length 1 or 2 only"
LEGACY_MISSED_ELEMENT = "Query condition missed key schema element {name}"
LEGACY_UPDATE_DELETE_TYPE = (
    "One or more parameter values were invalid: DELETE action with value is not supported for the type {type}"
)
LEGACY_UPDATE_VALUE_REQUIRED = (
    "One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified"
)
DUPLICATE_ATTRIBUTE_NAME = "One or more parameter values were invalid: Duplicate value in attribute name: {name}"
CANNOT_UPDATE_KEY = (
    "One or more parameter values were invalid: Cannot update attribute {name}. This attribute is part of the key"
)

# --- validation ------------------------------------------------------------------------------------------------
# Phase 1 (SerializationException, key "Message"): Java/Coral deserializer texts.
SER_CANNOT_CONVERT = "{token} cannot be converted to {java_type}"
SER_BOOLEAN_FROM_STRING = "Unexpected token received from parser"
SER_UNRECOGNIZED_COLLECTION = "Unrecognized collection type {java_type}"
SER_STRUCT_NOT_EXPECTED = "Start of structure or map found where not expected"
SER_UNEXPECTED_FIELD = "Unexpected field type"
SER_UNEXPECTED_VALUE = "Unexpected value type in payload"
SER_PARAMETERIZED_CAST = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class java.lang.Class "
    "(sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in module java.base "
    "of loader 'bootstrap')"
)
SER_BLOB_NOT_STRING = "only base-64-encoded strings are convertible to bytes"
SER_BLOB_LENGTH = "Base64 encoded length is expected a multiple of 4 bytes but found: {length}"
SER_BLOB_LAST_CHAR = "Invalid last non-pad Base64 character dectected"
# Phase 2 (ValidationException): constraint failures. errors.validation_message words them (and prefixes every
# other ValidationException text with VALIDATION_PREFIX) in the form of the request's region: write texts here
# without the prefix.
VALIDATION_PREFIX = "1 validation error detected: "
CONSTRAINT_SUMMARY = "{count} validation error{plural} detected: {entries}"
CONSTRAINT_ENTRY = "Value {value} at '{path}' failed to satisfy constraint: {constraint}"
CONSTRAINT_ENTRY_BARE = "Value at '{path}' failed to satisfy constraint: {constraint}"
CONSTRAINT_NOT_NULL = "Member must not be null"
CONSTRAINT_PATTERN = "Member must satisfy regular expression pattern: {pattern}"
CONSTRAINT_MIN_LENGTH = "Member must have length greater than or equal to {limit}"
CONSTRAINT_MAX_LENGTH = "Member must have length less than or equal to {limit}"
CONSTRAINT_MIN_VALUE = "Member must have value greater than or equal to {limit}"
CONSTRAINT_MAX_VALUE = "Member must have value less than or equal to {limit}"
CONSTRAINT_ENUM = "Member must satisfy enum value set: [{values}]"
CONSTRAINT_MAP_KEYS = "Map keys must satisfy constraint: [{constraints}]"
CONSTRAINT_MAP_VALUES = "Map value must satisfy constraint: [{constraints}]"
PARAMETER_REQUIRED = "The parameter '{name}' is required but was not present in the request"
TABLE_NAME_LENGTH = "{name} must be at least 3 characters long and at most 255 characters long"
# AttributeValue well-formedness.
AV_EMPTY = "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
AV_MULTIPLE = (
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
)
AV_NULL_NOT_TRUE = "One or more parameter values were invalid: Null attribute value types must have the value of true"
AV_EMPTY_SS = "One or more parameter values were invalid: An string set  may not be empty"
AV_EMPTY_NS = "One or more parameter values were invalid: An number set  may not be empty"
AV_EMPTY_BS = "One or more parameter values were invalid: Binary sets should not be empty"
AV_NULL_IN_SS = "One or more parameter values were invalid: An string set may not have a empty string as a member"
AV_NULL_IN_BS = "One or more parameter values were invalid: Binary sets may not contain null or empty values"
AV_DUPLICATES_SS = "One or more parameter values were invalid: Input collection {values} contains duplicates."
AV_DUPLICATES_NS = "Input collection contains duplicates"
AV_DUPLICATES_BS = "One or more parameter values were invalid: Input collection {values}of type BS contains duplicates."
AV_NESTING = (
    "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
)
# Key attributes against a table's key schema.
KEY_MISSING_IN_ITEM = "One or more parameter values were invalid: Missing the key {name} in the item"
KEY_TYPE_MISMATCH_ITEM = (
    "One or more parameter values were invalid: Type mismatch for key {name} expected: {expected} actual: {actual}"
)
KEY_SCHEMA_MISMATCH = "The provided key element does not match the schema"
KEY_EMPTY_STRING = (
    "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty "
    "string value. Key: {name}"
)
KEY_EMPTY_BINARY = (
    "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty "
    "binary value. Key: {name}"
)
KEY_HASH_TOO_LONG = (  # DynamoDB's text has no space between "of" and the number
    "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes"
)
KEY_RANGE_TOO_LONG = (
    "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of "
    "1024 bytes"
)
ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"

# --- control plane -------------------------------------------------------------------------------------------
# Table lookups.
TABLE_NOT_FOUND = "Requested resource not found: Table: {name} not found"
RESOURCE_NOT_FOUND = "Requested resource not found"
# DynamoDB's own spelling ("ResourcArn"), as its responses carry it.
RESOURCE_ARN_NOT_FOUND = "Requested resource not found: ResourcArn: {arn} not found"
INDEX_NOT_FOUND_FOR_TABLE = "Requested resource not found: Index {index} for table {name}"
TABLE_ALREADY_EXISTS = "Table already exists: {name}"
TABLE_BEING_CREATED = "Attempt to change a resource which is still in use: Table is being created: {name}"
TABLE_BEING_UPDATED = "Attempt to change a resource which is still in use: Table is being updated: {name}"
TABLE_BEING_DELETED = "Attempt to change a resource which is still in use: Table is being deleted: {name}"
TABLE_DELETION_PROTECTED = (
    "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first."
)
# CreateTable / UpdateTable semantics.
INVALID_PARAMS = "One or more parameter values were invalid: {detail}"
PPR_WITH_THROUGHPUT = (
    "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
)
PROVISIONED_WITHOUT_THROUGHPUT = (
    "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED"
)
UPDATE_PROVISIONED_WITHOUT_THROUGHPUT = "ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
CAPACITY_OUT_OF_BOUNDS = "Given value {value} for {member} is out of bounds"
KEY_ATTR_NO_DEFINITION = "Invalid KeySchema: Some index key attribute have no definition"
KEY_ATTRS_NOT_DEFINED = (
    "Some index key attributes are not defined in AttributeDefinitions. Keys: [{keys}], AttributeDefinitions: [{defs}]"
)
ATTRIBUTE_NAME_DUPLICATED = "Attribute Name is duplicated: {name}"
HASH_RANGE_SAME_NAME = "Both the Hash Key and the Range Key element in the KeySchema have the same name"
FIRST_KEY_NOT_HASH = "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
SECOND_KEY_NOT_RANGE = "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"
KEY_COUNT_MISMATCH = (
    "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"
)
ATTRIBUTE_DEFINITIONS_UNUSED = (
    "Some AttributeDefinitions are not used. AttributeDefinitions: [{defs}], keys used: [{keys}]"
)
INDEX_LIST_EMPTY = "List of {member} is empty"
LSI_NEEDS_TABLE_RANGE = (
    "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex"
)
LSI_NEEDS_RANGE = "Index KeySchema does not have a range key for index: {index}"
LSI_HASH_MISMATCH = (
    "Index KeySchema does not have the same leading hash key as table KeySchema for index: {index}. "
    "index hash key: {index_hash}, table hash key: {table_hash}"
)
PROJECTION_TYPE_NULL = "Unknown ProjectionType: null"
PROJECTION_NON_KEY_SPECIFIED = "ProjectionType is {type}, but NonKeyAttributes is specified"
PROJECTION_INCLUDE_WITHOUT_NON_KEY = "ProjectionType is INCLUDE, but NonKeyAttributes is not specified"
PROJECTION_DUPLICATE_NON_KEY = "Duplicate element in NonKeyAttributes: {name}"
# Not found in a public source: the text for more than 100 projected attributes across all indexes.
PROJECTION_TOO_MANY_NON_KEY = "Number of projected attributes in all indexes exceeds limit of {limit}"
DUPLICATE_INDEX_NAME = "Duplicate index name: {index}"
TOO_MANY_LSIS = "Number of LocalSecondaryIndexes exceeds per-table limit of {limit}"
TOO_MANY_GSIS = "GlobalSecondaryIndex count exceeds the per-table limit of {limit}"
GSI_PPR_WITH_THROUGHPUT = (
    "ProvisionedThroughput should not be specified for index: {index} when BillingMode is PAY_PER_REQUEST"
)
GSI_THROUGHPUT_NOT_SPECIFIED = "ProvisionedThroughput is not specified for index: {index}"
CREATE_STREAM_NEEDS_VIEW_TYPE = "Table is being created with a stream enabled, UpdateViewType is required"
CREATE_STREAM_DISABLED_VIEW_TYPE = (
    "Table is being created with a stream disabled, UpdateViewType should not be specified"
)
SSE_TYPE_WITHOUT_ENABLED = "SSEType can not be specified if Enabled is false"
SSE_KMS_KEY_WITHOUT_ENABLED = "KMSMasterKeyId can not be specified if Enabled is false"
SSE_KMS_KEY_NEEDS_KMS = "SSEType KMS is required if KMSMasterKeyId is specified"
SSE_AES256_UNSUPPORTED = "SSEType AES256 is not supported"
INVALID_TABLE_CLASS = (
    "Invalid table-class parameter provided. Please try again with a valid table-class value: "
    "[STANDARD, STANDARD_INFREQUENT_ACCESS]."
)
ON_DEMAND_WITH_PROVISIONED = (
    "{member} for OnDemandThroughput cannot be specified when the table BillingMode is PROVISIONED"
)
ON_DEMAND_OUT_OF_RANGE = "Requested {member} for OnDemandThroughput for table is outside of valid range"
UPDATE_NOTHING = (
    "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
    "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
    "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
)
UPDATE_ONLY_OPERATION = "{what} modification must be the only operation in the request"
UPDATE_ON_DEMAND_WITH_OTHERS = "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request"
UPDATE_STREAM_WHILE_IOPS = "You cannot modify stream status while updating table IOPS"
UPDATE_INDEX_WHILE_IOPS = "You cannot create or delete index while updating table IOPS"
UPDATE_INDEX_WHILE_STREAM = "You cannot create or delete index while changing stream status"
THROUGHPUT_WILL_NOT_CHANGE = (
    "The provisioned throughput for the table will not change. The requested value equals the current value. "
    "Current ReadCapacityUnits provisioned for the table: {cur_read}. Requested ReadCapacityUnits: {req_read}. "
    "Current WriteCapacityUnits provisioned for the table: {cur_write}. Requested WriteCapacityUnits: {req_write}. "
    "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
)
# Only the opening of this text is public; the rest follows the table variant.
INDEX_THROUGHPUT_WILL_NOT_CHANGE = (
    "The provisioned throughput for the index {index} will not change. The requested value equals the current "
    "value. Current ReadCapacityUnits provisioned for the index: {cur_read}. Requested ReadCapacityUnits: "
    "{req_read}. Current WriteCapacityUnits provisioned for the index: {cur_write}. Requested "
    "WriteCapacityUnits: {req_write}. Refer to the Amazon DynamoDB Developer Guide for current limits and how "
    "to request higher limits."
)
STREAM_ALREADY_ENABLED = "Table already has an enabled stream: TableName: {name}"
STREAM_NOTHING_TO_DISABLE = "Table has no stream to disable: TableName: {name}"
UPDATE_STREAM_NEEDS_VIEW_TYPE = "If stream is being enabled then UpdateViewType is required"
UPDATE_STREAM_DISABLED_VIEW_TYPE = "If stream is being disabled, then UpdateViewType must not be specified"
GSI_UPDATE_NO_ACTION = (
    "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
    "GlobalSecondaryIndexUpdate.Delete must not be null"
)
GSI_UPDATE_MANY_ACTIONS = "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object"
GSI_UPDATE_DUPLICATE = "Only one global secondary index update per index is allowed simultaneously. Index: {index}"
GSI_ONLINE_INDEX_LIMIT = (
    "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"
)
GSI_ALREADY_EXISTS = "Attempting to create an index which already exists"
GSI_CREATE_ATTRIBUTE_NOT_DEFINED = "AttributeDefinitions is not specified for index: {index}"
GSI_UPDATE_NOT_GSI = "Cannot update an index that is not a GlobalSecondaryIndex: {index}"
GSI_DELETE_NOT_GSI = "Cannot delete an index that is not a GlobalSecondaryIndex: {index}"
GSI_THROUGHPUT_MUST_BE_SPECIFIED = "ProvisionedThroughput must be specified for index: {index}"
GSI_UPDATE_PPR_WITH_THROUGHPUT = (
    "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: {index} when BillingMode is "
    "PAY_PER_REQUEST"
)
GSI_INDEX_UPDATE_BLOCKED = (
    "This operation cannot be performed with given input values. Please contact DynamoDB service team for more "
    "info: Action Blocked: IndexUpdate"
)
# Global tables, version 2019.11.21 (UpdateTable ReplicaUpdates; docs/global-tables.md "Errors" says which texts
# are DynamoDB's and which are dynastore's wording where no public source gives DynamoDB's).
REPLICA_LOCAL_REGION = (
    "Cannot add, delete, or update the local region through ReplicaUpdates. Use CreateTable, DeleteTable, or "
    "UpdateTable as required."
)
REPLICA_UPDATE_NO_ACTION = (
    "One of ReplicationGroupUpdate.Create, ReplicationGroupUpdate.Update, ReplicationGroupUpdate.Delete must not "
    "be null"
)
REPLICA_UPDATE_MANY_ACTIONS = "Only one replica action is allowed per ReplicationGroupUpdate object"
REPLICA_UPDATES_ONE_AT_A_TIME = "Only one replica can be created, updated or deleted per UpdateTable request"
REPLICA_UPDATES_ALONE = "ReplicaUpdates cannot be combined with other table updates in the same request"
REPLICA_INVALID_REGION = "Invalid region name: {region}"
REPLICA_STREAM_DISABLE = "Cannot disable the stream of table: {name} while it has replicas"
REPLICA_GSI_NOT_FOUND = "Global secondary index: {index} does not exist on table: {name}"
REPLICA_GSI_DUPLICATE = "Duplicate index name in replica GlobalSecondaryIndexes: {index}"
REPLICA_THROUGHPUT_OVERRIDE_PPR = (
    "ProvisionedThroughputOverride cannot be specified when the table BillingMode is PAY_PER_REQUEST"
)
REPLICA_ON_DEMAND_OVERRIDE_OUT_OF_RANGE = (
    "Requested MaxReadRequestUnits for OnDemandThroughputOverride of the replica is outside of valid range"
)
REPLICA_ON_DEMAND_OVERRIDE_PROVISIONED = (
    "OnDemandThroughputOverride cannot be specified when the table BillingMode is PROVISIONED"
)
REPLICA_KMS_WITHOUT_SSE = "KMSMasterKeyId can only be specified for a replica of a table encrypted with a KMS key"
REPLICA_UPDATE_NOTHING = (
    "At least one of KMSMasterKeyId, ProvisionedThroughputOverride, OnDemandThroughputOverride, "
    "GlobalSecondaryIndexes or TableClassOverride is required to update a replica"
)
# Multi-region strong consistency (global_tables/strong.py; docs/global-tables.md "Strong consistency").
REPLICATED_WRITE_CONFLICT = (  # the exception's documented meaning; DynamoDB's wording is not public
    "One or more items in the request are being modified by a request in another Region"
)
MRSC_BATCH_STATEMENT = (  # ours
    "BatchExecuteStatement does not write to table {name}, a global table with multi-Region strong consistency "
    "whose Regions are served by several servers: write its items with ExecuteStatement"
)
STRONG_LOG_UNAVAILABLE = (  # ours
    "The table's strong log cannot be reached from this region right now: the request was not carried out"
)
# Multi-Region strong consistency, its control plane (api/multi_region_strong.py; docs/global-tables.md
# "Multi-Region strong consistency (MRSC)"): DynamoDB's texts for these refusals are not public.
MRSC_CONSISTENCY_WITHOUT_CREATE = (  # ours
    "MultiRegionConsistency can only be specified with ReplicaUpdates Create actions, when a table becomes a "
    "global table"
)
MRSC_CONSISTENCY_UNCHANGEABLE = (  # ours
    "The consistency mode of a global table cannot be set or changed after its creation: table {name} already "
    "has replicas"
)
MRSC_THREE_REGIONS = (  # ours
    "A global table with MultiRegionConsistency STRONG is created in exactly three Regions: with two ReplicaUpdates "
    "Create actions, or with one Create action and one GlobalTableWitnessUpdates Create action"
)
MRSC_REGION_UNSUPPORTED = "Multi-Region strong consistency is not available in Region: {region}"  # ours
MRSC_REGION_SET = (  # ours
    "Every Region of a global table with MultiRegionConsistency STRONG must be in the Region set of {local}: "
    "{region} is not"
)
MRSC_DUPLICATE_REGION = "Duplicate region in ReplicaUpdates: {region}"  # ours
MRSC_TABLE_NOT_EMPTY = (  # ours
    "Table {name} must be empty to become a global table with MultiRegionConsistency STRONG"
)
MRSC_LSI = (  # ours
    "Local secondary indexes are not supported for global tables with MultiRegionConsistency STRONG: table {name} "
    "has local secondary indexes"
)
MRSC_TTL_ENABLED = (  # ours
    "Time to Live is not supported for global tables with MultiRegionConsistency STRONG: table {name} has Time to "
    "Live enabled"
)
MRSC_ADD_REPLICA = (  # ours
    "Replicas cannot be added to table {name}: a global table with MultiRegionConsistency STRONG keeps the three "
    "Regions it was created in"
)
MRSC_DELETE = (  # ours
    "Cannot delete a single replica or the witness of table {name} (MultiRegionConsistency STRONG): delete both "
    "other replicas, or one replica and the witness, in one request"
)
MRSC_DELETE_TABLE = (  # ours
    "Cannot delete table {name}: it is a replica of a global table with MultiRegionConsistency STRONG; delete its "
    "other Regions first (UpdateTable ReplicaUpdates and GlobalTableWitnessUpdates Delete actions)"
)
MRSC_TTL = (  # ours
    "Time to Live is not supported for table {name}: it is a global table with MultiRegionConsistency STRONG"
)
MRSC_TRANSACTION = (  # ours
    "Transactions are not supported for table {name}: it is a global table with MultiRegionConsistency STRONG"
)
WITNESS_UPDATE_NO_ACTION = (  # ours, worded as ReplicaUpdates'
    "One of GlobalTableWitnessGroupUpdate.Create, GlobalTableWitnessGroupUpdate.Delete must not be null"
)
WITNESS_UPDATE_MANY_ACTIONS = (  # ours
    "Only one witness action is allowed per GlobalTableWitnessGroupUpdate object"
)
WITNESS_WITHOUT_STRONG = (  # ours
    "A witness can only be added when a table becomes a global table with MultiRegionConsistency STRONG"
)
WITNESS_SAME_REGION = "The witness Region must differ from the Regions of the replicas: {region}"  # ours
WITNESS_DELETE_ALONE = (  # ours
    "A witness can only be deleted together with one replica (one ReplicaUpdates Delete action)"
)
WITNESS_NOT_FOUND = "Table {name} has no witness in Region: {region}"  # ours
AUTO_SCALING_NOT_SUPPORTED = (
    "Auto scaling is not supported by dynastore: table: {name} keeps the capacity UpdateTable sets"
)
# Global tables, version 2017.11.29 (api/legacy_global_tables.py; docs/global-tables.md "The legacy operations").
GLOBAL_TABLE_NOT_FOUND = "Global table not found: Global table with name: '{name}' does not exist."
GLOBAL_TABLE_EXISTS = "Global table already exists: Global table with name: '{name}' already exists."  # ours
LEGACY_TABLE_NOT_FOUND = "Table not found: Table: '{name}' not found in region: '{region}'."
LEGACY_REPLICA_EXISTS = "Replica already exists in region: '{region}' of global table: '{name}'."  # ours
LEGACY_REPLICA_NOT_FOUND = "Replica not found in region: '{region}' of global table: '{name}'."  # ours
LEGACY_NO_REGION = "ReplicationGroup must name at least one region"  # ours
LEGACY_DUPLICATE_REGION = "Duplicate region in ReplicationGroup: {region}"  # ours
LEGACY_ONE_ACTION = "Exactly one of Create or Delete must be given in each ReplicaUpdate"  # ours
LEGACY_PEER_REGION = (  # ours
    "Region: '{region}' is served by a peer: the legacy global tables of dynastore span the regions of one server"
)
LEGACY_NOT_ACTIVE = "Table: '{name}' in region: '{region}' is not ACTIVE"  # ours
LEGACY_NOT_EMPTY = "Table: '{name}' in region: '{region}' is not empty"  # ours
LEGACY_STREAM = (  # ours
    "Table: '{name}' in region: '{region}' must have DynamoDB Streams enabled with StreamViewType NEW_AND_OLD_IMAGES"
)
LEGACY_SCHEMA_DIFFERS = (  # ours
    "Table: '{name}' in region: '{region}' does not have the same key schema and global secondary indexes as in "
    "region: '{other}'"
)
LEGACY_INDEX_NOT_FOUND = "Index: '{index}' not found on table: '{name}' in region: '{region}'."  # ours
LEGACY_REPLICA_UPDATES = (  # ours
    "Table: {name} is a replica of a version 2017.11.29 global table: its replicas change with UpdateGlobalTable"
)
LEGACY_ALREADY_GLOBAL = "Table: '{name}' in region: '{region}' is already a replica of a global table"  # ours
# Tags.
ARN_MUST_START_WITH_ARN = "ARNs must start with 'arn:': {arn}"
ARN_NOT_DYNAMODB = "Provided Arn is not a DynamoDB resource arn: {arn}"
ARN_NOT_TABLE_OR_STREAM = (
    "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {arn}"
)
INVALID_TABLE_ARN = "Invalid TableArn: Invalid ResourceArn provided as input {arn}"
ACCESS_DENIED = "Access is denied"
TAGS_EMPTY = "Atleast one Tag needs to be provided as Input."
TAG_KEYS_EMPTY = "Atleast one Tag Key needs to be provided as Input."
TAG_KEY_INVALID = "The Tag Key provided is invalid, Key: {key}"
TAG_VALUE_INVALID = "The Tag Value provided is invalid, Value: {value}"
TAG_KEY_AWS_PREFIX = "Tag Key cannot be prefixed with aws:, Key: {key}"
TAG_KEYS_DUPLICATE = "Duplicate Tag Keys provided as input: Duplicate Tag Key found {key}"
TAGS_TOO_MANY = "Number of Tags exceed the current limit for the provided ResourceArn"
# Time to live.
TTL_ALREADY_ENABLED = "TimeToLive is already enabled"
TTL_ALREADY_DISABLED = "TimeToLive is already disabled"
TTL_DIFFERENT_ATTRIBUTE = "TimeToLive is active on a different AttributeName: current AttributeName is {name}"
TTL_DESCRIBE_WRONG_STATE = (
    "Cannot describe time to live while table is in {status} state: Current table state is {status}"
)
BATCH_WRITE_TOO_MANY = "Too many items requested for the BatchWriteItem call"
BATCH_DUPLICATE_KEYS = "Provided list of item keys contains duplicates"
BATCH_WRITE_REQUEST_SHAPE = (
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
)
# --- expressions (continued) ---------------------------------------------------------------------------
LEGACY_UPDATE_ADD_NOT_SUPPORTED = (
    "One or more parameter values were invalid: ADD action is not supported for the type {type}"
)
# --- reads: Query, Scan, BatchGetItem --------------------------------------------------------------------
QUERY_NO_KEY_CONDITION = (
    "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request."
)
INDEX_NOT_IN_TABLE = "The table does not have the specified index: {index}"
# Ours: secondary-index reads arrive with the index issue; until then they are refused, never answered wrongly.
START_KEY_INVALID = "The provided starting key is invalid"
START_KEY_INVALID_DETAIL = "The provided starting key is invalid: {detail}"
START_KEY_SIZE = "Exclusive Start Key must have same size as table's key schema"
START_KEY_OUTSIDE_QUERY = "The provided starting key is outside query boundaries based on provided conditions"
START_KEY_RANGE_MISMATCH = "The provided starting key does not match the range key predicate"
START_KEY_ONE_ROW = "The query can return at most one row and cannot be restarted"
START_KEY_WRONG_SEGMENT = (
    "Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. "
    "TotalSegments: {total} Segment: {segment}"
)
FILTER_ON_KEY_ATTRIBUTE = "{param} can only contain non-primary key attributes: Primary key attribute: {name}"
KEY_PATH_NOT_SCALAR = (
    "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: {kind}: {name}"
)
SCAN_SEGMENT_WITHOUT_TOTAL = (
    "The TotalSegments parameter is required but was not present in the request when Segment parameter is present"
)
SCAN_TOTAL_WITHOUT_SEGMENT = (
    "The Segment parameter is required but was not present in the request when parameter TotalSegments is present"
)
SCAN_SEGMENT_TOO_LARGE = (
    "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
    "Segment: {segment} is not less than TotalSegments: {total}"
)
SELECT_SPECIFIC_WITHOUT_PROJECTION = (
    "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"
)
SELECT_COUNT_WITH_PROJECTION = "Cannot specify the {param} when choosing to get only the Count"
SELECT_ALL_WITH_PROJECTION = "Cannot specify the {param} when choosing to get {select}"
SELECT_ALL_PROJECTED_WITHOUT_INDEX = "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"
BATCH_GET_TOO_MANY = "Too many items requested for the BatchGetItem call"
# --- transactions ----------------------------------------------------------------------------------------------
TRANSACTION_CANCELED = "Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]"
TRANSACTION_ONGOING = "Transaction is ongoing for the item"
CONDITION_FAILED = "The conditional request failed"
TRANSACTION_MULTIPLE_OPERATIONS_ON_ITEM = "Transaction request cannot include multiple operations on one item"
TRANSACT_ITEM_MULTIPLE_ACTIONS = "TransactItems can only contain one of Check, Put, Update or Delete"
TRANSACT_ITEM_NO_ACTION = "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"
TRANSACT_PAYLOAD_TOO_LARGE = "Transaction payload size cannot exceed 4MB. Payload Size: : Transaction payload size cannot exceed 4MB. Payload Size: {size}"
IDEMPOTENT_MISMATCH = (
    "Specified idempotent token was used with different request parameters within the idempotency window"
)
TRANSACTION_IN_PROGRESS = "The transaction with the given request token is already in progress."
# --- capacity and throttling ---------------------------------------------------------------------------------
THROUGHPUT_EXCEEDED_TABLE = (
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API."
)
THROUGHPUT_EXCEEDED_INDEX = (
    "The level of configured provisioned throughput for one or more global secondary indexes of the table was "
    "exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes "
    "with the UpdateTable API."
)
THROTTLED_ON_DEMAND = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table "
    "or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
THROTTLED_ON_DEMAND_INDEX = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically "
    "scaling your index so please try again shortly."
)
THROUGHPUT_DECREASE_LIMIT = (
    "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the "
    "first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 "
    "seconds. Number of decreases today: {count}. Last decrease at {last}. Next decrease can be made at {next}"
)
EXPR_NAMES_EMPTY = "ExpressionAttributeNames must not be empty"
EXPR_VALUES_EMPTY = "ExpressionAttributeValues must not be empty"
EXPR_VALUES_INVALID_VALUE = "ExpressionAttributeValues contains invalid value: {detail} for key {key}"
# --- secondary indexes: multi-attribute key definitions and index reads ---------------------------------------
# The multi-attribute KeySchema rules' texts, as a public catalogue of DynamoDB's responses records them
# (docs/indexes.md "Multi-attribute GSI keys").
GSI_TOO_MANY_KEY_ATTRIBUTES = "The KeySchema exceeds the maximum allowed number of {kind} key attributes"
GSI_KEY_ORDER = (
    "One or more parameter values were invalid: All HASH key attributes must precede RANGE key attributes in the "
    "KeySchema"
)
GSI_KEY_DUPLICATE = "The KeySchema contains multiple key attributes with the same name"
# Query against a multi-attribute index key: a sort attribute conditioned while an earlier one has no equality
# (DynamoDB's, as a public test suite run against it asserts), a partition attribute without an equality (ours,
# in the same form: DynamoDB's text for it is not public).
KEY_RANGE_NEEDS_EQUALITY = (
    "RANGE key attributes {prior} must have equality conditions specified in the query because a condition is "
    "present on key attribute {later}"
)
KEY_HASH_NEEDS_EQUALITY = "HASH key attributes {name} must have equality conditions specified in the query"
INDEX_BACKFILLING = "Cannot read from backfilling global secondary index"
GSI_CONSISTENT_READ = "Consistent reads are not supported on global secondary indexes"
GSI_SELECT_ALL = (
    "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global "
    "secondary index {index} because its projection type is not ALL"
)
# Ours: a projection or filter naming attributes a GSI does not project.
GSI_NOT_PROJECTED = (
    "One or more parameter values were invalid: Global secondary index {index} does not project [{names}]"
)

# --- secondary indexes: the write side (engine/indexes.py) ------------------------------------------------------
INDEX_KEY_TYPE_MISMATCH = (
    "One or more parameter values were invalid: Type mismatch for Index Key {name} Expected: {expected} "
    "Actual: {actual} IndexName: {index}"
)
INDEX_KEY_EMPTY = (
    "One or more parameter values are not valid. A value specified for a secondary index key is not supported. "
    "The AttributeValue for a key attribute cannot contain an empty {kind} value. IndexName: {index}, IndexKey: {name}"
)
INDEX_KEY_EMPTY_UPDATE = (
    "One or more parameter values are not valid. The update expression attempted to update a secondary index key "
    "to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty {kind} value."
)
# Not found in a public source (the exception's documented meaning, worded as DynamoDB's model documents it).
ITEM_COLLECTION_TOO_LARGE = "Item collection size limit exceeded."

# ---------------------------------------------------------------- account quotas (our wording: DynamoDB's is not public)
CAPACITY_OVER_TABLE_QUOTA = (
    "Subscriber limit exceeded: {member} of {value} is more than the per-table maximum of {quota} (DescribeLimits)"
)

# --- command line (stderr, one line, after "dynastore: error: ") ------------------------------------------------
CLI_CANNOT_LISTEN = "cannot listen on {host}:{port}: {reason}"
CLI_CANNOT_CREATE_DATA_DIR = "cannot create the data directory {path}: {reason}"
CLI_CANNOT_OPEN_STORE = "cannot open the store: {reason}"
CLI_AUTH_NO_USERS = "--auth sigv4 with --in-memory needs users: --users-file PATH or DYNASTORE_ADMIN_ACCESS_KEY_ID and DYNASTORE_ADMIN_SECRET_ACCESS_KEY"
CLI_BAD_CREDENTIALS_STORE = "cannot read the credentials store {path}: {reason}"
CLI_TLS = "cannot load the TLS certificate and key: {reason}"
CLI_BAD_ALLOWED_HOST = "--allowed-hosts takes host names (or *), without scheme, port or path: '{name}'"
CLI_ENV_NOT_INTEGER = "{name} must be a whole number (such as {example}), not {value!r}"
CLI_ENV_NOT_NUMBER = "{name} must be a number (such as {example}), not {value!r}"
CLI_NO_DATA_DIR = "the data directory {path} does not exist (give the server's with --data-dir or DYNASTORE_DATA_DIR)"

# ---------------------------------------------------------------- attribute names and index key sizes
# "Attribute name is too large" is DynamoDB's measured text for a name of 65,536 bytes or more (items at any
# nesting depth, ExpressionAttributeNames values, AttributesToGet, legacy parameters); the empty-name text is
# the same family's (DynamoDB Local's error table names both).
ATTRIBUTE_NAME_EMPTY = "1 validation error detected: Empty attribute name"
ATTRIBUTE_NAME_TOO_LARGE = "1 validation error detected: Attribute name is too large, must be less than 65536 bytes"
EXPR_NAMES_EMPTY_VALUE = "ExpressionAttributeNames contains invalid value: Empty attribute name for key {key}"
INDEX_KEY_TOO_LARGE = (
    "One or more parameter values were invalid: Size limit exceeded for Index Key {name} Actual Size: {size} bytes "
    "Max Size: {limit} bytes IndexName: {index}"
)

# Storage failures (docs/operations.md "A full disk"): the request was not carried out.
STORAGE_UNAVAILABLE = "The service is currently unavailable: it cannot store writes at the moment. Retry later."

# DynamoDB Streams (docs/streams.md).
STREAM_NOT_FOUND = "Requested resource not found: Stream: {arn} not found"
SHARD_NOT_FOUND = "Requested resource not found: Shard does not exist"
SHARD_OF_ITERATOR_NOT_FOUND = "Invalid ShardId in ShardIterator"
INVALID_STREAM_ARN = "Invalid StreamArn"
INVALID_EXCLUSIVE_START_STREAM_ARN = "Invalid ExclusiveStartStreamArn"  # inferred from INVALID_STREAM_ARN
INVALID_SHARD_ITERATOR = "Invalid ShardIterator"
INVALID_SHARD_ID = "Invalid ShardId"
ITERATOR_EXPIRED = "Iterator expired. The iterator was created at time {created} while right now it is {now} which is further in the future than the tolerated delay of {tolerated} milliseconds."
DATA_TRIMMED = "The data you are trying to access has been trimmed"
SEQUENCE_NUMBER_REQUIRED = "Must specify a sequence number with {type} iterator type"
SEQUENCE_NUMBER_NOT_ALLOWED = "Sequence number must not be specified with {type} iterator type"
SEQUENCE_NUMBER_INVALID = "Invalid SequenceNumber {sequence} for shard {shard}"
AT_TIMESTAMP_NOT_SERVED = "AT_TIMESTAMP is not a supported ShardIteratorType for DynamoDB Streams"
SHARD_FILTER_SHARD_ID_REQUIRED = "ShardFilter ShardId is required with the CHILD_SHARDS filter type"

# --- authorization (security/, api/authorization.py; docs/security.md "Policies") --------------------------------
# AccessDeniedException, by what decided it (IAM's texts).
ACCESS_DENIED_NO_IDENTITY_ALLOW = (
    "User: {principal} is not authorized to perform: {action} on resource: {resource} "
    "because no identity-based policy allows the {action} action"
)
ACCESS_DENIED_NO_RESOURCE_ALLOW = (
    "User: {principal} is not authorized to perform: {action} on resource: {resource} "
    "because no resource-based policy allows the {action} action"
)
ACCESS_DENIED_IDENTITY_DENY = (
    "User: {principal} is not authorized to perform: {action} on resource: {resource} "
    "with an explicit deny in an identity-based policy"
)
ACCESS_DENIED_RESOURCE_DENY = (
    "User: {principal} is not authorized to perform: {action} on resource: {resource} "
    "with an explicit deny in a resource-based policy"
)
ACCESS_DENIED_NO_SESSION_ALLOW = (
    "User: {principal} is not authorized to perform: {action} on resource: {resource} "
    "because no session policy allows the {action} action"
)
ACCESS_DENIED_SESSION_DENY = (
    "User: {principal} is not authorized to perform: {action} on resource: {resource} "
    "with an explicit deny in a session policy"
)
# Policy documents. A resource-based policy's faults are ValidationExceptions of INVALID_PARAMS with
# "Invalid policy document: <detail>" (DynamoDB's); the same details name an identity policy's faults.
INVALID_POLICY_DOCUMENT = "Invalid policy document: {detail}"
POLICY_INVALID_JSON = "This policy contains invalid Json"
POLICY_NOT_A_POLICY = "This text appears not to be a policy"
POLICY_STATEMENT_EMPTY = "Could not parse the policy: Statement is empty!"
POLICY_MISSING_FIELD = "Missing required field {field}"
POLICY_SIDS_NOT_UNIQUE = "The Statement Ids in the policy are not unique"
POLICY_INVALID_VERSION = "The policy must contain a valid version string"
POLICY_UNKNOWN_FIELD = "Policy statement contains an unsupported element: {field}"
POLICY_FIELD_CONFLICT = "Statement cannot contain both {first} and {second}"
POLICY_INVALID_EFFECT = "Invalid effect: {effect}"
POLICY_INVALID_FIELD_TYPE = "The field {field} has an invalid value"
POLICY_INVALID_ACTION = 'Action {action} must be in the form service:action or "*"'
POLICY_INVALID_ACTIONS_FOR_RESOURCE = "The following action names are invalid: {actions}"
POLICY_INVALID_RESOURCE = 'Resource {resource} must be in ARN format or "*".'
POLICY_RELATIVE_ID_INVALID = 'The relative-id "{relative_id}" is invalid for ARN "{arn}"'
POLICY_INVALID_CONDITION_OPERATOR = "Invalid Condition type : {operator}"
POLICY_INVALID_CONDITION_VALUE = "Invalid value for condition {operator} on key {key}"
POLICY_INVALID_PRINCIPAL = "Invalid principal in policy document."
POLICY_PRINCIPAL_IN_IDENTITY_POLICY = "Policy document should not specify a principal."
POLICY_MULTIVALUED_KEY_OPERATOR = (
    "statement {statement}: {key} is a multivalued condition key: {operator} needs a set operator "
    "(ForAllValues:{operator} or ForAnyValue:{operator}); as written it holds in an Allow only when every value "
    "of the request satisfies it, and in a Deny when any value does"
)
POLICY_PRINCIPAL_IN_NOT_ALLOWED = "A resource-based policy must name its principals with Principal or NotPrincipal"
POLICY_UNBOUNDED_ACCESS = (
    "Resource-based policy grants unbounded access in one or more elements. "
    "Please revise the policy to ensure least-privilege form of access"
)
POLICY_TOO_LARGE = "Maximum policy size of {limit} bytes exceeded"
IDENTITY_POLICY_NAME_INVALID = (
    "1 validation error detected: Value '{name}' at 'policyName' failed to satisfy constraint: Member must satisfy "
    "regular expression pattern: [\\w+=,.@-]+"
)
IDENTITY_POLICY_TOO_LARGE = "Maximum policy size of {limit} bytes exceeded for {kind} {name}"
# Resource-based policies (PutResourcePolicy, GetResourcePolicy, DeleteResourcePolicy).
RESOURCE_POLICY_NOT_FOUND = "Resource-based policy not found for the provided ResourceArn: {arn}"
RESOURCE_POLICY_REVISION_MISMATCH = (
    "Resource-based policy not found for the provided ResourceArn: Requested update for policy with revision id "
    "{expected}, but the policy associated to target table {table} has revision id {current}."
)
RESOURCE_POLICY_EXPECTED_NONE = (
    "Resource-based policy not found for the provided ResourceArn: Requested policy update expecting none to be "
    "present for table {table}, but a policy exists with revision id {current}."
)
RESOURCE_POLICY_OTHER_ACCOUNT = (
    "This action is only supported by accounts that match the resource owner\u2019s account."
)
RESOURCE_POLICY_INVALID_ARN = "Invalid resource Arn: {arn}"
RESOURCE_POLICY_INDEX_ARN = (
    "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {arn}"
)
# PutResourcePolicy with authentication on, when the new policy explicitly denies the caller PutResourcePolicy
# and ConfirmRemoveSelfResourceAccess is not set (an AccessDeniedException).
RESOURCE_POLICY_LOCKOUT = "The new resource policy will not allow you to update the resource policy in the future."
STREAM_NOT_FOUND_FOR_TABLE = "Requested resource not found: Stream: {label} not found for Table: {table}"
# --- PartiQL (partiql/, api/execute_statement.py, api/batch_execute_statement.py, api/execute_transaction.py) ------
# Texts DynamoDB gives (docs/partiql.md "Errors"); those marked "ours" are dynastore's where DynamoDB's is unknown.
PARTIQL_NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: {detail}"
PARTIQL_ALIASING = "Aliasing is not supported"
PARTIQL_FROM_PATH_TOO_LONG = "A path may contain at most 2 components in the FROM clause"
PARTIQL_EMPTY_PATH_COMPONENT = "Path component cannot be an empty string"
PARTIQL_UNRECOGNIZED_FUNCTION = "Unrecognized function: {name} at {at}"
PARTIQL_UNEXPECTED_PATH_COMPONENT = "Unexpected path component at {at}"
PARTIQL_UNSUPPORTED_OPERATION = "Unsupported operation: {operation}"
PARTIQL_UNSUPPORTED_TYPE = "Unsupported data type: {type}"
PARTIQL_BAG_MEMBER = "Unsupported data type in Bag"
PARTIQL_EMPTY_BAG = "Empty bags are not supported"
PARTIQL_BAG_DUPLICATES = "One or more parameter values were invalid: Input collection [{members}] contains duplicates."
PARTIQL_BAG_TYPES = "DynamoDB only supports either numbers or strings in bags"
PARTIQL_STAR_WITH_OTHERS = "Other attributes should not be present in the projection when '*' is used."
PARTIQL_OPERAND_COUNT = (
    "Incorrect number of operands for operator or function; operator or function: {name}, number of operands: {count}"
)
PARTIQL_REQUIRES_PATH = "Operator or function requires a document path; operator or function: {name}"
PARTIQL_SET_FUNCTION_ARGS = "{name} must have exactly two arguments at {at}"
PARTIQL_SET_FUNCTION_TARGET = "The first argument to {name} must equal the assignment value at {at}"
PARTIQL_SET_FUNCTION_SET = "The second argument to {name} must be a value with type SET at {at}"
PARTIQL_NUMBER_AT = "{detail} under {path}"
PARTIQL_PARAMETER_COUNT = "Number of parameters in request and statement don't match."
PARTIQL_KEY_EQUALITY = "Where clause does not contain a mandatory equality on all key attributes"
PARTIQL_DUPLICATE_ITEM = "Duplicate primary key exists in table"
PARTIQL_NO_INDEX = "The table does not have the specified index"
PARTIQL_GSI_CONSISTENT_READ = "Strongly consistent read is not supported on Global Secondary Indexes"
PARTIQL_INDEX_FILTER_NOT_PROJECTED = (
    "One or more parameter values were invalid: Secondary index {index} does not project one or more filter "
    "attributes: [{names}]"
)
PARTIQL_GSI_NOT_PROJECTED = (
    "One or more parameter values were invalid: Global secondary index {index} does not project [{names}]"
)
PARTIQL_ORDER_BY_WITHOUT_WHERE = "Must have WHERE clause in the statement when using ORDER BY clause."
PARTIQL_ORDER_BY_NEEDS_HASH = (  # ours
    "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."
)
PARTIQL_ORDER_BY_NOT_KEY = "Order by is supported only on the key attributes of the table or index read: {name}"  # ours
PARTIQL_DELETE_RETURNING = "DELETE supports only RETURNING ALL OLD *"  # ours
PARTIQL_INSERT_NOT_TUPLE = "Unsupported value in INSERT: the item must be a tuple ({...})"  # ours
PARTIQL_NEXT_TOKEN_INVALID = "The provided NextToken is invalid for this statement"  # ours
PARTIQL_BATCH_READ_KEY = (
    "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
)
PARTIQL_BATCH_MIXED = (
    "BatchExecuteStatement does not support both read and write operations in the same request."  # ours
)
PARTIQL_TRANSACTION_FAILED = "Validation failed in TransactStatements[{index}]: {detail}"
PARTIQL_TRANSACTION_READ_KEY = (
    "Select statements within ExecuteTransaction must specify the primary key in the where clause."
)
PARTIQL_TRANSACTION_INDEX_READ = "Reads on indices are not supported within transactions."
PARTIQL_TRANSACTION_MIXED = (
    "ExecuteTransaction API does not support both read and write operations in the same request."
)
PARTIQL_EXISTS_NEEDS_CONDITION = "EXISTS() must contain a single item read with additional condition"
PARTIQL_TRANSACTION_RETURNING = "RETURNING is not supported within ExecuteTransaction"  # ours
PARTIQL_EXISTS_OUTSIDE_TRANSACTION = "EXISTS is supported only within ExecuteTransaction"  # ours

# --- Export to and import from S3 (ExportTableToPointInTime, DescribeExport, ListExports, ImportTable,
# DescribeImport, ListImports); FailureMessage texts of a failed export or import too ----------
EXPORT_TABLE_NOT_FOUND = "Table not found: {arn}"
EXPORT_PITR_DISABLED = "Point in time recovery is not enabled for table '{table}'"
EXPORT_TIME_OUTSIDE_WINDOW = (  # ours
    "Export time {time} is outside the point in time recovery window of table '{table}' ({earliest} to {latest})"
)
EXPORT_TIME_IN_FUTURE = "Export time {time} is in the future"  # ours
EXPORT_NO_WINDOW_YET = (  # ours
    "Point in time recovery of table '{table}' has no restorable time yet: it was turned on a moment ago"
)
EXPORT_INCREMENTAL_NEEDS_SPEC = (  # ours
    "IncrementalExportSpecification with ExportFromTime is required for an INCREMENTAL_EXPORT"
)
EXPORT_INCREMENTAL_WITH_EXPORT_TIME = "ExportTime cannot be used with an INCREMENTAL_EXPORT"  # ours
EXPORT_SPEC_WITHOUT_INCREMENTAL = (  # ours
    "IncrementalExportSpecification can only be used with ExportType INCREMENTAL_EXPORT"
)
EXPORT_PERIOD_ORDER = "ExportFromTime must be before ExportToTime"  # ours
EXPORT_PERIOD_TOO_SHORT = "The incremental export period must be at least 15 minutes"  # ours
EXPORT_PERIOD_TOO_LONG = "The incremental export period must be at most 24 hours"  # ours
EXPORT_KMS_KEY_WITHOUT_KMS = "S3SseKmsKeyId can only be used with S3SseAlgorithm KMS"  # ours
EXPORT_CLIENT_TOKEN_REUSED = (  # ours
    "The ClientToken {token} was used by another export request with different parameters"
)
EXPORT_NOT_FOUND = "Export not found: {arn}"  # ours
EXPORT_TABLE_GONE = "Table {table} was deleted before its export ran"  # ours
IMPORT_CLIENT_TOKEN_REUSED = (  # ours
    "The ClientToken {token} was used by another import request with different parameters"
)
IMPORT_NOT_FOUND = "Import not found: {arn}"  # ours
IMPORT_CSV_OPTIONS_WITHOUT_CSV = "InputFormatOptions can only be used with InputFormat CSV"  # ours
IMPORT_ITEM_VALIDATION = (
    "Some of the items failed validation checks and were not imported. Please check CloudWatch error logs for "
    "more details."
)
IMPORT_NO_OBJECTS = "No objects found under s3://{bucket}/{prefix}"  # ours
IMPORT_BAD_COMPRESSION = "The object is not {compression}-compressed: {detail}"  # ours
IMPORT_BAD_JSON = "Unparsable DynamoDB JSON: {detail}"  # ours
IMPORT_BAD_ION = "Unparsable Ion: {detail}"  # ours
IMPORT_BAD_UTF8 = "The CSV object is not UTF-8 text: {detail}"  # ours
IMPORT_NO_ITEM = "The line is not an object with an Item member"  # ours
IMPORT_EMPTY_ITEM = "The item has no attributes"  # ours
IMPORT_ION_SET_MEMBER = "A {kind} set holds a value of another type"  # ours
IMPORT_ION_TYPE = "Ion type {ion_type} has no DynamoDB equivalent"  # ours
IMPORT_CSV_COLUMNS = "The line has {found} columns where the header names {expected}"  # ours
IMPORT_INDEX_KEY_TYPE = (  # ours
    "The key attribute {name} of index {index} is not of its defined type {expected}"
)
IMPORT_ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"
TRANSFER_INTERRUPTED = "The {kind} was interrupted: the server stopped while it ran"  # ours
LIST_NEXT_TOKEN_INVALID = "Invalid NextToken"  # ours

# ---- On-demand backups (api/backups.py; docs/backups.md "On-demand backups"). "# ours": DynamoDB's text is not
# published; the choice is documented there.
BACKUP_TABLE_NOT_FOUND = "Table not found: {name}"
BACKUP_NOT_FOUND = "Backup not found: {arn}"
BACKUP_TABLE_ALREADY_EXISTS = "Table already exists: {name}"
BACKUP_TABLE_IN_USE = "Table is being created or deleted: {name}"  # ours
BACKUP_TABLE_BEING_DELETED = "Table is being deleted: {name}"  # ours
BACKUPS_BEING_ENABLED = "Backups are being enabled for the table: {name}. Please retry later"
BACKUP_BEING_CREATED = "Backup is being created: {arn}"  # ours
BACKUP_BEING_RESTORED = "Backup is being restored to a table: {arn}"  # ours
BACKUP_DELETED = "Backup was deleted: {arn}"  # ours
BACKUPS_CONCURRENT_LIMIT = (  # ours
    "Subscriber limit exceeded: Only {limit} backups can be created simultaneously per account"
)
RESTORES_CONCURRENT_LIMIT = (  # ours
    "Subscriber limit exceeded: Only {limit} tables can be restored simultaneously per account"
)
RESTORE_INDEX_NOT_IN_BACKUP = (  # ours
    "One or more parameter values were invalid: {kind} {index} does not match an index of the backup: the "
    "indexes provided must match existing secondary indexes"
)
RESTORE_INDEX_DUPLICATE = "One or more parameter values were invalid: Duplicate index name: {index}"  # ours
BACKUP_STORAGE_FAILED = "The backup could not be written: {reason}"  # ours

# ---------------------------------------------------------------- point-in-time recovery
# "# ours" marks a text whose DynamoDB wording is not public (docs/backups.md "Point-in-time recovery").
PITR_TABLE_NOT_FOUND = "Table not found: {name}"
PITR_BACKUPS_BEING_ENABLED = "Backups are being enabled for the table: {name}. Please retry later"
PITR_PERIOD_WHILE_DISABLED = "RecoveryPeriodInDays cannot be specified when PointInTimeRecoveryEnabled is false"  # ours
PITR_NOT_ENABLED = "Point in time recovery is not enabled for table '{name}'"  # ours
PITR_BEING_ENABLED = "Point in time recovery is being enabled for table '{name}'. Please retry later"  # ours
PITR_INVALID_RESTORE_TIME = (
    "Invalid RestoreDateTime: it must be between EarliestRestorableDateTime ({earliest}) and "
    "LatestRestorableDateTime ({latest})"  # ours
)
PITR_SOURCE_IN_USE = "Table is in use: {name} is {status}"  # ours
PITR_SOURCE_MISSING = "Either SourceTableArn or SourceTableName must be specified"  # ours
PITR_SOURCE_TWICE = "Only one of SourceTableArn or SourceTableName can be specified"  # ours
PITR_TIME_MISSING = "Either RestoreDateTime or UseLatestRestorableTime must be specified"  # ours
PITR_TIME_TWICE = "Only one of RestoreDateTime or UseLatestRestorableTime can be specified"  # ours
PITR_OVERRIDE_KEY_UNDEFINED = (
    "Some index key attributes are not defined in the source table's AttributeDefinitions: {name}"  # ours
)

# ---------------------------------------------------------------- global tables
# The state checks of the replica set's control plane (global_tables/replicas.py); the request's own validation
# is api/update_table.py's. "# ours" marks a text whose DynamoDB wording is not public.
GT_REPLICA_EXISTS = (
    "Failed to create a the new replica of table with name: '{name}' because one or more replicas already existed "
    "as tables."
)
GT_REPLICA_IS_SOURCE = "Cannot add replica in the same region as the table: {region}"  # ours
GT_REPLICA_NOT_FOUND = (
    "Update global table operation failed because the specified replica does not exist: {region}"  # ours
)
GT_REPLICA_BUSY = "Replica {region} of table {name} is {status}"  # ours
GT_STREAM_REQUIRED = (
    "Table {name} must have DynamoDB Streams enabled with StreamViewType NEW_AND_OLD_IMAGES to add a replica"  # ours
)
GT_NAME_TAKEN = "Table {name} already exists in {region} and is not a replica of this global table"  # ours
CLI_BAD_PEER = "a peer is given as REGION=URL (e.g. us-west-2=http://127.0.0.1:8001), not {entry!r}"
CLI_PEER_URL_NOT_ROOT = "a peer's URL is its server's root (http://host:port), not {url!r}"
CLI_PEER_TWICE = "region {region} is given two peers: {first} and {second}"
CLI_PEER_OWN_REGION = "--peer {region}=...: that is this server's own region (--region)"
CLI_PEER_KEY_WITHOUT_SECRET = "DYNASTORE_PEER_ACCESS_KEY_ID needs DYNASTORE_PEER_SECRET_ACCESS_KEY"
# STS (security/sts.py): the texts AWS STS answers with; ``STS_`` errors are XML, in STS's own error shape.
STS_MISSING_MEMBER = "Value null at '{member}' failed to satisfy constraint: Member must not be null"
STS_MEMBER_PATTERN = (
    "Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression pattern: "
    "{pattern}"
)
STS_MEMBER_LENGTH = (
    "Value '{value}' at '{member}' failed to satisfy constraint: Member must have length {bound} {limit}"
)
STS_MEMBER_RANGE = "Value '{value}' at '{member}' failed to satisfy constraint: Member must have value {bound} {limit}"
STS_DURATION_OVER_ROLE_MAXIMUM = "The requested DurationSeconds exceeds the MaxSessionDuration set for this role."
STS_INVALID_ACTION = "Could not find operation {action} for version {version}"
STS_MISSING_ACTION = "Missing Action"
STS_ROLE_ARN_INVALID = "{arn} is invalid"
STS_ACCESS_DENIED_WEB_IDENTITY = "Not authorized to perform sts:AssumeRoleWithWebIdentity"
STS_ACCESS_DENIED_ASSUME_ROLE = "User: {principal} is not authorized to perform: sts:AssumeRole on resource: {role}"
STS_NOT_A_JWT = "The ID Token provided is not a valid JWT. (You may see this error if you sent an Access Token)"
STS_NO_PROVIDER = "No OpenIDConnect provider found in your account for {issuer}"
STS_TOKEN_NOT_VALIDATED = (
    "The web identity token that was passed could not be validated by AWS. Get a new identity token from the "
    "identity provider and then retry the request."
)
STS_INCORRECT_AUDIENCE = "Incorrect token audience"
STS_TOKEN_EXPIRED = "Token expired: current date/time {now} must be before the expiration date/time{expiration}"
STS_TOKEN_NOT_YET_VALID = "Token used before its not-before date/time: current date/time {now}, not before {nbf}"
STS_TOKEN_NO_SUBJECT = "The ID Token provided has no subject (sub) claim"
STS_MALFORMED_POLICY_DETAIL = "Syntax errors in policy. {detail}"
STS_POLICY_ARN_NOT_FOUND = "Policy {arn} does not exist or is not attachable."
STS_PACKED_POLICY_TOO_LARGE = "Packed policy consumes {percent}% of allotted space, please use smaller policy."
