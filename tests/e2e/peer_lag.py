"""Replication lag between two `dynastore serve` processes at a steady write rate (docs/global-tables-peers.md
"Speed"): ``python -m tests.e2e.peer_lag --rate 500 --seconds 20``.

Two servers on 127.0.0.1 (tests/e2e/peer_servers.py), a global table of us-east-1 replicated to us-west-2. Writer
threads put new items into us-east-1 at ``--rate`` a second in all; one of them, every ``--probe-every`` seconds,
also writes the item ``probe`` with the next sequence number and notes when the write was acknowledged. A reader
reads ``probe`` in us-west-2 in a tight loop and notes when it first sees each number. A probe's lag is the time
from its acknowledgement in us-east-1 to its first read in us-west-2 (so it includes up to one read's time).
Prints the write rate reached and the lag's p50, p99 and max in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

from tests.e2e.peer_servers import PeerServers
from tests.e2e.test_global_tables_peers import EAST, TABLE, WEST, add_replica, create_table

_PROBE_KEY = {"pk": {"S": "probe"}}


def _writer(ddb: Any, rate: float, until: float, name: str, counts: list[int]) -> None:
    interval = 1.0 / rate
    next_at = time.monotonic()
    n = 0
    while next_at < until:
        ddb.put_item(TableName=TABLE, Item={"pk": {"S": f"{name}-{n}"}, "v": {"S": "x" * 100}})
        n += 1
        next_at += interval
        pause = next_at - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    counts.append(n)


def _prober(ddb: Any, every: float, until: float, acked: dict[int, float]) -> None:
    seq = 0
    while time.monotonic() < until:
        seq += 1
        ddb.put_item(TableName=TABLE, Item={**_PROBE_KEY, "seq": {"N": str(seq)}})
        acked[seq] = time.monotonic()
        time.sleep(every)


def _reader(ddb: Any, until: float, seen: dict[int, float]) -> None:
    while time.monotonic() < until:
        found = ddb.get_item(TableName=TABLE, Key=_PROBE_KEY).get("Item")
        if found is not None:
            seq = int(found["seq"]["N"])
            seen.setdefault(seq, time.monotonic())


def measure(rate: float, seconds: float, threads: int, probe_every: float) -> dict[str, float]:
    with PeerServers([EAST, WEST], "--capacity", "report") as servers:
        east = servers.client(EAST)
        create_table(east)
        add_replica(east, WEST)
        acked: dict[int, float] = {}
        seen: dict[int, float] = {}
        counts: list[int] = []
        started = time.monotonic()
        until = started + seconds
        workers = [
            threading.Thread(target=_writer, args=(servers.client(EAST), rate / threads, until, f"w{i}", counts))
            for i in range(threads)
        ]
        workers.append(threading.Thread(target=_prober, args=(east, probe_every, until, acked)))
        workers.append(threading.Thread(target=_reader, args=(servers.client(WEST), until + 5.0, seen)))
        # Each thread its own client: a boto3 client is not to be shared between threads while it makes requests.
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        lags = sorted((seen[seq] - at) * 1000 for seq, at in acked.items() if seq in seen)
    quantiles = statistics.quantiles(lags, n=100) if len(lags) >= 2 else lags * 99
    return {
        "writes_per_second": sum(counts) / seconds,
        "probes": len(acked),
        "probes_seen": len(lags),
        "lag_p50_ms": quantiles[49],
        "lag_p99_ms": quantiles[98],
        "lag_max_ms": lags[-1] if lags else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=500.0, help="writes a second in us-east-1, in all")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to write")
    parser.add_argument("--threads", type=int, default=4, help="writer threads")
    parser.add_argument("--probe-every", type=float, default=0.05, help="seconds between probes")
    args = parser.parse_args()
    result = measure(args.rate, args.seconds, args.threads, args.probe_every)
    for name, value in result.items():
        print(f"{name:>18}: {value:,.1f}")


if __name__ == "__main__":
    main()
