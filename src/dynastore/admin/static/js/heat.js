// What the partition page computes from two polls of GET /dynastore/partitions/<table>: units and throttles a
// second per partition, how hot each partition is (its busier direction's rate over its provisioned share), and a
// bounded history of that heat for the heat map. Pure functions and one small class: no page code here.

export const HISTORY = 120; // samples kept per table or index (two minutes at one poll a second)
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

// The heat history of one table or index: a column per poll, reset when the partition map changes.
export class History {
  constructor() {
    this.samples = [];
    this.signature = null;
  }

  add(resource, sample) {
    const sig = signature(resource);
    if (sig !== this.signature) {
      this.samples = [];
      this.signature = sig;
    }
    if (sample) this.samples.push(sample);
    if (this.samples.length > HISTORY) this.samples.shift();
  }
}
