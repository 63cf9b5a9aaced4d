// The console's router: the location hash names the page (#/tables, #/table/T, #/items/T, #/partitions/T,
// #/streams/T, #/triggers, #/backups, #/transfers, #/cluster, #/signin); each page module renders into <main> and returns a function that stops its timers.

import { admin, serverInfo } from "./api.js";
import { errorBox, h, link, replace } from "./dom.js";
import * as backups from "./backups.js";
import * as cluster from "./cluster.js";
import * as items from "./items.js";
import * as partitions from "./partitions.js";
import * as signin from "./signin.js";
import * as streams from "./streams.js";
import * as table from "./table.js";
import * as tables from "./tables.js";
import * as transfers from "./transfers.js";
import * as triggers from "./triggers.js";

const PAGES = { tables, table, items, partitions, streams, triggers, signin, backups, transfers, cluster };
const TABLE_TABS = [["table", "Overview"], ["items", "Items"], ["partitions", "Partitions"], ["streams", "Stream"]];
let stopPage = null;

function parse() {
  const [page, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  return { page: PAGES[page] ? page : "tables", name: rest.length ? decodeURIComponent(rest.join("/")) : null };
}

// "Cluster" only on a cluster node; "Sign in" only where the server verifies signatures (a server without
// authentication takes any request).
function navigation(page, name, signs, clustered) {
  const top = [["tables", "Tables"], ["backups", "Backups"], ["triggers", "Triggers"], ["transfers", "Exports"], ...(clustered ? [["cluster", "Cluster"]] : []), ...(signs ? [["signin", "Sign in"]] : [])].map(([p, label]) =>
    h("a", { href: link(p), class: p === page ? "current" : null }, label));
  const tabs = name == null ? [] : [h("span", { class: "table-name", title: name }, name), TABLE_TABS.map(([p, label]) =>
    h("a", { href: link(p, name), class: p === page ? "current" : null, "data-tab": p }, label))];
  return [top, tabs];
}

async function show() {
  if (stopPage) stopPage();
  stopPage = null;
  const { page, name } = parse();
  const { verifies_signatures: signs, clustered } = await serverInfo();
  replace(document.getElementById("nav"), navigation(page, name, signs, clustered));
  const main = document.getElementById("main");
  replace(main);
  try {
    stopPage = (await PAGES[page].render(main, name)) ?? null;
  } catch (error) {
    replace(main, errorBox(error));
  }
}

// A request refused for want of a (valid) key: ask for one, once, whatever page made it.
window.addEventListener("dynastore-sign-in", (event) => {
  if (parse().page === "signin") return;
  signin.because(event.detail);
  location.hash = "#/signin";
});

async function showClock() {
  try {
    const clock = await admin("clock");
    const when = new Date(clock.now * 1000).toISOString().replace("T", " ").slice(0, 19);
    document.getElementById("clock").textContent = `server time ${when} UTC${clock.manual ? " (manual clock)" : ""}`;
  } catch {
    document.getElementById("clock").textContent = "";
  }
}

window.addEventListener("hashchange", show);
show();
showClock();
setInterval(showClock, 5000);
