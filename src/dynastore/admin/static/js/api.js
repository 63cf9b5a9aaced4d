// Every request the console makes goes through send(): DynamoDB's API at POST / and dynastore's admin endpoints
// under /dynastore/. On a server with --auth sigv4 it signs each one with the key the user signed in with
// (signIn; kept for the browser tab's session only), as an AWS SDK would.

import { amzDate, signedHeaders } from "./sigv4.js";

const SESSION_KEY = "dynastore-console-credentials";

// {accessKeyId, secretAccessKey, sessionToken?, region} or null: requests then carry a stand-in signature, which a
// server without authentication takes.
export function credentials() {
  const kept = sessionStorage.getItem(SESSION_KEY);
  return kept ? JSON.parse(kept) : null;
}

// The errors a server with authentication gives a request not signed with a key it knows (or, for its own
// endpoints, not by an admin): the console then asks for a key (signin.js) instead of showing the page.
const AUTH_ERRORS = new Set([
  "MissingAuthenticationTokenException", "IncompleteSignatureException", "UnrecognizedClientException",
  "InvalidSignatureException", "ExpiredTokenException",
]);

export function needsSignIn(error) {
  return AUTH_ERRORS.has(error?.type) || (error?.status === 403 && !credentials());
}

function refused(error) {
  if (needsSignIn(error)) window.dispatchEvent(new CustomEvent("dynastore-sign-in", { detail: error }));
  return error;
}

export function signIn(given) {
  if (given) sessionStorage.setItem(SESSION_KEY, JSON.stringify(given));
  else sessionStorage.removeItem(SESSION_KEY);
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
  const key = credentials();
  const sent = key ? await signedHeaders(key, method, path, headers, body) : headers;
  const response = await fetch(path, {
    method,
    headers: sent,
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

// Without a key: a request that looks signed, which a server without authentication takes (security/authenticator.py).
const AUTHORIZATION =
  "AWS4-HMAC-SHA256 Credential=console/20000101/local/dynamodb/aws4_request, " +
  "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=console";

export async function dynamo(operation, request = {}, prefix = "DynamoDB_20120810.") {
  const headers = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": prefix + operation,
  };
  if (!credentials()) Object.assign(headers, { "X-Amz-Date": amzDate(), Authorization: AUTHORIZATION });
  const { status, data } = await send("/", "POST", headers, JSON.stringify(request));
  if (status !== 200) {
    const type = typeof data?.__type === "string" ? data.__type.split("#").pop() : `HTTP ${status}`;
    const message = data?.message ?? data?.Message ?? (typeof data === "string" ? data : "");
    throw refused(new ApiError(type, message, status));
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
  if (status !== 200) throw refused(new ApiError(`HTTP ${status}`, data?.error ?? String(data), status));
  return data;
}

// What the page must know of its server (admin/console.py): {verifies_signatures, clustered}. Asked once; served
// unsigned.
let server = null;
export function serverInfo() {
  server ??= fetch("server.json", { cache: "no-store" }).then((r) => r.json()).catch(() => ({ verifies_signatures: true }));
  return server;
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
