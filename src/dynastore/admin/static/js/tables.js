// Tables: the list (ListTables + DescribeTable each) and the CreateTable form.

import { dynamo, listTables } from "./api.js";
import { attempt, bytes, field, h, link, num, replace, select } from "./dom.js";
import { keyRows, request } from "./create_table.js";
import { indexState } from "./table_settings.js";
import { backfillOf, jobBar, jobsCard, runningJobs, showJobs } from "./progress.js";

const REDRAW_MS = 1000; // while long work runs or an index is built, the list is redrawn this often

export async function render(main) {
  const list = h("div", { id: "table-list" }, h("p", { class: "muted" }, "Loading…"));
  const jobs = jobsCard([]);
  main.append(h("h1", {}, "Tables"), jobs, h("section", { class: "card" }, list), createForm(() => refresh(list, jobs)));
  await refresh(list, jobs);
}

async function refresh(list, jobsShown) {
  await attempt(list, async () => {
    const names = await listTables();
    const [descriptions, jobs] = await Promise.all([
      Promise.all(names.map((TableName) => dynamo("DescribeTable", { TableName }))), runningJobs()]);
    showJobs(jobsShown, jobs);
    const busy = jobs.length || descriptions.some(({ Table: t }) => (t.GlobalSecondaryIndexes ?? []).some((g) => g.IndexStatus !== "ACTIVE"));
    if (busy) setTimeout(() => { if (list.isConnected) refresh(list, jobsShown); }, REDRAW_MS);
    if (!names.length) return replace(list, h("p", { class: "muted" }, "No tables yet."));
    replace(list, h("table", {},
      h("tr", {}, ["Name", "Status", "Keys", "Billing", "Items", "Size", "GSIs", "LSIs"].map((t) => h("th", {}, t))),
      descriptions.map(({ Table: t }) => h("tr", { class: "clickable", "data-table": t.TableName,
        onclick: () => { location.hash = link("table", t.TableName); } },
        h("td", {}, h("a", { href: link("table", t.TableName) }, t.TableName)),
        h("td", {}, t.TableStatus),
        h("td", {}, t.KeySchema.map((k) => `${k.AttributeName} (${k.KeyType})`).join(", ")),
        h("td", {}, billing(t)),
        h("td", { class: "num" }, num(t.ItemCount)),
        h("td", { class: "num" }, bytes(t.TableSizeBytes)),
        h("td", {}, (t.GlobalSecondaryIndexes ?? []).map((g, i) => [i ? ", " : "", g.IndexName,
          g.IndexStatus === "ACTIVE" ? "" : [" ", gsiState(g, t, jobs)]])),
        h("td", {}, (t.LocalSecondaryIndexes ?? []).map((g) => g.IndexName).join(", "))))));
  });
}

// A GSI being built: its state and its backfill's bar and estimate from the server when it runs.
function gsiState(g, t, jobs) {
  const job = backfillOf(jobs, t.TableName, g.IndexName);
  if (!job) return indexState(g, t);
  return [h("span", { class: "badge index-status busy" }, g.IndexStatus), " ", jobBar(job)];
}

export function billing(t) {
  if (t.BillingModeSummary?.BillingMode === "PAY_PER_REQUEST") return "on demand";
  const p = t.ProvisionedThroughput;
  return `provisioned ${p.ReadCapacityUnits} RCU / ${p.WriteCapacityUnits} WCU`;
}

function createForm(created) {
  const status = h("div");
  const indexes = h("div", { id: "index-rows" });
  const form = h("form", { id: "create-table" },
    h("div", { class: "row" },
      field("Table name", h("input", { name: "TableName", required: true })),
      keyRows("table"),
      field("Billing", select("BillingMode", ["PAY_PER_REQUEST", "PROVISIONED"], "PAY_PER_REQUEST")),
      field("Read units", h("input", { name: "RCU", type: "number", min: 1, value: 5, size: 6 })),
      field("Write units", h("input", { name: "WCU", type: "number", min: 1, value: 5, size: 6 })),
      field("Stream", select("Stream", ["off", "NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY"], "off"))),
    indexes,
    h("div", { class: "row" },
      h("button", { type: "button", class: "plain", onclick: () => indexes.append(indexRow("GSI")) }, "Add GSI"),
      h("button", { type: "button", class: "plain", onclick: () => indexes.append(indexRow("LSI")) }, "Add LSI"),
      h("button", { type: "submit", id: "create-table-submit" }, "Create table")),
    status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const done = await attempt(status, () => dynamo("CreateTable", request(form)));
    if (done) {
      replace(status, h("p", { class: "ok" }, `Created ${done.TableDescription.TableName}.`));
      created();
    }
  });
  return h("section", { class: "card" }, h("h2", {}, "Create a table"), form);
}

function indexRow(kind) {
  const row = h("div", { class: "row index-row", "data-kind": kind },
    h("b", {}, kind),
    field("Index name", h("input", { name: "IndexName", required: true })),
    kind === "GSI" ? keyRows("index") : keyRows("lsi"),
    field("Projection", select("Projection", ["ALL", "KEYS_ONLY"], "ALL")),
    kind === "GSI" ? field("Read units", h("input", { name: "RCU", type: "number", min: 1, value: 5, size: 6 })) : null,
    kind === "GSI" ? field("Write units", h("input", { name: "WCU", type: "number", min: 1, value: 5, size: 6 })) : null,
    h("button", { type: "button", class: "plain", onclick: () => row.remove() }, "Remove"));
  return row;
}
