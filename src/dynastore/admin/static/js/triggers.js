// Triggers (GET /dynastore/triggers): each trigger's stream and, per shard, its checkpoint, the batch in flight,
// retries, the last error and the batches discarded. Refreshed every two seconds.

import { admin } from "./api.js";
import { attempt, count, h, replace } from "./dom.js";

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
      ? h("table", {}, h("tr", {}, COLUMNS.map((c) => h("th", {}, c))), t.shards.map(shardRow))
      : h("p", { class: "muted" }, "No shards read yet."))));
}

const COLUMNS = ["shard", "parent", "state", "checkpoint", "in flight", "retries", "last error", "batches discarded", "delivered"];

function shardRow(s) {
  const state = s.finished ? "finished" : s.open ? "open" : "closed";
  const flight = s.in_flight
    ? `${count(s.in_flight.records, "record")} (${s.in_flight.first_sequence_number}…${s.in_flight.last_sequence_number}), ` +
      `${s.in_flight.pieces} piece${s.in_flight.pieces === 1 ? "" : "s"}, retry ${s.in_flight.retries}`
    : "";
  return h("tr", { class: s.last_error ? "throttled shard" : "shard" },
    h("td", { class: "mono" }, s.shard_id), h("td", { class: "mono" }, s.parent_shard_id ?? ""), h("td", {}, state),
    h("td", { class: "mono" }, s.checkpoint ?? "–"), h("td", {}, flight), h("td", { class: "num" }, s.retries),
    h("td", {}, s.last_error ?? ""), h("td", { class: "num" }, s.failures),
    h("td", {}, `${count(s.batches_delivered, "batch", "batches")}, ${count(s.records_delivered, "record")}`));
}
