// What the partition page computes from GET /dynastore/partitions/<table>: units and throttles a second per
// partition between two polls, how hot each partition is (its busier direction's rate over its provisioned share),
// and the heat map's columns from the history the server keeps (?window=). Pure functions: no page code here.

// The windows the page offers (seconds): the server keeps one hour.
export const WINDOWS = [[300, "5 min"], [900, "15 min"], [3600, "1 h"]];
export const HASH_SPACE = 2 ** 32;

function signature(resource) {
  return resource.partitions.map((p) => p.hash_range.join("-")).join(",");
}

// Per partition {read, write, throttled, heat} a second between `before` and `after` (a resource each: the table's
// view or one of its indexes), or null when the partitions changed or no time passed on either clock.
export function rates(before, after, seconds) {
  if (!before || signature(before) !== signature(after) || !(seconds > 0)) return null;
  return after.partitions.map((p, i) => {
    const q = before.partitions[i];
    const read = (p.consumed.read - q.consumed.read) / seconds;
    const write = (p.consumed.write - q.consumed.write) / seconds;
    const throttled = (p.throttled.read - q.throttled.read + p.throttled.write - q.throttled.write) / seconds;
    return { read, write, throttled, heat: heat(read, write, p.provisioned) };
  });
}

export function heat(read, write, share) {
  const r = share.read > 0 ? read / share.read : 0;
  const w = share.write > 0 ? write / share.write : 0;
  return Math.max(r, w, 0);
}

export function totalThrottled(p) {
  return p.throttled.read + p.throttled.write;
}

// A colour for a heat (1 = the partition's whole share) or red when it throttled.
export function colour(value, throttled) {
  if (throttled) return "#b3261e";
  const t = Math.min(value, 1);
  const light = 96 - t * 46;
  return `hsl(${38 - t * 30}, 95%, ${light}%)`;
}

// The heat map of one table or index over the server's window ({since, until, bucket_seconds}): one column per
// bucket of the window, each a list of {heat, throttled} per partition of today's map (null: no use in it).
export function columnsOf(history, window, partitions) {
  const step = window.bucket_seconds;
  const first = window.since - (window.since % step);
  const count = Math.max(1, Math.ceil((window.until - first) / step));
  const columns = new Array(count).fill(null);
  for (const bucket of history) {
    const column = Math.floor((bucket.start - first) / step);
    if (column < 0 || column >= count) continue;
    const cells = partitions.map(() => ({ heat: 0, throttled: 0 }));
    for (const row of bucket.partitions) {
      const share = partitions[row.partition]?.provisioned ?? { read: 0, write: 0 };
      cells[row.partition] = {
        heat: heat(row.consumed.read / step, row.consumed.write / step, share),
        throttled: row.throttled.read + row.throttled.write,
      };
    }
    columns[column] = cells;
  }
  return columns;
}
