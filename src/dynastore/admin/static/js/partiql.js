// PartiQL on a table's items page: any statement of DynamoDB's dialect through ExecuteStatement, its items a page at
// a time (NextToken), and DynamoDB's error as the API gives it.

import { dynamo } from "./api.js";
import { attempt, count, h, replace } from "./dom.js";
import { brief } from "./ddbjson.js";

export function partiqlCard(table, keys) {
  const statement = h("textarea", { id: "partiql-statement", rows: 3, cols: 80, spellcheck: "false" },
    `SELECT * FROM "${table}"`);
  const status = h("div", { id: "partiql-status" });
  const results = h("div", { id: "partiql-results" });
  let tokens = [undefined]; // the NextToken of each page seen
  const run = async (page) => {
    const request = { Statement: statement.value, Limit: 25 };
    if (tokens[page]) request.NextToken = tokens[page];
    const answer = await attempt(status, () => dynamo("ExecuteStatement", request));
    if (!answer) return;
    tokens = tokens.slice(0, page + 1);
    if (answer.NextToken) tokens.push(answer.NextToken);
    show(results, answer.Items ?? [], keys, page, tokens.length > page + 1, run);
  };
  const button = h("button", { type: "button", id: "run-partiql", onclick: () => { tokens = [undefined]; run(0); } }, "Run");
  return h("section", { class: "card" }, h("h2", {}, "PartiQL"), statement, h("div", { class: "row" }, button), status,
    results);
}

function show(results, items, keys, page, more, run) {
  const columns = [...new Set([...keys, ...items.flatMap((item) => Object.keys(item))])].slice(0, 12);
  replace(results,
    h("p", {}, `Page ${page + 1}: ${count(items.length, "item")}. `,
      page > 0 ? h("button", { class: "plain", onclick: () => run(page - 1) }, "Previous page") : null, " ",
      more ? h("button", { class: "plain", id: "partiql-next", onclick: () => run(page + 1) }, "Next page") : null),
    items.length ? h("table", { id: "partiql-items" }, h("tr", {}, columns.map((c) => h("th", {}, c))),
      items.map((item) => h("tr", {}, columns.map((c) => h("td", {}, brief(item[c])))))) : null);
}
