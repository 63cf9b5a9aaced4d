// Items: Query (key condition on the table or an index, multi-attribute keys included, direction) or Scan (a filter), a page at a time
// (LastEvaluatedKey), the item editor (editor.js) for a row or a new item, and a PartiQL box (partiql.js).

import { dynamo } from "./api.js";
import { attempt, count, field, h, replace, select } from "./dom.js";
import { brief, itemToDynamo } from "./ddbjson.js";
import { openEditor } from "./editor.js";
import { partiqlCard } from "./partiql.js";

const CONDITIONS = ["(none)", "=", "<", "<=", ">", ">=", "begins_with", "between"];

export async function render(main, table) {
  const { Table: t } = await dynamo("DescribeTable", { TableName: table });
  const indexes = [...(t.GlobalSecondaryIndexes ?? []), ...(t.LocalSecondaryIndexes ?? [])];
  const indexSelect = select("Index", ["(table)", ...indexes.map((i) => i.IndexName)], "(table)");
  const keyValues = h("span", { class: "key-values" }, keyFields(t.KeySchema));
  indexSelect.addEventListener("change", () => {
    const index = indexes.find((i) => i.IndexName === indexSelect.value);
    replace(keyValues, keyFields((index ?? t).KeySchema));
  });
  const form = h("form", { id: "item-search" },
    h("div", { class: "row" },
      field("Operation", select("Operation", ["Scan", "Query"], "Scan")),
      field("Index", indexSelect),
      keyValues,
      field("Sort key", select("RangeOp", CONDITIONS, "(none)")),
      field("value", h("input", { name: "RangeValue", size: 10 })),
      field("and", h("input", { name: "RangeValue2", size: 10 })),
      field("Order", select("Order", ["ascending", "descending"], "ascending")),
      field("Limit", h("input", { name: "Limit", type: "number", min: 1, value: 25, size: 5 }))),
    h("div", { class: "row" },
      field("Filter expression", h("input", { name: "Filter", size: 40, placeholder: "#a > :v" })),
      field("Names (JSON)", h("input", { name: "Names", size: 20, placeholder: '{"#a": "price"}' })),
      field("Values (plain JSON)", h("input", { name: "Values", size: 20, placeholder: '{":v": 10}' })),
      h("button", { type: "submit", id: "run-search" }, "Run"),
      h("button", { type: "button", class: "plain", id: "new-item", onclick: () => openEditor(editorArea, t, null, rerun) }, "New item")));
  const status = h("div");
  const results = h("div", { id: "item-results" });
  const editorArea = h("div", { id: "editor-area" });
  main.append(h("h1", {}, `Items of ${table}`), h("section", { class: "card" }, form, status), editorArea, h("section", { class: "card" }, results),
    partiqlCard(table, t.KeySchema.map((k) => k.AttributeName)));
  let pages = [undefined]; // the ExclusiveStartKey of each page seen
  const run = async (page) => {
    const request = build(form, t, indexes);
    if (pages[page]) request.ExclusiveStartKey = pages[page];
    const answer = await attempt(status, () => dynamo(request.Operation, { ...request, Operation: undefined }));
    if (!answer) return;
    pages = pages.slice(0, page + 1);
    if (answer.LastEvaluatedKey) pages.push(answer.LastEvaluatedKey);
    show(results, answer, t, page, pages.length > page + 1, run, (item) => openEditor(editorArea, t, item, rerun));
  };
  const rerun = () => run(pages.length > 1 ? pages.length - 2 : 0);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    pages = [undefined];
    run(0);
  });
  await run(0);
}

function value(form, name) {
  return form.querySelector(`[name="${name}"]`).value.trim();
}

function keysOf(schema, kind) {
  return schema.filter((k) => k.KeyType === kind).map((k) => k.AttributeName);
}

// A Query's key inputs: a value per partition attribute and, for a multi-attribute sort key, an optional
// equality per sort attribute but the last; the "Sort key" condition applies to the first sort attribute left
// without one (DynamoDB's rule: equalities from the left, a range only on the last attribute conditioned).
function keyFields(schema) {
  const hashes = keysOf(schema, "HASH");
  const ranges = keysOf(schema, "RANGE");
  const multi = hashes.length > 1 || ranges.length > 1;
  return [
    hashes.map((name, i) => field(multi ? `${name} =` : "Partition key value", h("input", { name: i ? `HashValue${i}` : "HashValue", size: 14 }))),
    ranges.slice(0, -1).map((name, i) => field(`${name} =`, h("input", { name: `SortValue${i}`, size: 10, placeholder: "(optional)" }))),
  ];
}

// A typed key value from the text typed: the attribute's type from AttributeDefinitions.
function typed(t, name, text) {
  const type = t.AttributeDefinitions.find((a) => a.AttributeName === name)?.AttributeType ?? "S";
  return { [type]: text };
}

function build(form, t, indexes) {
  const operation = value(form, "Operation");
  const indexName = value(form, "Index");
  const index = indexes.find((i) => i.IndexName === indexName);
  const request = { Operation: operation, TableName: t.TableName, Limit: Number(value(form, "Limit")) || undefined };
  if (index) request.IndexName = index.IndexName;
  const names = value(form, "Names") ? JSON.parse(value(form, "Names")) : {};
  const values = value(form, "Values") ? itemToDynamo(JSON.parse(value(form, "Values"))) : {};
  if (value(form, "Filter")) request.FilterExpression = value(form, "Filter");
  if (operation === "Query") {
    const schema = (index ?? t).KeySchema;
    const ranges = keysOf(schema, "RANGE");
    const conditions = keysOf(schema, "HASH").map((name, i) => {
      const ref = `pk${i || ""}`;
      names[`#${ref}`] = name;
      values[`:${ref}`] = typed(t, name, value(form, i ? `HashValue${i}` : "HashValue"));
      return `#${ref} = :${ref}`;
    });
    let next = 0; // the first sort attribute without an equality
    for (; next < ranges.length - 1 && value(form, `SortValue${next}`); next++) {
      names[`#se${next}`] = ranges[next];
      values[`:se${next}`] = typed(t, ranges[next], value(form, `SortValue${next}`));
      conditions.push(`#se${next} = :se${next}`);
    }
    const range = ranges[next];
    const op = value(form, "RangeOp");
    if (range && op !== "(none)") {
      names["#sk"] = range;
      values[":sk"] = typed(t, range, value(form, "RangeValue"));
      if (op === "begins_with") conditions.push("begins_with(#sk, :sk)");
      else if (op === "between") {
        values[":sk2"] = typed(t, range, value(form, "RangeValue2"));
        conditions.push("#sk BETWEEN :sk AND :sk2");
      } else conditions.push(`#sk ${op} :sk`);
    }
    request.KeyConditionExpression = conditions.join(" AND ");
    request.ScanIndexForward = value(form, "Order") === "ascending";
  }
  if (Object.keys(names).length) request.ExpressionAttributeNames = names;
  if (Object.keys(values).length) request.ExpressionAttributeValues = values;
  return request;
}

function show(results, answer, t, page, more, run, edit) {
  const keys = t.KeySchema.map((k) => k.AttributeName);
  const columns = [...new Set([...keys, ...answer.Items.flatMap((item) => Object.keys(item))])].slice(0, 12);
  replace(results,
    h("p", {}, `Page ${page + 1}: ${count(answer.Count, "item")} (${answer.ScannedCount} evaluated). `,
      page > 0 ? h("button", { class: "plain", id: "previous-page", onclick: () => run(page - 1) }, "Previous page") : null, " ",
      more ? h("button", { class: "plain", id: "next-page", onclick: () => run(page + 1) }, "Next page") : null),
    h("table", { id: "items" }, h("tr", {}, columns.map((c) => h("th", {}, c))),
      answer.Items.map((item) => h("tr", { class: "clickable item", onclick: () => edit(item) },
        columns.map((c) => h("td", {}, brief(item[c])))))));
}
