// A table's stream: DescribeStream's status and shards drawn as their lineage (children under their parent), and
// a tail of the newest records (GetShardIterator + GetRecords, once a second, on every shard open when the page
// was opened; reopen the page to follow shards that opened since).

import { dynamo, streams } from "./api.js";
import { attempt, h, replace } from "./dom.js";
import { itemToPlain } from "./ddbjson.js";

const TAIL = 50;
const POLL_MS = 1000;

export async function render(main, table) {
  const { Table: t } = await dynamo("DescribeTable", { TableName: table });
  main.append(h("h1", {}, `Stream of ${table}`));
  if (!t.LatestStreamArn) {
    main.append(h("section", { class: "card" }, h("p", { class: "muted" }, "This table has no stream (UpdateTable StreamSpecification turns one on).")));
    return null;
  }
  const { StreamDescription: d } = await streams("DescribeStream", { StreamArn: t.LatestStreamArn });
  const shardsOf = d.Shards;
  main.append(h("section", { class: "card" },
    h("p", {}, `${d.StreamStatus} · ${d.StreamViewType} · `, h("span", { class: "mono" }, d.StreamArn)),
    h("h2", {}, `Shards (${shardsOf.length})`), lineage(shardsOf)));
  const status = h("div");
  const records = h("div", { id: "stream-records" }, h("p", { class: "muted" }, "Waiting for records…"));
  main.append(h("section", { class: "card" }, h("h2", {}, "Newest records"), status, records));
  return tail(d, status, records);
}

function lineage(shards) {
  const ids = new Set(shards.map((s) => s.ShardId));
  const children = new Map();
  for (const s of shards) {
    const parent = ids.has(s.ParentShardId) ? s.ParentShardId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(s);
  }
  const tree = (parent) => h("ul", {}, (children.get(parent) ?? []).map((s) => h("li", { class: "shard" },
    h("span", { class: "mono" }, s.ShardId), " ",
    h("span", { class: "muted" }, `${s.SequenceNumberRange.StartingSequenceNumber} … ${s.SequenceNumberRange.EndingSequenceNumber ?? "open"}`),
    children.has(s.ShardId) ? tree(s.ShardId) : null)));
  return tree(null);
}

function tail(d, status, where) {
  const seen = [];
  const iterators = new Map();
  let timer = null;
  let stopped = false;
  const open = d.Shards.filter((s) => !s.SequenceNumberRange.EndingSequenceNumber);
  const poll = async () => {
    await attempt(status, async () => {
      for (const shard of open) {
        let iterator = iterators.get(shard.ShardId);
        if (iterator === undefined) {
          ({ ShardIterator: iterator } = await streams("GetShardIterator",
            { StreamArn: d.StreamArn, ShardId: shard.ShardId, ShardIteratorType: "TRIM_HORIZON" }));
        }
        if (iterator == null) continue;
        const page = await streams("GetRecords", { ShardIterator: iterator, Limit: 100 });
        iterators.set(shard.ShardId, page.NextShardIterator ?? null);
        seen.push(...page.Records);
      }
      // Sequence numbers are decimal strings too long for a Number: compare them as BigInts.
      seen.sort((a, b) => (BigInt(a.dynamodb.SequenceNumber) < BigInt(b.dynamodb.SequenceNumber) ? -1 : 1));
      seen.splice(0, Math.max(0, seen.length - TAIL));
      if (seen.length) replace(where, recordTable(seen));
    });
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  };
  poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function recordTable(records) {
  const image = (i) => (i ? JSON.stringify(itemToPlain(i)) : "");
  return h("table", {}, h("tr", {}, ["event", "keys", "new image", "old image", "sequence number"].map((c) => h("th", {}, c))),
    [...records].reverse().map((r) => h("tr", { class: "record" },
      h("td", {}, r.eventName), h("td", { class: "mono" }, image(r.dynamodb.Keys)),
      h("td", { class: "mono" }, image(r.dynamodb.NewImage)), h("td", { class: "mono" }, image(r.dynamodb.OldImage)),
      h("td", { class: "mono" }, r.dynamodb.SequenceNumber))));
}
