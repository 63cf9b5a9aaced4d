// Contributor Insights' top keys of a table or index (GET /dynastore/contributors/<table>), and the switch that
// turns Contributor Insights on (UpdateContributorInsights, as any SDK would).

import { admin, dynamo } from "./api.js";
import { attempt, h, num, replace } from "./dom.js";
import { itemToPlain } from "./ddbjson.js";

const RULES = { PKC: "most accessed partition keys", PKT: "most throttled partition keys",
  SKC: "most accessed items", SKT: "most throttled items" };

// `window`: seconds up to now (the server keeps an hour); `label`: how the page names it.
export async function showContributors(where, table, index, window = 3600, label = "1 h") {
  const query = new URLSearchParams({ window: String(window), top: "10" });
  if (index) query.set("index", index);
  const view = await admin(`contributors/${encodeURIComponent(table)}?${query}`);
  if (view.status !== "ENABLED") {
    const status = h("span");
    const request = { TableName: table, ContributorInsightsAction: "ENABLE" };
    if (index) request.IndexName = index;
    replace(where, h("p", { class: "muted" }, `Contributor Insights is ${view.status}. `,
      h("button", { class: "plain", onclick: () => attempt(status, () => dynamo("UpdateContributorInsights", request)) },
        "Enable Contributor Insights"), status));
    return;
  }
  const lists = Object.entries(view.rules).map(([rule, entries]) => h("div", { class: "rule", "data-rule": rule },
    h("b", {}, RULES[rule] ?? rule), ` (last ${label})`,
    entries.length ? h("table", {}, h("tr", {}, ["key", "partition", "units", "throttles"].map((t) => h("th", {}, t))),
      entries.map((e) => h("tr", { "data-partition": e.partition }, h("td", { class: "mono" }, JSON.stringify(itemToPlain(e.key))),
        h("td", { class: "num" }, e.partition), h("td", { class: "num" }, num(e.ConsumedThroughputUnits)),
        h("td", { class: "num" }, num(e.ThrottleCount)))))
      : h("p", { class: "muted" }, `nothing in the last ${label}`)));
  replace(where, h("div", { class: "rules" }, lists));
}
