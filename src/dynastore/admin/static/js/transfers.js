// Exports and imports (ListExports + DescribeExport, ListImports): each one's state, its counts and, when it
// failed, why. Refreshed every two seconds while one runs (docs/backups.md "Export and import").

import { dynamo } from "./api.js";
import { attempt, bytes, h, replace } from "./dom.js";

export async function render(main) {
  const exports = h("div", { id: "export-list" });
  const imports = h("div", { id: "import-list" });
  const status = h("div");
  main.append(h("h1", {}, "Exports and imports"), status, h("h2", {}, "Exports"), exports, h("h2", {}, "Imports"), imports);
  let timer = null;
  const poll = async () => {
    const view = await attempt(status, load);
    if (view) {
      replace(exports, exportTable(view.exports));
      replace(imports, importTable(view.imports));
    }
    const running = view && [...view.exports, ...view.imports].some((d) => (d.ExportStatus ?? d.ImportStatus) === "IN_PROGRESS");
    timer = setTimeout(poll, running ? 2000 : 10000);
  };
  await poll();
  return () => clearTimeout(timer);
}

async function load() {
  const summaries = [];
  let token;
  do {
    const page = await dynamo("ListExports", token ? { NextToken: token } : {});
    summaries.push(...page.ExportSummaries);
    token = page.NextToken;
  } while (token);
  const exports = await Promise.all(summaries.map(async (s) =>
    (await dynamo("DescribeExport", { ExportArn: s.ExportArn })).ExportDescription));
  const imports = [];
  do {
    const page = await dynamo("ListImports", token ? { NextToken: token } : {});
    imports.push(...page.ImportSummaryList);
    token = page.NextToken;
  } while (token);
  const described = await Promise.all(imports.map(async (s) =>
    (await dynamo("DescribeImport", { ImportArn: s.ImportArn })).ImportTableDescription));
  return { exports: exports.reverse(), imports: described.reverse() };
}

const when = (t) => (t == null ? "" : new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19));
const tableOf = (arn) => arn.split(":table/")[1].split("/")[0];
const idOf = (arn) => arn.split("/").pop();
const failure = (d) => (d.FailureCode ? h("span", { class: "error-type" }, `${d.FailureCode}: ${d.FailureMessage ?? ""}`) : "");

function exportTable(list) {
  if (!list.length) return h("p", { class: "muted" }, "No exports yet.");
  const head = ["export", "table", "state", "type", "format", "items", "size", "to", "started", "ended", "failure"];
  return h("table", { class: "transfers" }, h("tr", {}, head.map((c) => h("th", {}, c))), list.map((d) =>
    h("tr", { class: `transfer ${d.ExportStatus.toLowerCase()}` },
      h("td", { class: "mono" }, idOf(d.ExportArn)), h("td", {}, tableOf(d.TableArn)), h("td", {}, d.ExportStatus),
      h("td", {}, d.ExportType), h("td", {}, d.ExportFormat), h("td", { class: "num" }, d.ItemCount ?? ""),
      h("td", { class: "num" }, d.BilledSizeBytes == null ? "" : bytes(d.BilledSizeBytes)),
      h("td", { class: "mono" }, `s3://${d.S3Bucket}/${d.ExportManifest ?? d.S3Prefix ?? ""}`),
      h("td", {}, when(d.StartTime)), h("td", {}, when(d.EndTime)), h("td", {}, failure(d)))));
}

function importTable(list) {
  if (!list.length) return h("p", { class: "muted" }, "No imports yet.");
  const head = ["import", "table", "state", "format", "processed", "imported", "errors", "read", "from", "started", "ended", "failure"];
  return h("table", { class: "transfers" }, h("tr", {}, head.map((c) => h("th", {}, c))), list.map((d) =>
    h("tr", { class: `transfer ${d.ImportStatus.toLowerCase()}` },
      h("td", { class: "mono" }, idOf(d.ImportArn)), h("td", {}, tableOf(d.TableArn)), h("td", {}, d.ImportStatus),
      h("td", {}, `${d.InputFormat} ${d.InputCompressionType ?? ""}`), h("td", { class: "num" }, d.ProcessedItemCount),
      h("td", { class: "num" }, d.ImportedItemCount), h("td", { class: "num" }, d.ErrorCount),
      h("td", { class: "num" }, bytes(d.ProcessedSizeBytes ?? 0)),
      h("td", { class: "mono" }, `s3://${d.S3BucketSource.S3Bucket}/${d.S3BucketSource.S3KeyPrefix ?? ""}`),
      h("td", {}, when(d.StartTime)), h("td", {}, when(d.EndTime)), h("td", {}, failure(d)))));
}
