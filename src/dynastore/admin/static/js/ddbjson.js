// DynamoDB JSON ({"S": "x"}, {"N": "1"}, ...) to plain JSON and back, without losing anything: numbers that a
// JavaScript number cannot hold exactly, sets and binary values become one-key objects {"$N": ...}, {"$SS": [...]},
// {"$NS": [...]}, {"$BS": [...]}, {"$B": base64}, which toDynamo reads back.

const TAGGED = ["$N", "$SS", "$NS", "$BS", "$B"];

export function toPlain(value) {
  const [type, payload] = Object.entries(value)[0];
  switch (type) {
    case "S":
    case "BOOL":
      return payload;
    case "NULL":
      return null;
    case "N": {
      const n = Number(payload);
      return String(n) === payload ? n : { $N: payload };
    }
    case "L":
      return payload.map(toPlain);
    case "M":
      return itemToPlain(payload);
    default:
      return { [`$${type}`]: payload }; // B, SS, NS, BS
  }
}

export function itemToPlain(item) {
  const out = {};
  for (const [name, value] of Object.entries(item)) out[name] = toPlain(value);
  return out;
}

export function toDynamo(value) {
  if (value === null) return { NULL: true };
  if (typeof value === "string") return { S: value };
  if (typeof value === "boolean") return { BOOL: value };
  if (typeof value === "number") return { N: String(value) };
  if (Array.isArray(value)) return { L: value.map(toDynamo) };
  const keys = Object.keys(value);
  if (keys.length === 1 && TAGGED.includes(keys[0])) return { [keys[0].slice(1)]: value[keys[0]] };
  return { M: itemToDynamo(value) };
}

export function itemToDynamo(item) {
  if (item === null || typeof item !== "object" || Array.isArray(item)) throw new Error("an item is a JSON object");
  const out = {};
  for (const [name, value] of Object.entries(item)) out[name] = toDynamo(value);
  return out;
}

// A short text of a DynamoDB value for a table cell.
export function brief(value) {
  if (value === undefined) return "";
  const plain = toPlain(value);
  const text = typeof plain === "string" ? plain : JSON.stringify(plain);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
