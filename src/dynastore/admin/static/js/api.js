// Every request the console makes goes through send(): one place where a later authentication layer adds its
// header (setHeader) for both DynamoDB's API at POST / and dynastore's admin endpoints under /dynastore/.

const extraHeaders = {};

export function setHeader(name, value) {
  if (value == null) delete extraHeaders[name];
  else extraHeaders[name] = value;
}

// An error as the server gave it: DynamoDB's type (the part of __type after '#') and message, or the admin
// endpoint's {"error": text}.
export class ApiError extends Error {
  constructor(type, message, status) {
    super(message);
    this.type = type;
    this.status = status;
  }
}

async function send(path, method, headers, body) {
  const response = await fetch(path, {
    method,
    headers: { ...headers, ...extraHeaders },
    body,
    cache: "no-store",
    credentials: "same-origin",
  });
  const text = await response.text();
  let data = text;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: response.status, data };
}

// dynastore checks that a request looks signed (protocol/auth.py) but does not verify the signature yet.
const AUTHORIZATION =
  "AWS4-HMAC-SHA256 Credential=console/20000101/local/dynamodb/aws4_request, " +
  "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=console";

function amzDate() {
  return new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
}

export async function dynamo(operation, request = {}, prefix = "DynamoDB_20120810.") {
  const headers = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": prefix + operation,
    "X-Amz-Date": amzDate(),
    Authorization: AUTHORIZATION,
  };
  const { status, data } = await send("/", "POST", headers, JSON.stringify(request));
  if (status !== 200) {
    const type = typeof data?.__type === "string" ? data.__type.split("#").pop() : `HTTP ${status}`;
    const message = data?.message ?? data?.Message ?? (typeof data === "string" ? data : "");
    throw new ApiError(type, message, status);
  }
  return data;
}

export function streams(operation, request) {
  return dynamo(operation, request, "DynamoDBStreams_20120810.");
}

// GET /dynastore/<path> or, with a body, POST it as JSON.
export async function admin(path, body) {
  const post = body !== undefined;
  const headers = post ? { "Content-Type": "application/json" } : {};
  const { status, data } = await send(`/dynastore/${path}`, post ? "POST" : "GET", headers, post ? JSON.stringify(body) : undefined);
  if (status !== 200) throw new ApiError(`HTTP ${status}`, data?.error ?? String(data), status);
  return data;
}

// Every page of a paginated DynamoDB list (ListTables: ExclusiveStartTableName / LastEvaluatedTableName).
export async function listTables() {
  const names = [];
  let start;
  do {
    const page = await dynamo("ListTables", start ? { ExclusiveStartTableName: start } : {});
    names.push(...page.TableNames);
    start = page.LastEvaluatedTableName;
  } while (start);
  return names;
}
