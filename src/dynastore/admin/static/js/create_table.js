// The CreateTable request the "Create a table" form describes (tables.js builds the form).

import { field, h, select } from "./dom.js";

const TYPES = ["S", "N", "B"];

// The key inputs: a partition key (not for an LSI, which shares the table's) and an optional sort key.
export function keyRows(kind) {
  const hash = kind === "lsi" ? [] : [
    field("Partition key", h("input", { name: "HashName", required: true, size: 10 })),
    field("Type", select("HashType", TYPES, "S")),
  ];
  return [hash,
    field(kind === "lsi" ? "Sort key" : "Sort key (optional)", h("input", { name: "RangeName", size: 10, required: kind === "lsi" })),
    field("Type", select("RangeType", TYPES, "S"))];
}

function value(scope, name) {
  return scope.querySelector(`[name="${name}"]`)?.value.trim() ?? "";
}

function throughput(scope) {
  return { ReadCapacityUnits: Number(value(scope, "RCU")), WriteCapacityUnits: Number(value(scope, "WCU")) };
}

// Key schema of `scope` (the table's row or an index row), adding each attribute to `attributes`.
function keySchema(scope, attributes, tableHash) {
  const hashName = tableHash ?? value(scope, "HashName");
  const schema = [{ AttributeName: hashName, KeyType: "HASH" }];
  if (!tableHash) attributes.set(hashName, value(scope, "HashType"));
  const rangeName = value(scope, "RangeName");
  if (rangeName) {
    schema.push({ AttributeName: rangeName, KeyType: "RANGE" });
    attributes.set(rangeName, value(scope, "RangeType"));
  }
  return schema;
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
    const index = { IndexName: value(row, "IndexName"), KeySchema: keySchema(row, attributes, gsi ? null : tableHash),
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
