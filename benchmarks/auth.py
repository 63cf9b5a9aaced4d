"""What ``--auth sigv4`` costs a request, in interleaved rounds (medians, microseconds a request):

1. SigV4 verification alone (security/authenticator.py) on botocore-signed GetItem and PutItem requests, against
   the format check that ``--auth none`` makes (``check_form``, whose checks ``authenticate`` makes too);
2. ``Protocol.handle`` of a signed GetItem by two in-memory dynastores, one with ``--auth none`` and one with
   ``--auth sigv4``: the whole request path, HTTP aside.

Run: ``python benchmarks/auth.py [requests] [rounds]``.

Instruction counts, which a busy machine does not disturb: ``valgrind --tool=callgrind --dump-before=getppid
--callgrind-out-file=cg.out python benchmarks/auth.py --instructions 200``, then ``python benchmarks/auth.py --count
200 cg.out.*``: ``Protocol.handle`` of a signed GetItem and PutItem with ``--auth none`` and ``--auth sigv4``, then
the same requests' bytes through the HTTP server's connection (its parser making fresh header strings for each),
then the signature alone (what each mode makes of a GetItem's Authorization header: the difference between these
and the ``Protocol.handle`` phases is authorization's), each phase preceded by a mark at which callgrind writes
its counts (callgrind_phases.py).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from callgrind_phases import instruction_modes, phase_counts, run_phases

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


class _Transport:
    """What HttpConnection writes to: the responses, kept until taken."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def set_write_buffer_limits(self, high: int) -> None:
        pass

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def _raw(headers: dict[str, str], body: bytes) -> bytes:
    """The request as a client sends it over HTTP/1.1."""
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return f"POST / HTTP/1.1\r\n{head}\r\n".encode("latin-1") + body


def _http_handlers(handlers: dict[str, Callable[..., Any]]) -> dict[str, Callable[[bytes], bytes]]:
    """Each mode's request path from the bytes of a request to those of its response: an HttpConnection (the
    server's, header strings made fresh by its parser for every request) over ``Protocol.handle``."""
    from dynastore.protocol.http_server import HttpConnection

    out: dict[str, Callable[[bytes], bytes]] = {}
    for mode, handle in handlers.items():
        protocol, committer = handle.__self__, _COMMITTERS[mode]  # type: ignore[attr-defined]
        connection = HttpConnection(protocol, committer)
        transport = _Transport()
        connection.connection_made(transport)  # type: ignore[arg-type]

        def serve(
            raw: bytes, c: HttpConnection = connection, t: _Transport = transport, committer: Any = committer
        ) -> bytes:
            c.data_received(raw)
            while not t.written:
                committer.poll()
            return t.written.pop()

        out[mode] = serve
    return out


_COMMITTERS: dict[str, Any] = {}  # each mode's group committer (HttpConnection holds responses until durable)


def _handlers(signed_at: float) -> dict[str, Callable[..., Any]]:
    """``Protocol.handle`` of two in-memory dynastores, ``--auth none`` and ``--auth sigv4`` with an admin key,
    each with the benchmark's table and item."""
    import asyncio

    from dynastore.app import Dynastore
    from dynastore.config import Config

    create = (
        b'{"TableName":"bench_table","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],'
        b'"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}'
    )
    create_headers, _ = signed_headers("CreateTable", create)
    put_headers, _ = signed_headers("PutItem", BODIES["PutItem"])
    handlers = {}
    for mode in ("none", "sigv4"):
        config = Config(
            in_memory=True, capacity="report", metrics=False, auth=mode, admin_access_key_id=KEY_ID,
            admin_secret_access_key=SECRET, clock=ManualClock(signed_at),
        )  # fmt: skip
        app = Dynastore(config)
        _COMMITTERS[mode] = app.start(asyncio.new_event_loop())
        assert app.protocol.handle("POST", create_headers, create, "/").status == 200
        assert app.protocol.handle("POST", put_headers, BODIES["PutItem"], "/").status == 200
        handlers[mode] = app.protocol.handle
    return handlers


def handle_rounds(count: int, rounds: int) -> None:
    get_headers, signed_at = signed_headers("GetItem", BODIES["GetItem"])
    handlers = _handlers(signed_at)
    times: dict[str, list[float]] = {"none": [], "sigv4": []}
    body = BODIES["GetItem"]
    for _ in range(rounds):
        for mode, handle in handlers.items():

            def one(h: Callable[..., object] = handle) -> object:
                return h("POST", get_headers, body, "/")

            times[mode].append(per_request(one, count // 4))
    print(f"Protocol.handle GetItem: {_compare(times)}")


INSTRUCTION_PHASES = (
    "GetItem none", "GetItem sigv4", "PutItem none", "PutItem sigv4",
    "HTTP GetItem none", "HTTP GetItem sigv4", "HTTP PutItem none", "HTTP PutItem sigv4",
    "Verify GetItem none", "Verify GetItem sigv4",
)  # fmt: skip


def _http_phase(serve: Callable[[bytes], bytes], raw: bytes) -> Callable[[], object]:
    def one() -> object:
        response = serve(raw)
        assert response.startswith(b"HTTP/1.1 200 "), response
        return response

    return one


def _handle_phase(handle: Callable[..., Any], headers: dict[str, str], body: bytes) -> Callable[[], object]:
    def one() -> object:
        response = handle("POST", headers, body, "/")
        assert response.status == 200, response.body
        return response

    return one


def _verify_phase(handle: Callable[..., Any], headers: dict[str, str], body: bytes) -> Callable[[], object]:
    """What the server makes of a request's signature alone: ``check_form`` and the anonymous caller with
    ``--auth none``, ``Authenticator.authenticate`` with ``--auth sigv4`` (the rest of the added cost is
    authorization)."""
    protocol = handle.__self__  # type: ignore[attr-defined]
    authenticator = protocol.authenticator
    if authenticator is None:
        anonymous = protocol.anonymous
        return lambda: anonymous.in_region(check_form(headers, "/"))
    return lambda: authenticator.authenticate("POST", "/", headers, body)


def instruction_phases(calls: int) -> None:
    """``calls`` requests a phase (INSTRUCTION_PHASES), between callgrind_phases' marks."""
    requests = {operation: signed_headers(operation, body) for operation, body in BODIES.items()}
    handlers = _handlers(max(signed_at for _, signed_at in requests.values()))
    served = _http_handlers(handlers)
    phases: list[Callable[[], object]] = []
    for phase in INSTRUCTION_PHASES:
        *path, operation, mode = phase.split()
        headers, body = requests[operation][0], BODIES[operation]
        if path == ["Verify"]:
            phases.append(_verify_phase(handlers[mode], headers, body))
        elif path:
            phases.append(_http_phase(served[mode], _raw(headers, body)))
        else:
            phases.append(_handle_phase(handlers[mode], headers, body))
    run_phases(phases, calls)
    print(f"{calls} calls a phase: " + ", ".join(INSTRUCTION_PHASES))


def count_instructions(calls: int, files: list[str]) -> None:
    """Thousands of instructions a request in each phase, from callgrind's dumps (the first one is the start-up)."""
    counts = phase_counts(files, INSTRUCTION_PHASES, calls)
    paths = {"HTTP": "HTTP server", "Verify": "signature only"}
    for phase, count in counts.items():
        first, _, rest = phase.partition(" ")
        path, shown = (paths[first], rest) if first in paths else ("Protocol.handle", phase)
        print(f"{path:15} {shown:14} {count:8.1f}k instructions")
    for prefix in ("", "HTTP ", "Verify "):
        for operation in BODIES:
            none, sigv4 = counts.get(f"{prefix}{operation} none"), counts.get(f"{prefix}{operation} sigv4")
            if none is None or sigv4 is None:  # a phase this run did not have
                continue
            path = paths.get(prefix.strip(), "Protocol.handle")
            print(f"{path:15} --auth sigv4 adds to a {operation}: {sigv4 - none:.1f}k ({(sigv4 - none) / none:.1%})")


if __name__ == "__main__":
    if not instruction_modes(instruction_phases, count_instructions, 200):
        main()
        handle_rounds(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000, int(sys.argv[2]) if len(sys.argv) > 2 else 7)
