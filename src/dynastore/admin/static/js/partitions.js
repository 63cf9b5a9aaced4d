// The partition page: for the table and each GSI, its partitions as bands of the hash space and as rows (items,
// size against the partition limit, shares, use and throttles a second, burst credit, adaptive lift), the heat
// over time and Contributor Insights' top keys over a window the user picks (from the history the server keeps,
// so a load that ended before the page opened still shows), and the "as if N partitions" switch. Live: one poll
// a second; the window's history and top keys with every fifth.

import { admin } from "./api.js";
import { drawBands, drawHeat } from "./charts.js";
import { showContributors } from "./contributors.js";
import { attempt, bytes, count, field, h, num, replace } from "./dom.js";
import { columnsOf, rates, WINDOWS } from "./heat.js";
import { partitionTable } from "./partition_rows.js";

const POLL_MS = 1000;
// A poll of a table simulating 10,000 partitions takes the server about 0.1 s (3.8 MB of JSON): the page waits
// at least ten times as long as its last poll took, so that watching never costs the server more than a tenth.
const POLL_SHARE = 10;
const HISTORY_EVERY = 5; // polls: the server's history has 5-second buckets
const DEFAULT_WINDOW = 900;

export async function render(main, table) {
  const path = `partitions/${encodeURIComponent(table)}`;
  const state = { previous: new Map(), polls: 0, timer: null, stopped: false, wallBefore: 0, window: DEFAULT_WINDOW,
    history: null };
  const summary = h("div", { id: "partition-summary" });
  const sections = h("div", { id: "partition-sections" });
  const status = h("div");
  const live = h("input", { type: "checkbox", id: "live", checked: true });
  const windowPicker = h("select", { id: "history-window", title: "how far back the heat map and top keys reach" },
    WINDOWS.map(([seconds, label]) => h("option", { value: seconds, selected: seconds === DEFAULT_WINDOW }, label)));
  const asIf = h("input", { type: "number", id: "as-if", min: 1, max: 10000, size: 7, placeholder: "N" });
  const change = async (body) => {
    const view = await attempt(status, () => admin(path, body));
    if (view) update(view);
  };
  main.append(h("h1", {}, `Partitions of ${table}`),
    h("section", { class: "card" }, summary,
      h("div", { class: "row" },
        h("label", {}, live, " live (every second)"),
        field("Heat map and top keys over the last", windowPicker),
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

  function windowLabel() {
    return WINDOWS.find(([seconds]) => seconds === state.window)?.[1] ?? `${state.window} s`;
  }

  function section({ name, label, res }, view, wallSeconds) {
    const key = name ?? "";
    const before = state.previous.get(key);
    const serverSeconds = before ? view.now - before.now : 0;
    const now = rates(before?.res, res, serverSeconds > 0 ? serverSeconds : wallSeconds);
    state.previous.set(key, { now: view.now, res });
    const kept = state.history;
    const columns = kept ? columnsOf(kept.resources.get(key) ?? [], kept.window, res.partitions) : [];
    const used = columns.filter((cells) => cells).length;
    const throttledColumns = columns.filter((cells) => cells?.some((c) => c.throttled > 0)).length;
    const bands = h("canvas", { class: "bands", title: "the hash space, a band per partition" });
    const heatMap = h("canvas", { class: "heat", "data-used-columns": used, "data-throttled-columns": throttledColumns,
      title: `heat over the last ${windowLabel()}: a row per partition` });
    const top = state.contributors?.get(key) ?? h("div", { class: "contributors" }, h("p", { class: "muted" }, "Loading…"));
    requestAnimationFrame(() => {
      drawBands(bands, res.partitions, now);
      drawHeat(heatMap, columns, res.partitions.length);
    });
    return h("section", { class: "card resource", "data-index": key },
      h("h2", {}, `${label}: ${res.partition_count} partition${res.partition_count === 1 ? "" : "s"}`,
        h("span", { class: "muted" }, ` · ${res.provisioned ? "provisioned" : "on demand"} ${num(res.throughput.read)} RCU / `,
          `${num(res.throughput.write)} WCU a second`)),
      bands, h("p", { class: "legend" }, "Hash space 00000000–ffffffff; colour: use of the partition's share (red: throttling; red top edge: has throttled)."),
      partitionTable(res, now, view.limits.partition_bytes),
      h("h2", {}, `Heat over the last ${windowLabel()}`), heatMap,
      h("p", { class: "legend" }, `A row per partition (partition 0 at the top), a column per ${kept?.window.bucket_seconds ?? 5} `,
        "seconds the server keeps (one hour), the newest at the right."),
      heatSummary(kept?.resources.get(key) ?? []),
      h("h2", {}, "Top keys (Contributor Insights)"), top);
  }

  // What the window's history says in words: the partitions that throttled, or that none did.
  function heatSummary(history) {
    const throttles = new Map();
    for (const bucket of history) {
      for (const row of bucket.partitions) {
        const refused = row.throttled.read + row.throttled.write;
        if (refused) throttles.set(row.partition, (throttles.get(row.partition) ?? 0) + refused);
      }
    }
    const text = throttles.size
      ? `Throttled in the last ${windowLabel()}: ` + [...throttles].sort((a, b) => b[1] - a[1])
        .map(([p, n]) => `partition ${p} (${count(n, "request")})`).join(", ") + "."
      : `No throttling in the last ${windowLabel()}${history.length ? "" : ", and no use"}.`;
    return h("p", { class: "heat-summary", "data-throttled-partitions": [...throttles.keys()].join(" ") }, text);
  }

  async function contributors(view, window) {
    const found = new Map();
    const names = [null, ...view.indexes.map((i) => i.index)];
    await Promise.all(names.map(async (name) => {
      const where = h("div", { class: "contributors" });
      await attempt(where, () => showContributors(where, table, name, window, windowLabel()));
      found.set(name ?? "", where);
    }));
    if (window === state.window) state.contributors = found;
  }

  // The view with the window's history (kept until the next such poll) and the top keys of the same window. An
  // answer for a window no longer picked (the user changed it while it was on its way) is not kept.
  async function windowed() {
    const window = state.window;
    const view = await admin(`${path}?window=${window}`);
    if (window !== state.window) return view;
    const resources = new Map([["", view.history], ...view.indexes.map((i) => [i.index, i.history])]);
    state.history = { window: view.window, resources };
    await contributors(view, window);
    return view;
  }

  async function poll() {
    if (state.stopped) return;
    const started = performance.now();
    const view = await attempt(status, () => (state.polls % HISTORY_EVERY === 0 ? windowed() : admin(path)));
    const delay = Math.max(POLL_MS, (performance.now() - started) * POLL_SHARE);
    if (view && !state.stopped) update(view);
    if (!state.stopped && live.checked) state.timer = setTimeout(poll, delay);
  }

  windowPicker.addEventListener("change", async () => {
    state.window = Number(windowPicker.value);
    const view = await attempt(status, windowed);
    if (view && !state.stopped) update(view);
  });

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
