// A few helpers for building the page without a framework.

// h("div", {class: "x", onclick: f}, child, ...): children are nodes, strings, numbers, arrays or null.
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value == null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "value") node.value = value;
    else if (name === "checked") node.checked = Boolean(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child == null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : String(child));
  }
}

export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

// An error box showing what the server said: the error type and its message.
export function errorBox(error) {
  const type = error?.type ?? error?.name ?? "Error";
  return h("div", { class: "error", role: "alert" }, h("b", { class: "error-type" }, type), " ",
    h("span", { class: "error-message" }, error?.message ?? String(error)));
}

// Run an async action and show its error (or clear the old one) in `where`.
export async function attempt(where, action) {
  replace(where);
  try {
    return await action();
  } catch (error) {
    replace(where, errorBox(error));
    return undefined;
  }
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

export function num(n, digits = 1) {
  if (n == null || Number.isNaN(n)) return "–";
  if (Number.isInteger(n)) return n.toLocaleString("en");
  return n.toLocaleString("en", { maximumFractionDigits: digits });
}

// "1 item", "2 items", "1,000 items": a count and its noun, plural unless one.
export function count(n, noun, nouns = `${noun}s`) {
  return `${num(n)} ${n === 1 ? noun : nouns}`;
}

export function field(label, input) {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

export function select(name, options, value) {
  return h("select", { name }, options.map((o) => h("option", { value: o, selected: o === value }, o)));
}

// The hash of a console page: link("items", "Music") is "#/items/Music".
export function link(page, name) {
  return `#/${page}${name == null ? "" : `/${encodeURIComponent(name)}`}`;
}
