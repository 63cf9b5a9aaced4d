"""RemoteLink against a stand-in peer on 127.0.0.1: what it sends (path, body, SigV4 signature the server's own
authenticator accepts), connection reuse, and LinkDown for every way a peer can fail."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from dynastore.cli import serve_config
from dynastore.config import Config, peer_map
from dynastore.global_tables.changes import ChangeRefused
from dynastore.global_tables.links import LinkDown
from dynastore.global_tables.peers import PeerCredentials, RemoteLink, drop_body, replica_set_body
from dynastore.security.authenticator import Authenticator
from dynastore.security.credentials import CredentialStore, seeded_admin
from dynastore.util.clock import ManualClock

KEY_ID = "AKIAPEERPEERPEERPEER"
SECRET = "peer-secret-peer-secret-peer-secret-0000"
NOW = 1_790_000_000.0


class Request:
    def __init__(self, line: str, headers: dict[str, str], body: bytes) -> None:
        self.method, self.path, _ = line.split(" ", 2)
        self.headers = headers
        self.body = body


Answer = tuple[int, bytes, bool]  # status, body, whether to close the connection after it


class Peer:
    """A stand-in peer: records each request and each connection, answers from ``answers`` (default 200 {})."""

    def __init__(self, answers: list[Answer] | None = None, silent: bool = False) -> None:
        self.requests: list[Request] = []
        self.connections = 0
        self.answers = answers or []
        self.silent = silent
        self.server: asyncio.Server | None = None

    async def start(self, tls: ssl.SSLContext | None = None) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=tls)
        port = self.server.sockets[0].getsockname()[1]
        return f"{'https' if tls else 'http'}://127.0.0.1:{port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line, *fields = head.decode("latin-1").split("\r\n")[:-2]
                headers = {k.strip().lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append(Request(line, headers, body))
                if self.silent:
                    await asyncio.sleep(10)
                status, answer, close = self.answers.pop(0) if self.answers else (200, b"{}", False)
                extra = b"Connection: close\r\n" if close else b""
                writer.write(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n%s\r\n%s" % (status, len(answer), extra, answer))
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the link closed its connection, or the test ended with one kept alive
        finally:
            writer.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


_LINKS: list[RemoteLink] = []  # the links a test made, closed when it ends


def run(peer: Peer, use: Callable[[str], Awaitable[Any]], tls: ssl.SSLContext | None = None) -> Any:
    async def main() -> Any:
        url = await peer.start(tls)
        try:
            return await use(url)
        finally:
            for made in _LINKS:
                made.close()
            _LINKS.clear()
            peer.close()
            await asyncio.sleep(0)  # the closed transports let go of their sockets

    return asyncio.run(main())


def link(url: str, credentials: PeerCredentials | None = None, answer_timeout: float = 5.0) -> RemoteLink:
    made = RemoteLink("us-west-2", url, credentials, ManualClock(NOW), answer_timeout=answer_timeout)
    _LINKS.append(made)
    return made


def test_a_signed_request_is_accepted_by_the_peers_authenticator_as_its_admin() -> None:
    peer = Peer()

    async def use(url: str) -> None:
        await link(url, PeerCredentials(KEY_ID, SECRET)).drop_replica("123456789012", "Music")

    run(peer, use)
    (request,) = peer.requests
    assert (request.method, request.path) == ("POST", "/dynastore/global-tables/drop")
    assert request.headers["content-type"] == "application/json"
    assert orjson.loads(request.body) == {"Region": "us-west-2", "Account": "123456789012", "TableName": "Music"}
    store = CredentialStore(None, "us-west-2", seed=seeded_admin(KEY_ID, SECRET, "123456789012"))
    caller = Authenticator(store, "us-west-2", ManualClock(NOW)).authenticate(
        request.method, request.path, request.headers, request.body
    )
    assert (caller.admin, caller.region, caller.account_id) == (True, "us-west-2", "123456789012")
    scope = "Credential=AKIAPEERPEERPEERPEER/20260921/us-west-2/dynamodb/aws4_request"
    assert scope in request.headers["authorization"]


def test_a_tampered_body_fails_the_peers_verification() -> None:
    peer = Peer()

    async def use(url: str) -> None:
        await link(url, PeerCredentials(KEY_ID, SECRET)).put_replica_set("000000000000", {"TableName": "Music"})

    run(peer, use)
    (request,) = peer.requests
    store = CredentialStore(None, "us-west-2", seed=seeded_admin(KEY_ID, SECRET, "000000000000"))
    with pytest.raises(Exception, match="signature we calculated does not match"):
        Authenticator(store, "us-west-2", ManualClock(NOW)).authenticate(
            request.method, request.path, request.headers, request.body.replace(b"Music", b"Films")
        )


def test_without_credentials_the_request_goes_unsigned() -> None:
    peer = Peer()

    async def use(url: str) -> None:
        await link(url).put_replica_set("000000000000", {"TableName": "Music"})

    run(peer, use)
    (request,) = peer.requests
    assert request.path == "/dynastore/global-tables/replica-set"
    assert "authorization" not in request.headers
    assert orjson.loads(request.body) == {
        "Region": "us-west-2",
        "Account": "000000000000",
        "Definition": {"TableName": "Music"},
    }


def test_requests_reuse_one_kept_alive_connection() -> None:
    peer = Peer()

    async def use(url: str) -> None:
        remote = link(url)
        for _ in range(5):
            await remote.drop_replica("000000000000", "Music")
        remote.close()

    run(peer, use)
    assert (len(peer.requests), peer.connections) == (5, 1)


def test_a_connection_the_peer_closes_is_not_reused() -> None:
    peer = Peer(answers=[(200, b"{}", True), (200, b"{}", False)])

    async def use(url: str) -> None:
        remote = link(url)
        await remote.drop_replica("000000000000", "Music")
        await remote.drop_replica("000000000000", "Music")

    run(peer, use)
    assert (len(peer.requests), peer.connections) == (2, 2)


def test_a_refusal_is_link_down_with_the_peers_error() -> None:
    peer = Peer(answers=[(403, b'{"error": "arn:aws:iam::000000000000:user/bob is not an admin user"}', False)])

    async def use(url: str) -> None:
        await link(url).drop_replica("000000000000", "Music")

    with pytest.raises(LinkDown, match=r"refused /dynastore/global-tables/drop: 403 arn:aws:iam::.*not an admin user"):
        run(peer, use)


@pytest.mark.parametrize(
    ("answer", "index", "final", "reason"),
    [
        ((422, b'{"error": "too big", "Refused": 3, "Final": false}', False), 3, False, "too big"),
        ((422, b'{"error": "misfit", "Refused": 0, "Final": true}', False), 0, True, "misfit"),
        ((404, b'{"error": "ResourceNotFoundException: gone"}', False), None, False, "ResourceNotFoundException: gone"),
    ],
)
def test_a_peer_refusing_changes_names_the_change_refused(
    answer: Answer, index: int | None, final: bool, reason: str
) -> None:
    peer = Peer(answers=[answer])

    async def use(url: str) -> None:
        await link(url).send("000000000000", "Music", [])

    with pytest.raises(ChangeRefused) as refused:
        run(peer, use)
    assert (refused.value.index, refused.value.final, refused.value.reason) == (index, final, reason)


def test_an_unreachable_peer_is_link_down() -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        remote = RemoteLink("us-west-2", f"http://127.0.0.1:{port}", None)
        await remote.drop_replica("000000000000", "Music")

    with pytest.raises(LinkDown, match="cannot be reached"):
        asyncio.run(main())


def test_a_peer_that_does_not_answer_in_time_is_link_down() -> None:
    peer = Peer(silent=True)

    async def use(url: str) -> None:
        await link(url, answer_timeout=0.2).drop_replica("000000000000", "Music")

    with pytest.raises(LinkDown, match="got no answer"):
        run(peer, use)


def test_an_answer_that_is_not_http_is_link_down() -> None:
    async def main() -> None:
        async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(garbage, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            await RemoteLink("us-west-2", f"http://127.0.0.1:{port}", None).drop_replica("000000000000", "Music")
        finally:
            server.close()
            await asyncio.sleep(0)

    with pytest.raises(LinkDown, match="not an HTTP answer"):
        asyncio.run(main())


def test_bodies_name_the_target_region_and_account() -> None:
    assert orjson.loads(drop_body("eu-west-1", "111122223333", "T")) == {
        "Region": "eu-west-1",
        "Account": "111122223333",
        "TableName": "T",
    }
    assert orjson.loads(replica_set_body("eu-west-1", "111122223333", {"A": 1}))["Definition"] == {"A": 1}


def test_credentials_come_from_the_config_only_with_a_key() -> None:
    assert PeerCredentials.of(Config()) is None
    config = Config(peer_access_key_id=KEY_ID, peer_secret_access_key=SECRET)
    assert PeerCredentials.of(config) == PeerCredentials(KEY_ID, SECRET)
    assert SECRET not in repr(PeerCredentials.of(config)) and SECRET not in repr(config)


def test_peers_from_the_environment_and_flags() -> None:
    env = {"DYNASTORE_PEERS": "us-west-2=http://127.0.0.1:8001/, eu-west-1=https://h.example:8443"}
    assert Config.from_env(env).peers == {"us-west-2": "http://127.0.0.1:8001", "eu-west-1": "https://h.example:8443"}
    assert Config.from_env({}).peers == {}


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ("us-west-2", "a peer is given as REGION=URL (e.g. us-west-2=http://127.0.0.1:8001), not 'us-west-2'"),
        (
            "nowhere=http://h:1",
            "a peer is given as REGION=URL (e.g. us-west-2=http://127.0.0.1:8001), not 'nowhere=http://h:1'",
        ),
        (
            "us-west-2=ftp://h:1",
            "a peer is given as REGION=URL (e.g. us-west-2=http://127.0.0.1:8001), not 'us-west-2=ftp://h:1'",
        ),
        ("us-west-2=http://h:1/x", "a peer's URL is its server's root (http://host:port), not 'http://h:1/x'"),
        ("us-west-2=http://a:1,us-west-2=http://b:1", "region us-west-2 is given two peers: http://a:1 and http://b:1"),
    ],
)
def test_a_bad_peer_is_refused_with_what_is_wrong(entry: str, error: str) -> None:
    with pytest.raises(ValueError) as info:
        peer_map([entry])
    assert str(info.value) == error


def serve_error(flags: list[str], capsys: pytest.CaptureFixture[str], env: dict[str, str] | None = None) -> str:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        with pytest.raises(SystemExit):
            serve_config(["--in-memory", *flags])
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_peer_flags_replace_the_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNASTORE_PEERS", "eu-west-1=http://127.0.0.1:9000")
    assert serve_config(["--in-memory"]).peers == {"eu-west-1": "http://127.0.0.1:9000"}
    flags = ["--in-memory", "--peer", "us-west-2=http://127.0.0.1:8001/", "--peer", "us-west-2=http://127.0.0.1:8002"]
    assert serve_config(flags).peers == {"us-west-2": "http://127.0.0.1:8002"}


def test_bad_peer_flags_stop_the_start_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_error(["--peer", "us-west-2"], capsys) == (
        "dynastore serve: error: argument --peer: a peer is given as REGION=URL (e.g. us-west-2=http://127.0.0.1:8001)"
        ", not 'us-west-2'"
    )
    assert serve_error(["--peer", "us-west-2=http://a:1,eu-west-1=http://b:1"], capsys) == (
        "dynastore serve: error: argument --peer: one REGION=URL per --peer, not "
        "'us-west-2=http://a:1,eu-west-1=http://b:1'"
    )
    assert serve_error(["--region", "us-west-2", "--peer", "us-west-2=http://a:1"], capsys) == (
        "dynastore serve: error: --peer us-west-2=...: that is this server's own region (--region)"
    )
    assert serve_error([], capsys, {"DYNASTORE_PEER_ACCESS_KEY_ID": KEY_ID}) == (
        "dynastore serve: error: DYNASTORE_PEER_ACCESS_KEY_ID needs DYNASTORE_PEER_SECRET_ACCESS_KEY"
    )


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the openssl command."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "the openssl command makes the test's certificate"
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_an_https_peer_is_reached_when_its_certificate_is_trusted(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    peer = Peer()

    async def trusting(url: str) -> None:
        remote = RemoteLink("us-west-2", url, None, ca_bundle=cert)
        _LINKS.append(remote)
        await remote.drop_replica("000000000000", "Music")

    run(peer, trusting, tls)
    assert [request.path for request in peer.requests] == ["/dynastore/global-tables/drop"]

    async def untrusting(url: str) -> None:
        await link(url).drop_replica("000000000000", "Music")

    with pytest.raises(LinkDown, match="CERTIFICATE_VERIFY_FAILED"):
        run(Peer(), untrusting, tls)


def test_the_peer_certificates_come_from_the_environment() -> None:
    assert Config.from_env({"DYNASTORE_PEER_CA_BUNDLE": "/etc/peers.pem"}).peer_ca_bundle == Path("/etc/peers.pem")
    assert Config.from_env({}).peer_ca_bundle is None
