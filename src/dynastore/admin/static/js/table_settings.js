// The overview's settings cards, each one DynamoDB call as an SDK makes it: billing mode (UpdateTable), global
// secondary indexes with their status and backfill (UpdateTable's GlobalSecondaryIndexUpdates), Time to Live
// (DescribeTimeToLive, UpdateTimeToLive) and deleting every item (Scan of the keys, BatchWriteItem).

import { dynamo } from "./api.js";
import { gsiRequest, keyRows } from "./create_table.js";
import { attempt, count, errorBox, field, h, num, replace, select } from "./dom.js";

const POLL_MS = 1000; // while an index is being built or deleted
const BATCH = 25; // BatchWriteItem's most requests
const RETRY_MS = 300; // after a throttled or partly processed batch

function onDemand(t) {
  return t.BillingModeSummary?.BillingMode === "PAY_PER_REQUEST";
}

function unitsFields(prefix, value = 5) {
  return [field("Read units", h("input", { name: `${prefix}RCU`, type: "number", min: 1, value, size: 6 })),
    field("Write units", h("input", { name: `${prefix}WCU`, type: "number", min: 1, value, size: 6 }))];
}

function unitsOf(form, prefix) {
  return { ReadCapacityUnits: Number(form.querySelector(`[name="${prefix}RCU"]`).value),
    WriteCapacityUnits: Number(form.querySelector(`[name="${prefix}WCU"]`).value) };
}

// Billing mode: on demand <-> provisioned (which needs throughput for the table and each GSI).
export function billingCard(t, status, reload) {
  const gsis = t.GlobalSecondaryIndexes ?? [];
  const toProvisioned = onDemand(t);
  const form = h("form", { id: "billing-mode" },
    h("p", {}, "Now ", h("b", { id: "billing-now" }, toProvisioned ? "on demand (PAY_PER_REQUEST)" : "provisioned (PROVISIONED)"), "."),
    toProvisioned ? [h("div", { class: "row" }, h("b", {}, "Table"), unitsFields("")),
      gsis.map((g) => h("div", { class: "row" }, h("b", {}, g.IndexName), unitsFields(`gsi-${g.IndexName}-`)))] : null,
    h("button", { type: "submit", id: "switch-billing" }, toProvisioned ? "Switch to provisioned" : "Switch to on demand"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const request = { TableName: t.TableName, BillingMode: toProvisioned ? "PROVISIONED" : "PAY_PER_REQUEST" };
    if (toProvisioned) {
      request.ProvisionedThroughput = unitsOf(form, "");
      if (gsis.length) request.GlobalSecondaryIndexUpdates = gsis.map((g) =>
        ({ Update: { IndexName: g.IndexName, ProvisionedThroughput: unitsOf(form, `gsi-${g.IndexName}-`) } }));
    }
    if (await attempt(status, () => dynamo("UpdateTable", request))) reload();
  });
  return h("section", { class: "card" }, h("h2", {}, "Billing mode"), form);
}

// One GSI's state: ACTIVE, or CREATING with its backfill (the index's items against the table's: DescribeTable
// updates both as the backfill copies), UPDATING, DELETING.
export function indexState(g, t) {
  const state = h("span", { class: `badge index-status ${g.IndexStatus === "ACTIVE" ? "" : "busy"}` }, g.IndexStatus);
  if (g.IndexStatus !== "CREATING") return state;
  const total = t.ItemCount ?? 0;
  const copied = Math.min(g.ItemCount ?? 0, total);
  const share = total > 0 ? copied / total : 0;
  const what = g.Backfilling ? `backfilling: ${num(copied)} of about ${count(total, "item")}` : "waiting to backfill";
  return [state, " ", h("progress", { class: "backfill", max: 1, value: share, title: what }),
    " ", h("span", { class: "backfill-text" }, what)];
}

// Global secondary indexes: their state (redrawn every second while one is being built or deleted), delete one,
// add one.
export function indexesCard(t, status, reload) {
  const list = h("div", { id: "gsi-list" });
  const draw = (table) => {
    const gsis = table.GlobalSecondaryIndexes ?? [];
    replace(list, gsis.length ? h("table", { class: "gsis" },
      h("tr", {}, ["Index", "Keys", "Projection", "Status", ""].map((x) => h("th", {}, x))),
      gsis.map((g) => h("tr", { "data-index": g.IndexName },
        h("td", {}, h("b", {}, g.IndexName)),
        h("td", {}, g.KeySchema.map((k) => `${k.AttributeName} (${k.KeyType})`).join(", ")),
        h("td", {}, g.Projection.ProjectionType),
        h("td", { class: "state" }, indexState(g, table)),
        h("td", {}, h("button", { class: "danger plain delete-index", disabled: g.IndexStatus !== "ACTIVE",
          onclick: () => deleteIndex(table, g.IndexName, status, reload) }, "Delete"))))) : h("p", { class: "muted" }, "No global secondary index."));
    return gsis.some((g) => g.IndexStatus !== "ACTIVE");
  };
  const watch = (table, wasBusy) => {
    const busy = draw(table);
    if (wasBusy && !busy) return reload(); // built or gone: the rest of the page changed too
    if (!busy) return undefined;
    setTimeout(async () => {
      if (!list.isConnected) return; // the page was left
      try {
        const fresh = await dynamo("DescribeTable", { TableName: t.TableName });
        if (list.isConnected) watch(fresh.Table, true);
      } catch (error) {
        replace(list, errorBox(error));
      }
    }, POLL_MS);
    return undefined;
  };
  watch(t, false);
  return h("section", { class: "card" }, h("h2", {}, "Global secondary indexes"), list, addIndexForm(t, status, reload));
}

async function deleteIndex(t, name, status, reload) {
  if (!window.confirm(`Delete the index ${name} of ${t.TableName}?`)) return;
  const request = { TableName: t.TableName, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: name } }] };
  if (await attempt(status, () => dynamo("UpdateTable", request))) reload();
}

function addIndexForm(t, status, reload) {
  const provisioned = !onDemand(t);
  const form = h("form", { id: "add-index", class: "row index-row" },
    field("Index name", h("input", { name: "IndexName", required: true })),
    keyRows("index"),
    field("Projection", select("Projection", ["ALL", "KEYS_ONLY"], "ALL")),
    provisioned ? unitsFields("") : null,
    h("button", { type: "submit", id: "add-index-submit" }, "Add index"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { index, attributes } = gsiRequest(form, provisioned);
    const request = { TableName: t.TableName, AttributeDefinitions: attributes,
      GlobalSecondaryIndexUpdates: [{ Create: index }] };
    if (await attempt(status, () => dynamo("UpdateTable", request))) reload();
  });
  return [h("h2", {}, "Add a global secondary index"), form];
}

// Time to Live: the attribute whose epoch-seconds value says when an item expires.
export function ttlCard(name, status, reload) {
  const body = h("div", { id: "ttl" }, h("p", { class: "muted" }, "Loading…"));
  attempt(body, async () => {
    const { TimeToLiveDescription: ttl } = await dynamo("DescribeTimeToLive", { TableName: name });
    const enabled = ttl.TimeToLiveStatus === "ENABLED" || ttl.TimeToLiveStatus === "ENABLING";
    const attribute = h("input", { name: "AttributeName", value: ttl.AttributeName ?? "", placeholder: "expires_at",
      required: true, readonly: enabled });
    const form = h("form", { id: "ttl-form", class: "row" },
      h("span", {}, "Status ", h("b", { id: "ttl-status" }, ttl.TimeToLiveStatus),
        ttl.AttributeName ? [" on ", h("code", {}, ttl.AttributeName)] : null, ". "),
      field("Attribute", attribute),
      h("button", { type: "submit", id: "ttl-submit" }, enabled ? "Disable Time to Live" : "Enable Time to Live"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const request = { TableName: name,
        TimeToLiveSpecification: { Enabled: !enabled, AttributeName: attribute.value.trim() } };
      if (await attempt(status, () => dynamo("UpdateTimeToLive", request))) reload();
    });
    replace(body, form, h("p", { class: "legend" },
      "Items whose attribute holds a time (epoch seconds) in the past are deleted in the background."));
  });
  return h("section", { class: "card" }, h("h2", {}, "Time to Live"), body);
}

// Delete every item: type the table's name to confirm; the keys are scanned and deleted 25 at a time.
export function deleteItemsCard(t, status) {
  const confirmInput = h("input", { name: "confirm-items", placeholder: `type ${t.TableName} to confirm` });
  const progress = h("span", { id: "delete-items-progress", class: "muted" });
  const button = h("button", { class: "danger", id: "delete-items", onclick: async () => {
    if (confirmInput.value !== t.TableName) {
      return replace(status, h("div", { class: "error" }, "Type the table's name to delete all its items."));
    }
    button.disabled = true;
    const deleted = await attempt(status, () => deleteAll(t, (n) => { progress.textContent = `${count(n, "item")} deleted…`; }));
    button.disabled = false;
    if (deleted !== undefined) progress.textContent = `Deleted ${count(deleted, "item")}.`;
  } }, "Delete all items");
  return h("section", { class: "card" }, h("h2", {}, "Delete all items"),
    h("p", { class: "legend" }, "The table, its indexes and settings stay; every item goes (its stream records each deletion)."),
    h("div", { class: "row" }, confirmInput, button, progress));
}

async function deleteAll(t, shown) {
  const keys = t.KeySchema.map((k) => k.AttributeName);
  const names = Object.fromEntries(keys.map((k, i) => [`#k${i}`, k]));
  let deleted = 0;
  let start;
  do {
    const page = await retried(() => dynamo("Scan", { TableName: t.TableName, ProjectionExpression: Object.keys(names).join(", "),
      ExpressionAttributeNames: names, ...(start ? { ExclusiveStartKey: start } : {}) }));
    for (let i = 0; i < page.Items.length; i += BATCH) {
      await writeAll(t.TableName, page.Items.slice(i, i + BATCH).map((Key) => ({ DeleteRequest: { Key } })));
      deleted += Math.min(BATCH, page.Items.length - i);
      shown(deleted);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return deleted;
}

async function writeAll(table, requests) {
  let pending = requests;
  while (pending.length) {
    const answer = await retried(() => dynamo("BatchWriteItem", { RequestItems: { [table]: pending } }));
    pending = answer.UnprocessedItems?.[table] ?? [];
    if (pending.length) await pause(RETRY_MS);
  }
}

const THROTTLED = new Set(["ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"]);

async function retried(call) {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!THROTTLED.has(error?.type)) throw error;
      await pause(RETRY_MS);
    }
  }
}

function pause(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
