// A table's point-in-time recovery: DescribeContinuousBackups (status, period, restorable window), turning it on
// or off (UpdateContinuousBackups) and RestoreTableToPointInTime into a new table (docs/backups.md).

import { dynamo } from "./api.js";
import { attempt, field, h, link, replace } from "./dom.js";

function when(seconds) {
  return new Date(seconds * 1000).toISOString();
}

export async function recoveryCard(name) {
  const card = h("section", { class: "card", id: "recovery" }, h("h2", {}, "Point-in-time recovery"));
  const status = h("div", { id: "recovery-status" });
  const body = h("div", {});
  card.append(body, status);
  await show(name, body, status);
  return card;
}

async function show(name, body, status) {
  const { ContinuousBackupsDescription: d } = await dynamo("DescribeContinuousBackups", { TableName: name });
  const p = d.PointInTimeRecoveryDescription;
  const on = p.PointInTimeRecoveryStatus === "ENABLED";
  const window = p.EarliestRestorableDateTime == null ? "its first base is being taken"
    : `restorable from ${when(p.EarliestRestorableDateTime)} to ${when(p.LatestRestorableDateTime)}`;
  const days = h("input", { name: "days", type: "number", min: 1, max: 35, value: p.RecoveryPeriodInDays ?? 35, size: 3 });
  const toggle = async () => {
    const spec = { PointInTimeRecoveryEnabled: !on };
    if (!on) spec.RecoveryPeriodInDays = Number(days.value);
    const done = await attempt(status, () => dynamo("UpdateContinuousBackups", { TableName: name, PointInTimeRecoverySpecification: spec }));
    if (done) await show(name, body, status);
  };
  replace(body,
    h("p", { id: "recovery-state" }, on ? `ENABLED · ${p.RecoveryPeriodInDays} day(s) · ${window}` : "DISABLED"),
    h("div", { class: "row" }, on ? null : field("Days", days),
      h("button", { id: "recovery-toggle", onclick: toggle }, on ? "Turn off" : "Turn on")),
    on ? restoreForm(name, status) : null);
}

function restoreForm(name, status) {
  const target = h("input", { name: "target", placeholder: "new table name" });
  const instant = h("input", { name: "instant", placeholder: "ISO time (empty: latest)", size: 26 });
  const form = h("form", { id: "restore-to-point-in-time", class: "row" }, field("Restore into", target),
    field("as of", instant), h("button", { type: "submit" }, "Restore"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const request = { SourceTableName: name, TargetTableName: target.value };
    if (instant.value.trim()) request.RestoreDateTime = Date.parse(instant.value) / 1000;
    else request.UseLatestRestorableTime = true;
    const done = await attempt(status, () => dynamo("RestoreTableToPointInTime", request));
    if (done) {
      const t = done.TableDescription;
      replace(status, h("p", { class: "ok" }, `Restoring: `, h("a", { href: link("table", t.TableName) }, t.TableName), ` is ${t.TableStatus}.`));
    }
  });
  return form;
}
