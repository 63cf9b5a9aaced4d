// The item editor: an item as DynamoDB JSON or as plain JSON (ddbjson.js), PutItem and DeleteItem with an
// optional condition expression.

import { dynamo } from "./api.js";
import { attempt, field, h, replace } from "./dom.js";
import { itemToDynamo, itemToPlain } from "./ddbjson.js";

export function openEditor(area, t, item, saved) {
  let format = "plain";
  const text = h("textarea", { id: "item-json", rows: 14 });
  const status = h("div", { id: "editor-status" });
  const condition = h("input", { name: "Condition", size: 40, placeholder: "attribute_not_exists(#k)" });
  const names = h("input", { name: "CondNames", size: 20, placeholder: '{"#k": "id"}' });
  const values = h("input", { name: "CondValues", size: 20, placeholder: '{":v": 1}' });
  const current = () => {
    const parsed = JSON.parse(text.value);
    return format === "plain" ? itemToDynamo(parsed) : parsed;
  };
  const setItem = (dynamoItem) => {
    text.value = JSON.stringify(format === "plain" ? itemToPlain(dynamoItem) : dynamoItem, null, 2);
  };
  const switchTo = (wanted) => attempt(status, async () => {
    const dynamoItem = current();
    format = wanted;
    setItem(dynamoItem);
  });
  const conditional = (request) => {
    if (condition.value.trim()) request.ConditionExpression = condition.value.trim();
    if (names.value.trim()) request.ExpressionAttributeNames = JSON.parse(names.value);
    if (values.value.trim()) request.ExpressionAttributeValues = itemToDynamo(JSON.parse(values.value));
    return request;
  };
  const put = () => attempt(status, async () => {
    await dynamo("PutItem", conditional({ TableName: t.TableName, Item: current() }));
    replace(status, h("p", { class: "ok" }, "Saved."));
    saved();
  });
  const remove = () => attempt(status, async () => {
    const item = current();
    const key = Object.fromEntries(t.KeySchema.map((k) => [k.AttributeName, item[k.AttributeName]]));
    await dynamo("DeleteItem", conditional({ TableName: t.TableName, Key: key }));
    replace(status, h("p", { class: "ok" }, "Deleted."));
    saved();
  });
  setItem(item ?? newItem(t));
  replace(area, h("section", { class: "card", id: "editor" },
    h("h2", {}, item ? "Item" : "New item"),
    h("div", { class: "row" },
      h("label", {}, h("input", { type: "radio", name: "format", checked: true, onchange: () => switchTo("plain") }), " plain JSON"),
      h("label", {}, h("input", { type: "radio", name: "format", id: "format-dynamodb", onchange: () => switchTo("dynamodb") }), " DynamoDB JSON")),
    text,
    h("div", { class: "row" }, field("Condition expression", condition), field("Names (JSON)", names), field("Values (plain JSON)", values)),
    h("div", { class: "row" },
      h("button", { id: "put-item", onclick: put }, "Put item"),
      item ? h("button", { class: "danger", id: "delete-item", onclick: remove }, "Delete item") : null,
      h("button", { class: "plain", onclick: () => replace(area) }, "Close")),
    status));
}

function newItem(t) {
  const typeOf = (name) => t.AttributeDefinitions.find((a) => a.AttributeName === name)?.AttributeType ?? "S";
  return Object.fromEntries(t.KeySchema.map((k) => [k.AttributeName, { [typeOf(k.AttributeName)]: typeOf(k.AttributeName) === "N" ? "0" : "" }]));
}
