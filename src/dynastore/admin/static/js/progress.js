// Long work running in the server (GET /dynastore/progress, engine/progress.py): GSI backfills, TTL sweeps deleting
// many items, partition splits, backups, restores, exports and imports, each with a bar and the server's estimate.

import { admin } from "./api.js";
import { bytes, h, num, replace } from "./dom.js";

const TITLES = {
  gsi_backfill: "Backfilling", ttl_sweep: "TTL sweep", partition_split: "Splitting a partition", backup: "Backing up",
  restore: "Restoring", export: "Exporting", import: "Importing",
};

// The jobs running now ([] when the endpoint cannot be read: the page works without them).
export async function runningJobs() {
  try {
    return (await admin("progress")).jobs ?? [];
  } catch {
    return [];
  }
}

export function backfillOf(jobs, table, index) {
  return jobs.find((j) => j.kind === "gsi_backfill" && j.table === table && j.index === index);
}

function amount(job, n) {
  return job.unit === "bytes" ? bytes(n) : `${num(n, 0)} items`;
}

// "Backfilling 42% (~12 s)": the share done when the total is known, else what is done; the estimate once known.
export function jobText(job) {
  const title = TITLES[job.kind] ?? job.kind;
  const done = job.percent == null ? amount(job, job.done) : `${Math.floor(job.percent)}%`;
  const left = job.seconds_left == null ? "" : ` (~${num(Math.ceil(job.seconds_left), 0)} s)`;
  return `${title} ${done}${left}`;
}

export function jobBar(job) {
  const title = job.total == null ? amount(job, job.done) : `${amount(job, job.done)} of ${amount(job, job.total)}`;
  return h("span", { class: "job", "data-kind": job.kind },
    h("progress", { class: "job-bar", max: 100, ...(job.percent == null ? {} : { value: job.percent }), title }),
    " ", h("span", { class: "job-text" }, jobText(job)));
}

// A card of every job running (hidden while none runs).
export function jobsCard(jobs) {
  const card = h("section", { class: "card", id: "jobs" });
  showJobs(card, jobs);
  return card;
}

export function showJobs(card, jobs) {
  card.hidden = !jobs.length;
  replace(card, h("h2", {}, "Running now"), h("table", {},
    h("tr", {}, ["Table", "Index", "Progress"].map((t) => h("th", {}, t))),
    jobs.map((j) => h("tr", { class: "job-row" }, h("td", {}, j.table), h("td", {}, j.index ?? ""), h("td", {}, jobBar(j))))));
}
