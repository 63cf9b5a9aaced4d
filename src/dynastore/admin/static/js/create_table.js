// The CreateTable request the "Create a table" form describes (tables.js builds the form).

import { field, h, select } from "./dom.js";

const TYPES = ["S", "N", "B"];

// The key inputs: a partition key (not for an LSI, which shares the table's) and an optional sort key. A GSI's
// may each list up to four attributes (multi-attribute keys): "a, b:N", a name's own type after a colon.
export function keyRows(kind) {
  const several = kind === "index" ? { placeholder: "a, b:N", title: "up to 4 attributes; name:S|N|B sets one's type" } : {};
  const hash = kind === "lsi" ? [] : [
    field("Partition key", h("input", { name: "HashName", required: true, size: 10, ...several })),
    field("Type", select("HashType", TYPES, "S")),
  ];
  return [hash,
    field(kind === "lsi" ? "Sort key" : "Sort key (optional)", h("input", { name: "RangeName", size: 10, required: kind === "lsi", ...several })),
    field("Type", select("RangeType", TYPES, "S"))];
}

function value(scope, name) {
  return scope.querySelector(`[name="${name}"]`)?.value.trim() ?? "";
}

function throughput(scope) {
  return { ReadCapacityUnits: Number(value(scope, "RCU")), WriteCapacityUnits: Number(value(scope, "WCU")) };
}

// The attributes one key input names: itself, or for a GSI a comma-separated list whose entries may end with
// their own type (":S", ":N", ":B"; the Type select's otherwise).
function keyNames(text, type, several) {
  const entries = several ? text.split(",").map((e) => e.trim()).filter((e) => e) : (text ? [text] : []);
  return entries.map((entry) => {
    const typed = several ? /^(.+?)\s*:\s*([SNB])$/.exec(entry) : null;
    return typed ? [typed[1], typed[2]] : [entry, type];
  });
}

// Key schema of `scope` (the table's row or an index row), adding each attribute to `attributes`.
function keySchema(scope, attributes, tableHash, several = false) {
  const hashes = tableHash ? [] : keyNames(value(scope, "HashName"), value(scope, "HashType"), several);
  const ranges = keyNames(value(scope, "RangeName"), value(scope, "RangeType"), several);
  for (const [name, type] of [...hashes, ...ranges]) attributes.set(name, type);
  return [...(tableHash ? [tableHash] : hashes.map(([name]) => name)).map((name) => ({ AttributeName: name, KeyType: "HASH" })),
    ...ranges.map(([name]) => ({ AttributeName: name, KeyType: "RANGE" }))];
}

// A GSI of its own (UpdateTable's Create): the index and the AttributeDefinitions its keys need.
export function gsiRequest(row, provisioned) {
  const attributes = new Map();
  const index = { IndexName: value(row, "IndexName"), KeySchema: keySchema(row, attributes, null, true),
    Projection: { ProjectionType: value(row, "Projection") } };
  if (provisioned) index.ProvisionedThroughput = throughput(row);
  return { index, attributes: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })) };
}

export function request(form) {
  const attributes = new Map();
  const tableRow = form.querySelector(".row");
  const provisioned = value(form, "BillingMode") === "PROVISIONED";
  const out = { TableName: value(tableRow, "TableName"), KeySchema: keySchema(tableRow, attributes),
    BillingMode: provisioned ? "PROVISIONED" : "PAY_PER_REQUEST" };
  if (provisioned) out.ProvisionedThroughput = throughput(tableRow);
  const tableHash = out.KeySchema[0].AttributeName;
  const gsis = [];
  const lsis = [];
  for (const row of form.querySelectorAll(".index-row")) {
    const gsi = row.dataset.kind === "GSI";
    const index = { IndexName: value(row, "IndexName"), KeySchema: keySchema(row, attributes, gsi ? null : tableHash, gsi),
      Projection: { ProjectionType: value(row, "Projection") } };
    if (gsi && provisioned) index.ProvisionedThroughput = throughput(row);
    (gsi ? gsis : lsis).push(index);
  }
  if (gsis.length) out.GlobalSecondaryIndexes = gsis;
  if (lsis.length) out.LocalSecondaryIndexes = lsis;
  out.AttributeDefinitions = [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
  const stream = value(tableRow, "Stream");
  if (stream !== "off") out.StreamSpecification = { StreamEnabled: true, StreamViewType: stream };
  return out;
}
