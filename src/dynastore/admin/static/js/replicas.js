// A table's replicas in other regions (global tables, docs/global-tables.md): DescribeTable's Replicas with each
// one's status, adding one (UpdateTable ReplicaUpdates Create) and removing one (Delete, after a confirmation).

import { dynamo } from "./api.js";
import { attempt, field, h, replace } from "./dom.js";

// `reload` draws the page anew (a new DescribeTable): the list follows CREATING -> ACTIVE -> gone.
export function replicasCard(t, status, reload) {
  const replicas = t.Replicas ?? [];
  const list = replicas.length
    ? h("table", { id: "replica-list" },
      h("tr", {}, h("th", {}, "Region"), h("th", {}, "Status"), h("th", {})),
      replicas.map((r) => h("tr", { "data-region": r.RegionName },
        h("td", {}, r.RegionName),
        h("td", { class: "replica-status" }, r.ReplicaStatus,
          r.ReplicaStatusPercentProgress ? ` (${r.ReplicaStatusPercentProgress}%)` : ""),
        h("td", {}, r.ReplicaStatus === "ACTIVE" ? h("button", { class: "danger remove-replica", onclick: async () => {
          if (!window.confirm(`Remove the replica of ${t.TableName} in ${r.RegionName}?`)) return;
          const done = await attempt(status, () => update(t, { Delete: { RegionName: r.RegionName } }));
          if (done) reload();
        } }, "Remove") : null))))
    : h("p", { id: "replica-list" }, "No replica in another region.");
  const region = h("input", { name: "RegionName", placeholder: "us-west-2", size: 14 });
  const form = h("form", { id: "add-replica", class: "row" }, field("Region", region),
    h("button", { type: "submit", id: "add-replica-submit" }, "Add replica"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const done = await attempt(status, () => update(t, { Create: { RegionName: region.value.trim() } }));
    if (done) reload();
  });
  if (!replicas.length && t.StreamSpecification?.StreamViewType !== "NEW_AND_OLD_IMAGES") {
    replace(form, h("p", { class: "legend" }, "A replica needs the table's stream on with NEW_AND_OLD_IMAGES."));
  }
  return h("section", { class: "card", id: "replicas" }, h("h2", {}, "Replicas (global table)"),
    t.GlobalTableVersion ? h("p", { class: "legend" }, `Global table version ${t.GlobalTableVersion}.`) : null,
    list, form);
}

function update(t, action) {
  return dynamo("UpdateTable", { TableName: t.TableName, ReplicaUpdates: [action] });
}
