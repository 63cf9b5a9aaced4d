// Triggers (GET /dynastore/triggers): each trigger's stream and, per shard, its checkpoint, the batch in flight,
// retries, the last error and the batches discarded. Refreshed every two seconds.

import { admin } from "./api.js";
import { attempt, h, replace } from "./dom.js";

export async function render(main) {
  const list = h("div", { id: "trigger-list" });
  const status = h("div");
  main.append(h("h1", {}, "Triggers"), status, list);
  let timer = null;
  const poll = async () => {
    const view = await attempt(status, () => admin("triggers"));
    if (view) show(list, view.triggers);
    timer = setTimeout(poll, 2000);
  };
  await poll();
  return () => clearTimeout(timer);
}

function show(list, triggers) {
  if (!triggers.length) {
    replace(list, h("section", { class: "card" }, h("p", { class: "muted" }, "No triggers are configured (docs/triggers.md).")));
    return;
  }
  replace(list, triggers.map((t) => h("section", { class: "card trigger" },
    h("h2", {}, `${t.name} `, h("span", { class: "muted" }, `on ${t.table} (${t.kind}, batches of ${t.batch_size}, from ${t.starting_position})`)),
    t.last_error ? h("div", { class: "error" }, h("b", { class: "error-type" }, "last error"), " ", String(t.last_error)) : null,
    t.shards.length
      ? h("table", {}, h("tr", {}, Object.keys(t.shards[0]).map((k) => h("th", {}, k))),
        t.shards.map((s) => h("tr", {}, Object.values(s).map((v) => h("td", { class: "mono" }, typeof v === "object" && v !== null ? JSON.stringify(v) : String(v ?? ""))))))
      : h("p", { class: "muted" }, "No shards read yet."))));
}
