// The table of partitions of one table or index: a row per partition (the hottest 64 when there are more).

import { bytes, h, num } from "./dom.js";
import { totalThrottled } from "./heat.js";

const MAX_ROWS = 64;
const HEADINGS = ["#", "hash range", "items", "size", "of limit", "RCU share", "WCU share", "read/s", "write/s",
  "burst R", "burst W", "throttled", "throttled/s", "adaptive", "borrowed R/W"];

function pair(value, digits = 1) {
  return `${num(value.read, digits)} / ${num(value.write, digits)}`;
}

function hottest(partitions, now) {
  if (partitions.length <= MAX_ROWS) return partitions.map((_, i) => i);
  const score = (i) => totalThrottled(partitions[i]) * 1e9 + (now?.[i]?.heat ?? 0) * 1e6 + partitions[i].items;
  return partitions.map((_, i) => i).sort((a, b) => score(b) - score(a)).slice(0, MAX_ROWS).sort((a, b) => a - b);
}

export function partitionTable(resource, now, limitBytes) {
  const shown = hottest(resource.partitions, now);
  const rows = shown.map((i) => row(resource.partitions[i], now?.[i], limitBytes));
  const note = shown.length < resource.partitions.length
    ? h("p", { class: "legend" }, `The ${shown.length} hottest of ${resource.partitions.length} partitions.`) : null;
  return [h("div", { class: "scroll-x" }, h("table", { class: "partitions" }, h("tr", {}, HEADINGS.map((t) => h("th", {}, t))), rows)), note];
}

function row(p, rate, limitBytes) {
  const throttled = totalThrottled(p);
  const share = limitBytes > 0 ? p.bytes / limitBytes : 0;
  const lifted = p.adaptive.read || p.adaptive.write;
  return h("tr", { class: throttled > 0 ? "throttled" : null, "data-partition": p.partition, "data-throttled": throttled },
    h("td", {}, p.partition),
    h("td", { class: "mono" }, `${p.hash_range[0]}–${p.hash_range[1]}`),
    h("td", { class: "num" }, num(p.items)),
    h("td", { class: "num" }, bytes(p.bytes)),
    h("td", {}, h("progress", { max: 1, value: Math.min(share, 1), title: `${(share * 100).toFixed(4)}% of ${bytes(limitBytes)}` })),
    h("td", { class: "num" }, num(p.provisioned.read)),
    h("td", { class: "num" }, num(p.provisioned.write)),
    h("td", { class: "num" }, rate ? num(rate.read) : "–"),
    h("td", { class: "num" }, rate ? num(rate.write) : "–"),
    h("td", { class: "num" }, num(p.burst.read)),
    h("td", { class: "num" }, num(p.burst.write)),
    h("td", { class: "num throttled-count" }, num(throttled)),
    h("td", { class: "num" }, rate?.throttled > 0 ? h("span", { class: "badge hot" }, num(rate.throttled)) : "0"),
    h("td", {}, lifted ? h("span", { class: "badge lift" }, `lifted ${p.adaptive.read ? "R" : ""}${p.adaptive.write ? "W" : ""}`) : ""),
    h("td", { class: "num" }, pair(p.borrowed)));
}
