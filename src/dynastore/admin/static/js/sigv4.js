// AWS Signature Version 4 in the browser (WebCrypto), for a server run with --auth sigv4: the console signs every
// request with the key the user signs in with, as any AWS SDK would. WebCrypto exists only in secure contexts:
// https, or http on localhost / 127.0.0.1.

const encoder = new TextEncoder();

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(text) {
  return hex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

async function hmac(key, text) {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, encoder.encode(text)));
}

// RFC 3986 encoding, as SigV4's canonical query string wants it.
function uriEncode(text) {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

function canonicalQuery(query) {
  const pairs = [...new URLSearchParams(query)].map(([k, v]) => [uriEncode(k), uriEncode(v)]);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

export function amzDate(now = new Date()) {
  return now.toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
}

// The headers to send: ``headers`` plus X-Amz-Date and the Authorization of ``credentials``
// ({accessKeyId, secretAccessKey, sessionToken?, region}) for this method, path (with query) and body.
export async function signedHeaders(credentials, method, pathWithQuery, headers, body) {
  const [path, query = ""] = pathWithQuery.split("?", 2);
  const date = amzDate();
  const day = date.slice(0, 8);
  const all = { ...headers, "X-Amz-Date": date };
  if (credentials.sessionToken) all["X-Amz-Security-Token"] = credentials.sessionToken;
  const lower = { host: location.host };
  for (const [name, value] of Object.entries(all)) lower[name.toLowerCase()] = String(value).trim().replace(/\s+/g, " ");
  const names = Object.keys(lower).sort();
  const canonical = [
    method,
    path,
    canonicalQuery(query),
    names.map((n) => `${n}:${lower[n]}\n`).join(""),
    names.join(";"),
    await sha256Hex(body ?? ""),
  ].join("\n");
  const scope = `${day}/${credentials.region}/dynamodb/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", date, scope, await sha256Hex(canonical)].join("\n");
  let key = encoder.encode("AWS4" + credentials.secretAccessKey);
  for (const part of [day, credentials.region, "dynamodb", "aws4_request"]) key = await hmac(key, part);
  const signature = hex(await hmac(key, toSign));
  all.Authorization =
    `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, ` +
    `SignedHeaders=${names.join(";")}, Signature=${signature}`;
  return all;
}
