// Backups (ListBackups of every type, with GET /dynastore/recovery for the work running): each backup with its
// table, type, status and size, the backups and restores running with their progress, and the backups that
// failed with the reason (docs/backups.md "On-demand backups"). Refreshed every two seconds.

import { admin, dynamo } from "./api.js";
import { attempt, bytes, h, link, num, replace } from "./dom.js";

export async function render(main) {
  const running = h("div", { id: "recovery-running" });
  const list = h("div", { id: "backup-list" }, h("p", { class: "muted" }, "Loading…"));
  const status = h("div");
  main.append(h("h1", {}, "Backups"), status, h("section", { class: "card" }, h("h2", {}, "Running"), running),
    h("section", { class: "card" }, h("h2", {}, "Backups"), list));
  let timer = null;
  const poll = async () => {
    await attempt(status, async () => {
      const [recovery, backups] = await Promise.all([admin("recovery"), allBackups()]);
      showRunning(running, recovery);
      showBackups(list, backups);
    });
    timer = setTimeout(poll, 2000);
  };
  await poll();
  return () => clearTimeout(timer);
}

async function allBackups() {
  const found = [];
  let start;
  do {
    const page = await dynamo("ListBackups", { BackupType: "ALL", ...(start ? { ExclusiveStartBackupArn: start } : {}) });
    found.push(...page.BackupSummaries);
    start = page.LastEvaluatedBackupArn;
  } while (start);
  return found.reverse(); // newest first
}

function progress(done, total) {
  return total ? `${num(done, 0)} of ${num(total, 0)} items (${Math.floor((100 * done) / Math.max(total, 1))}%)` : `${num(done, 0)} items`;
}

function showRunning(running, recovery) {
  const rows = [
    ...recovery.backups.filter((b) => b.status === "CREATING").map((b) =>
      h("tr", { class: "backup-running" }, h("td", {}, "backup"), h("td", { class: "mono" }, b.arn), h("td", {}, progress(b.done ?? 0, b.total)))),
    ...recovery.restores.map((r) =>
      h("tr", { class: "restore-running" }, h("td", {}, "restore"), h("td", {}, h("a", { href: link("table", r.table) }, r.table)),
        h("td", {}, progress(r.done, r.total)))),
    ...recovery.backups.filter((b) => b.failure).map((b) =>
      h("tr", { class: "throttled backup-failed" }, h("td", {}, "failed backup"), h("td", { class: "mono" }, b.arn), h("td", {}, b.failure))),
  ];
  replace(running, rows.length
    ? h("table", {}, h("tr", {}, ["", "what", "progress"].map((t) => h("th", {}, t))), rows)
    : h("p", { class: "muted" }, "No backup or restore is running."));
}

function showBackups(list, backups) {
  if (!backups.length) return replace(list, h("p", { class: "muted" }, "No backups yet (CreateBackup, or dynastore backup TABLE)."));
  replace(list, h("table", {},
    h("tr", {}, ["Name", "Table", "Type", "Status", "Created", "Expires", "Size", "ARN"].map((t) => h("th", {}, t))),
    backups.map((b) => h("tr", { class: "backup", "data-backup": b.BackupName },
      h("td", {}, b.BackupName), h("td", {}, b.TableName), h("td", {}, b.BackupType), h("td", {}, b.BackupStatus),
      h("td", {}, when(b.BackupCreationDateTime)), h("td", {}, b.BackupExpiryDateTime ? when(b.BackupExpiryDateTime) : ""),
      h("td", { class: "num" }, b.BackupSizeBytes == null ? "" : bytes(b.BackupSizeBytes)),
      h("td", { class: "mono" }, b.BackupArn)))));
}

function when(seconds) {
  return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19);
}
