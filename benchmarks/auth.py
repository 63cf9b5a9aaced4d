"""What ``--auth sigv4`` costs a request, in interleaved rounds (medians, microseconds a request):

1. SigV4 verification alone (security/authenticator.py) on botocore-signed GetItem and PutItem requests, against
   the format check that ``--auth none`` makes (``check_form``, which ``authenticate`` makes first too);
2. ``Protocol.handle`` of a signed GetItem by two in-memory dynastores, one with ``--auth none`` and one with
   ``--auth sigv4``: the whole request path, HTTP aside.

Run: ``python benchmarks/auth.py [requests] [rounds]``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from dynastore.build_kind import build_kind
from dynastore.security import authenticator as authenticator_module
from dynastore.security.authenticator import Authenticator, check_form
from dynastore.security.credentials import CredentialStore, seeded_admin
from dynastore.util.clock import ManualClock

KEY_ID, SECRET, REGION = "AKIABENCHMARKKEY0001", "benchmark-secret-benchmark-secret-000000", "us-east-1"
BODIES = {
    "GetItem": b'{"TableName":"bench_table","Key":{"pk":{"S":"user#000123"}}}',
    "PutItem": b'{"TableName":"bench_table","Item":{"pk":{"S":"user#000123"},"payload":{"S":"' + b"x" * 180 + b'"}}}',
}


def signed_headers(operation: str, body: bytes) -> tuple[dict[str, str], float]:
    """The headers a server receives for a botocore-signed request (lower-case names), and when it was signed."""
    request = AWSRequest(
        method="POST",
        url="http://127.0.0.1:8000/",
        data=body,
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"DynamoDB_20120810.{operation}",
            "User-Agent": "Boto3/1.34 md/Botocore#1.34 ua/2.0 os/linux lang/python#3.11",
            "Content-Length": str(len(body)),
        },
    )
    SigV4Auth(Credentials(KEY_ID, SECRET), "dynamodb", REGION).add_auth(request)
    request.headers["Host"] = "127.0.0.1:8000"
    signed_at = time.time()
    return {name.lower(): value for name, value in request.headers.items()}, signed_at


def _compare(times: dict[str, list[float]]) -> str:
    """Medians, the fastest round in brackets (a busy machine slows rounds, never speeds them up)."""
    none, sigv4 = times["none"], times["sigv4"]
    return (
        f"--auth none {statistics.median(none):6.2f} us ({min(none):.2f}), --auth sigv4 "
        f"{statistics.median(sigv4):6.2f} us ({min(sigv4):.2f}); "
        f"added {statistics.median(sigv4) - statistics.median(none):.2f} us ({min(sigv4) - min(none):.2f})"
    )


def per_request(run: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        run()
    return (time.perf_counter() - started) / count * 1e6


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    compiled = "compiled" if not authenticator_module.__file__.endswith(".py") else "interpreted"
    print(f"dynastore {build_kind()}, security modules {compiled}; {count} requests a round, {rounds} rounds")
    print("interleaved; medians, microseconds a request")
    for operation, body in BODIES.items():
        headers, signed_at = signed_headers(operation, body)
        clock = ManualClock(signed_at)
        store = CredentialStore(None, REGION, seeded_admin(KEY_ID, SECRET, "000000000000"))
        authenticator = Authenticator(store, REGION, clock)
        assert authenticator.authenticate("POST", "/", headers, body).authenticated

        def sigv4(headers: dict[str, str] = headers, body: bytes = body, a: Authenticator = authenticator) -> object:
            return a.authenticate("POST", "/", headers, body)

        def none(headers: dict[str, str] = headers) -> object:
            check_form(headers)
            return None

        times: dict[str, list[float]] = {"none": [], "sigv4": []}
        for _ in range(rounds):
            times["none"].append(per_request(none, count))
            times["sigv4"].append(per_request(sigv4, count))
        print(f"{operation:8} body {len(body):3} B: {_compare(times)}")


def handle_rounds(count: int, rounds: int) -> None:
    import asyncio

    from dynastore.app import Dynastore
    from dynastore.config import Config

    create = (
        b'{"TableName":"bench_table","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],'
        b'"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}'
    )
    create_headers, signed_at = signed_headers("CreateTable", create)
    put_headers, _ = signed_headers("PutItem", BODIES["PutItem"])
    get_headers, _ = signed_headers("GetItem", BODIES["GetItem"])
    handlers = {}
    for mode in ("none", "sigv4"):
        config = Config(
            in_memory=True, capacity="report", metrics=False, auth=mode, admin_access_key_id=KEY_ID,
            admin_secret_access_key=SECRET, clock=ManualClock(signed_at),
        )  # fmt: skip
        app = Dynastore(config)
        app.start(asyncio.new_event_loop())
        assert app.protocol.handle("POST", create_headers, create, "/").status == 200
        assert app.protocol.handle("POST", put_headers, BODIES["PutItem"], "/").status == 200
        handlers[mode] = app.protocol.handle
    times: dict[str, list[float]] = {"none": [], "sigv4": []}
    body = BODIES["GetItem"]
    for _ in range(rounds):
        for mode, handle in handlers.items():

            def one(h: Callable[..., object] = handle) -> object:
                return h("POST", get_headers, body, "/")

            times[mode].append(per_request(one, count // 4))
    print(f"Protocol.handle GetItem: {_compare(times)}")


if __name__ == "__main__":
    main()
    handle_rounds(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000, int(sys.argv[2]) if len(sys.argv) > 2 else 7)
