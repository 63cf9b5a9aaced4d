// The partition page: for the table and each GSI, its partitions as bands of the hash space and as rows (items,
// size against the partition limit, shares, use and throttles a second, burst credit, adaptive lift), the heat
// over time, Contributor Insights' top keys, and the "as if N partitions" switch. Live: one poll a second.

import { admin } from "./api.js";
import { drawBands, drawHeat } from "./charts.js";
import { showContributors } from "./contributors.js";
import { attempt, bytes, count, field, h, num, replace } from "./dom.js";
import { History, rates } from "./heat.js";
import { partitionTable } from "./partition_rows.js";

const POLL_MS = 1000;
// A poll of a table simulating 10,000 partitions takes the server about 0.1 s (3.8 MB of JSON): the page waits
// at least ten times as long as its last poll took, so that watching never costs the server more than a tenth.
const POLL_SHARE = 10;
const CONTRIBUTORS_EVERY = 5; // polls

export async function render(main, table) {
  const path = `partitions/${encodeURIComponent(table)}`;
  const state = { previous: new Map(), histories: new Map(), polls: 0, timer: null, stopped: false, wallBefore: 0 };
  const summary = h("div", { id: "partition-summary" });
  const sections = h("div", { id: "partition-sections" });
  const status = h("div");
  const live = h("input", { type: "checkbox", id: "live", checked: true });
  const asIf = h("input", { type: "number", id: "as-if", min: 1, max: 10000, size: 7, placeholder: "N" });
  const change = async (body) => {
    const view = await attempt(status, () => admin(path, body));
    if (view) update(view);
  };
  main.append(h("h1", {}, `Partitions of ${table}`),
    h("section", { class: "card" }, summary,
      h("div", { class: "row" },
        h("label", {}, live, " live (every second)"),
        field("As if N partitions", asIf),
        h("button", { id: "as-if-apply", onclick: () => change({ as_if: Number(asIf.value) }) }, "Simulate"),
        h("button", { class: "plain", id: "as-if-stop", onclick: () => change({ as_if: 0 }) }, "Real partitions"),
        h("button", { class: "plain", id: "spend-burst", onclick: () => change({ spend_burst: true }),
          title: "every partition loses its burst credit, as after a busy spell" }, "Spend burst credit")),
      status),
    sections);

  function update(view) {
    const wallNow = performance.now();
    const wallSeconds = (wallNow - state.wallBefore) / 1000;
    state.wallBefore = wallNow;
    replace(summary, h("p", {},
      `${view.billing_mode === "PAY_PER_REQUEST" ? "on demand" : "provisioned"} · capacity ${view.capacity_mode} · `,
      `${count(view.item_count, "item")} · ${bytes(view.size_bytes)} · partition limit ${bytes(view.limits.partition_bytes)}, `,
      `${num(view.limits.partition_rcu)} RCU, ${num(view.limits.partition_wcu)} WCU · `,
      view.as_if ? h("b", { id: "as-if-now" }, `simulating ${count(view.as_if, "partition")}`) : "real partitions"));
    const resources = [{ name: null, label: "Table", res: view }, ...view.indexes.map((i) => ({ name: i.index, label: `GSI ${i.index}`, res: i }))];
    replace(sections, resources.map((r) => section(r, view, wallSeconds)));
    state.polls += 1;
    summary.dataset.polls = state.polls; // how many answers the page has drawn (tests wait on it)
  }

  function section({ name, label, res }, view, wallSeconds) {
    const key = name ?? "";
    const before = state.previous.get(key);
    const serverSeconds = before ? view.now - before.now : 0;
    const now = rates(before?.res, res, serverSeconds > 0 ? serverSeconds : wallSeconds);
    state.previous.set(key, { now: view.now, res });
    if (!state.histories.has(key)) state.histories.set(key, new History());
    const history = state.histories.get(key);
    history.add(res, now);
    const bands = h("canvas", { class: "bands", title: "the hash space, a band per partition" });
    const heatMap = h("canvas", { class: "heat", title: "heat over the last two minutes: a row per partition" });
    const top = state.contributors?.get(key) ?? h("div", { class: "contributors" }, h("p", { class: "muted" }, "Loading…"));
    requestAnimationFrame(() => {
      drawBands(bands, res.partitions, now);
      drawHeat(heatMap, history.samples, res.partitions.length);
    });
    return h("section", { class: "card resource", "data-index": key },
      h("h2", {}, `${label}: ${res.partition_count} partition${res.partition_count === 1 ? "" : "s"}`,
        h("span", { class: "muted" }, ` · ${res.provisioned ? "provisioned" : "on demand"} ${num(res.throughput.read)} RCU / `,
          `${num(res.throughput.write)} WCU a second`)),
      bands, h("p", { class: "legend" }, "Hash space 00000000–ffffffff; colour: use of the partition's share (red: throttling; red top edge: has throttled)."),
      partitionTable(res, now, view.limits.partition_bytes),
      h("h2", {}, "Heat over time"), heatMap,
      h("p", { class: "legend" }, "A row per partition (partition 0 at the top), a column per poll, the newest at the right."),
      h("h2", {}, "Top keys (Contributor Insights)"), top);
  }

  async function contributors(view) {
    const found = new Map();
    const names = [null, ...view.indexes.map((i) => i.index)];
    await Promise.all(names.map(async (name) => {
      const where = h("div", { class: "contributors" });
      await attempt(where, () => showContributors(where, table, name));
      found.set(name ?? "", where);
    }));
    state.contributors = found;
  }

  async function poll() {
    if (state.stopped) return;
    const started = performance.now();
    const view = await attempt(status, () => admin(path));
    const delay = Math.max(POLL_MS, (performance.now() - started) * POLL_SHARE);
    if (view && state.polls % CONTRIBUTORS_EVERY === 0) await contributors(view);
    if (view && !state.stopped) update(view);
    if (!state.stopped && live.checked) state.timer = setTimeout(poll, delay);
  }

  live.addEventListener("change", () => {
    clearTimeout(state.timer);
    if (live.checked) poll();
  });
  await poll();
  return () => {
    state.stopped = true;
    clearTimeout(state.timer);
  };
}
