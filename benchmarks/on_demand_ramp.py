"""Which rule throttles a write load on a new on-demand table: puts of distinct ~200-byte items (dynabench's put
workload) at a given rate, on the injectable clock (no wall time), through the engine's write path, each refusal
classified by the bucket that refused it: the table's bucket (what the table may take at once: 4,000 write units
at first, then twice its previous peak) or a partition's maximum (1,000 write units a second).

    python benchmarks/on_demand_ramp.py RATE [SECONDS] [RAMP]

``RATE`` writes a second, reached linearly over the first ``RAMP`` seconds (default 0: at once); prints each
second's writes, refusals by rule, the table's peak, throughput and partitions.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynastore.engine import writes  # noqa: E402
from dynastore.engine.capacity.state import TableState  # noqa: E402
from dynastore.engine.keys import storage_key  # noqa: E402
from dynastore.errors import ThrottlingException  # noqa: E402
from dynastore.model.item_size import item_size  # noqa: E402
from dynastore.model.table_schema import KeyAttr  # noqa: E402
from tests.unit.engine.tables import create, make_ctx  # noqa: E402

SK = KeyAttr("sk", "S")


def arrivals(rate: float, seconds: float, ramp: float) -> list[float]:
    """The times of the writes: the rate rises linearly to ``rate`` over ``ramp`` seconds, then holds."""
    times, t = [], 0.0
    while t < seconds:
        current = rate if ramp <= 0 or t >= ramp else max(rate * t / ramp, rate / 100)
        t += 1 / current
        times.append(t)
    return times


def refused_by(st: TableState, key: bytes) -> str:
    res = st.base
    lane = res.writes[res.pmap.index_of(int.from_bytes(key[5:9], "big"))]
    return "partition maximum" if not lane.ceiling.under_maximum() else "table bucket (initial / 2x peak)"


def main(rate: float, seconds: float, ramp: float) -> None:
    ctx, clock = make_ctx()
    td = create(ctx, "sink", range_key=SK)
    st = ctx.capacity.find("sink")
    start = clock.now()
    per_second: dict[int, Counter[str]] = {}
    for number, t in enumerate(arrivals(rate, seconds, ramp)):
        clock.advance(start + t - clock.now())
        item = {"pk": {"S": f"p{number:09d}"}, "sk": {"S": "s"}, "v": {"S": "x" * 170}}
        key = storage_key(td, item)
        counts = per_second.setdefault(int(t), Counter())
        counts["writes"] += 1
        try:
            writes.perform(ctx, td, key, writes.PutPlan(item, None, item_size(item)))
        except ThrottlingException:
            counts[refused_by(st, key)] += 1
        counts["partitions"] = len(st.base.pmap)
        counts["throughput"] = int(st.base.write_total.rate)
        counts["peak"] = int(st.base.peaks[1])
    for second, counts in sorted(per_second.items()):
        print(f"second {second}: " + ", ".join(f"{name} {n}" for name, n in counts.items()))


if __name__ == "__main__":
    main(
        float(sys.argv[1]),
        float(sys.argv[2]) if len(sys.argv) > 2 else 6,
        float(sys.argv[3]) if len(sys.argv) > 3 else 0,
    )
