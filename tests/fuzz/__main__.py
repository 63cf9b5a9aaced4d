"""``python -m tests.fuzz``: a bounded fuzz run against a server (started here with default options unless --url)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.fuzz import runner


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--url", help="a running server (default: start one with default options on a free port)")
    parser.add_argument("--requests", type=int, default=100_000, help="how many requests to send (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed: one seed, one sequence of requests")
    parser.add_argument("--time-limit", type=float, default=3600.0, help="stop after this many seconds (default 3600)")
    parser.add_argument("--failures", type=Path, help="also write the failures to this file")
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        from tests.e2e.server_process import ServerProcess

        data_dir = Path(tempfile.mkdtemp(prefix="dynastore-fuzz-"))
        server = ServerProcess(data_dir=data_dir)
        url = server.url
    try:
        report = runner.run(url, args.requests, seed=args.seed, time_limit=args.time_limit, log=sys.stdout)
    finally:
        if server is not None:
            server.stop()
    print(report.summary())
    print("400s by error type:", dict(report.errors.most_common()))
    for failure in report.failures[:20]:
        print("FAILURE", failure[:1500])
    if args.failures is not None:
        args.failures.write_text("\n".join(report.failures))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
