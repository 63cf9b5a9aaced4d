// One table: DescribeTable as DynamoDB answers it, UpdateTable's throughput (table and each GSI), point-in-time
// recovery (recovery.js), the settings cards of table_settings.js (billing mode, GSIs, Time to Live, deleting every
// item), the replicas of a global table (replicas.js), DeleteTable.

import { dynamo } from "./api.js";
import { attempt, bytes, count, field, h, link, num, replace } from "./dom.js";
import { recoveryCard } from "./recovery.js";
import { replicasCard } from "./replicas.js";
import { billingCard, deleteItemsCard, indexesCard, ttlCard } from "./table_settings.js";
import { billing } from "./tables.js";

// Draw the page again, from a new DescribeTable (after a change the page made).
function reload() {
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

export async function render(main, name) {
  const { Table: t } = await dynamo("DescribeTable", { TableName: name });
  const status = h("div", { id: "table-status" });
  replace(main, // (not main.append: it would write a null child, the on-demand table's throughput form, as "null")
    h("h1", {}, name, " ", h("span", { class: "badge", id: "table-state" }, t.TableStatus)),
    h("section", { class: "card" },
      h("p", {}, `${billing(t)} · ${count(t.ItemCount, "item")} · ${bytes(t.TableSizeBytes)} · keys `,
        keysText(t.KeySchema)),
      indexList(t),
      h("p", {}, h("a", { href: link("items", name) }, "Browse items"), " · ",
        h("a", { href: link("partitions", name) }, "Partitions and heat"), " · ",
        h("a", { href: link("streams", name) }, "Stream"))),
    status,
    t.BillingModeSummary?.BillingMode === "PAY_PER_REQUEST" ? null : throughputForm(t, status),
    await recoveryCard(name),
    billingCard(t, status, reload), indexesCard(t, status, reload), ttlCard(name, status, reload),
    replicasCard(t, status, reload),
    deleteItemsCard(t, status),
    h("section", { class: "card" }, h("h2", {}, "Delete"), deleteForm(name, status)),
    h("section", { class: "card" }, h("h2", {}, "DescribeTable"), h("pre", { id: "describe" }, JSON.stringify(t, null, 2))));
}

function keysText(schema) {
  return schema.map((k) => `${k.AttributeName} (${k.KeyType})`).join(", ");
}

// Each index and its key attributes in KeySchema order (a GSI's may be several of each kind).
function indexList(t) {
  const indexes = [...(t.GlobalSecondaryIndexes ?? []).map((i) => ["GSI", i]), ...(t.LocalSecondaryIndexes ?? []).map((i) => ["LSI", i])];
  if (!indexes.length) return null;
  return h("ul", { id: "indexes" }, indexes.map(([kind, i]) =>
    h("li", {}, h("b", {}, i.IndexName), ` ${kind}${i.IndexStatus ? ` ${i.IndexStatus}` : ""} · keys ${keysText(i.KeySchema)} · ${i.Projection.ProjectionType}`)));
}

function unitsInputs(throughput) {
  return [field("Read units", h("input", { name: "RCU", type: "number", min: 1, value: throughput.ReadCapacityUnits, size: 6 })),
    field("Write units", h("input", { name: "WCU", type: "number", min: 1, value: throughput.WriteCapacityUnits, size: 6 }))];
}

function units(row) {
  return { ReadCapacityUnits: Number(row.querySelector('[name="RCU"]').value),
    WriteCapacityUnits: Number(row.querySelector('[name="WCU"]').value) };
}

function throughputForm(t, status) {
  const gsis = t.GlobalSecondaryIndexes ?? [];
  const form = h("form", { id: "update-throughput" },
    h("div", { class: "row", "data-index": "" }, h("b", {}, "Table"), unitsInputs(t.ProvisionedThroughput)),
    gsis.map((g) => h("div", { class: "row", "data-index": g.IndexName }, h("b", {}, g.IndexName), unitsInputs(g.ProvisionedThroughput))),
    h("button", { type: "submit" }, "Update throughput"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const [tableRow, ...indexRows] = form.querySelectorAll(".row");
    const request = { TableName: t.TableName };
    const wanted = units(tableRow);
    const current = t.ProvisionedThroughput;
    if (wanted.ReadCapacityUnits !== current.ReadCapacityUnits || wanted.WriteCapacityUnits !== current.WriteCapacityUnits) {
      request.ProvisionedThroughput = wanted;
    }
    const updates = indexRows.map((row, i) => ({ row, wanted: units(row), current: gsis[i].ProvisionedThroughput }))
      .filter(({ wanted: w, current: c }) => w.ReadCapacityUnits !== c.ReadCapacityUnits || w.WriteCapacityUnits !== c.WriteCapacityUnits)
      .map(({ row, wanted: w }) => ({ Update: { IndexName: row.dataset.index, ProvisionedThroughput: w } }));
    if (updates.length) request.GlobalSecondaryIndexUpdates = updates;
    const done = await attempt(status, () => dynamo("UpdateTable", request));
    if (done) replace(status, h("p", { class: "ok" }, `Updated: the table is ${done.TableDescription.TableStatus}.`));
  });
  return h("section", { class: "card" }, h("h2", {}, "Provisioned throughput"), form);
}

function deleteForm(name, status) {
  const confirmInput = h("input", { name: "confirm", placeholder: `type ${name} to confirm` });
  return h("div", { class: "row" }, confirmInput, h("button", { class: "danger", id: "delete-table", onclick: async () => {
    if (confirmInput.value !== name) return replace(status, h("div", { class: "error" }, "Type the table's name to delete it."));
    const done = await attempt(status, () => dynamo("DeleteTable", { TableName: name }));
    if (done) location.hash = link("tables");
  } }, "Delete table"));
}
