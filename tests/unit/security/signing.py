"""Requests signed by botocore (the reference signer), as the server receives them: lower-case header names."""

from __future__ import annotations

import calendar
import time

from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from dynastore.security.authenticator import Authenticator
from dynastore.security.credentials import CredentialStore, seeded_admin
from dynastore.util.clock import ManualClock

KEY_ID = "AKIAUNITTESTKEY00001"
SECRET = "unit-test-secret-unit-test-secret-000000"
REGION = "us-east-1"
HOST = "127.0.0.1:8000"
SIGNED_AT = "20261124T012500Z"
NOW = float(calendar.timegm(time.strptime(SIGNED_AT, "%Y%m%dT%H%M%SZ")))


class Signed:
    """One signed request: method, path (with its query string), headers and body."""

    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body


def sign(
    body: bytes,
    target: str = "DynamoDB_20120810.ListTables",
    *,
    key_id: str = KEY_ID,
    secret: str = SECRET,
    token: str | None = None,
    region: str = REGION,
    service: str = "dynamodb",
    amz_date: str = SIGNED_AT,
) -> Signed:
    request = _request(body, target)
    auth = SigV4Auth(Credentials(key_id, secret, token), service, region)
    _sign_at(auth, request, amz_date)
    return _received(request, body)


def presign(
    body: bytes,
    target: str = "DynamoDB_20120810.ListTables",
    *,
    expires: int = 300,
    token: str | None = None,
    amz_date: str = SIGNED_AT,
    declare_payload: bool = True,
) -> Signed:
    """A presigned request (X-Amz-* in the query string). botocore's presigner would move a JSON body into the
    query string, so the body's hash is declared in a signed X-Amz-Content-Sha256 header instead (or, with
    ``declare_payload=False``, the request is presigned with no body)."""
    import hashlib

    request = _request(b"", target)
    if declare_payload:
        request.headers["X-Amz-Content-Sha256"] = hashlib.sha256(body).hexdigest()
    auth = SigV4QueryAuth(Credentials(KEY_ID, SECRET, token), "dynamodb", REGION, expires=expires)
    _sign_at(auth, request, amz_date)
    return _received(request, body if declare_payload else b"")


def _request(body: bytes, target: str) -> AWSRequest:
    return AWSRequest(
        method="POST",
        url=f"http://{HOST}/",
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target, "Host": HOST},
    )


def _sign_at(auth: SigV4Auth, request: AWSRequest, amz_date: str) -> None:
    """botocore reads the signing time from the wall clock (botocore.auth.get_current_datetime): pin it."""
    import datetime
    from unittest import mock

    moment = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")
    with mock.patch("botocore.auth.get_current_datetime", return_value=moment):
        auth.add_auth(request)


def _received(request: AWSRequest, body: bytes) -> Signed:
    from urllib.parse import urlsplit

    parts = urlsplit(request.url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    headers = {name.lower(): value for name, value in request.headers.items()}
    headers.setdefault("host", HOST)
    return Signed("POST", path, headers, body)


def authenticator(seed_key: str = KEY_ID, seed_secret: str = SECRET, now: float = NOW) -> Authenticator:
    store = CredentialStore(None, REGION, seeded_admin(seed_key, seed_secret, "123456789012"))
    return Authenticator(store, REGION, ManualClock(now))
