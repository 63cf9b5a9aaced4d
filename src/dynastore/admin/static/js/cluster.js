// Cluster (GET /dynastore/cluster; shown only on a cluster node): the leader, the log's head, the leader changes
// this node has seen and, per node, its applied index and lag (log entries it has still to apply). Refreshed every
// two seconds.

import { admin } from "./api.js";
import { attempt, h, replace } from "./dom.js";

export async function render(main) {
  const view = h("div", { id: "cluster-view" });
  const status = h("div");
  main.append(h("h1", {}, "Cluster"), status, view);
  let timer = null;
  const poll = async () => {
    const cluster = await attempt(status, () => admin("cluster"));
    if (cluster) show(view, cluster);
    timer = setTimeout(poll, 2000);
  };
  await poll();
  return () => clearTimeout(timer);
}

const COLUMNS = ["node", "role", "url", "applied index", "lag"];

function show(view, c) {
  const leader = c.leader
    ? h("p", {}, "Leader ", h("b", { class: "mono" }, c.leader), " ", h("span", { class: "muted mono" }, c.leaderUrl ?? ""))
    : h("p", { class: "error" }, "No leader known: an election is under way, or etcd has no majority.");
  replace(view, h("section", { class: "card" },
    leader,
    h("p", { class: "muted" }, `Log head ${c.logHead}; leader changes seen by ${c.node}: ${c.leaderChanges}. This page is served by ${c.node} (${c.role}).`),
    h("table", { id: "cluster-nodes" }, h("tr", {}, COLUMNS.map((name) => h("th", {}, name))),
      c.nodes.map((n) => nodeRow(c, n)))));
}

function nodeRow(c, n) {
  const role = n.node === c.node ? c.role : n.node === c.leader ? "leader" : "follower";
  const lag = Math.max(0, c.logHead - n.appliedIndex);
  return h("tr", { class: lag ? "throttled node" : "node" },
    h("td", { class: "mono" }, n.node), h("td", {}, role), h("td", { class: "mono" }, n.url),
    h("td", { class: "num" }, n.appliedIndex), h("td", { class: "num" }, lag));
}
