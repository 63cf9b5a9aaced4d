"""SigV4 authentication: the form of a request's signature (with DynamoDB's texts, whether or not signatures are
verified: ``check_form``) and, with ``--auth sigv4``, its verification against the credentials store, which makes
its Caller; anything else is refused with DynamoDB's error type and text.

Checks, in order: the Authorization header's presence and parameters (a presigned query string's, when the
signature is there instead); the algorithm; the access key (UnrecognizedClientException); the session token of temporary
credentials, and their expiry (ExpiredTokenException); the credential scope (the signing date must be the request's
date, the region the server's or any AWS region name, the service ``dynamodb``, the terminator ``aws4_request``);
the request's time, within 15 minutes of the server's clock (a presigned request: also within its X-Amz-Expires);
Host among the signed headers; the payload hash (an X-Amz-Content-Sha256 sent must be the body's); then the
signature itself. The caller's region is the scope's: its tables are that region's.

Per request this costs one SHA-256 of the body and of the canonical request and one HMAC: the signing key (four
HMACs) is cached per access key and day, the request time's parse is cached for the second it names, the hash
states of what repeats between requests (a canonical request up to its payload hash, a string to sign up to the
canonical request's digest) are kept (sigv4.py), and an SDK's Authorization header is read once per client key
and day up to its signature.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import time
from email.utils import parsedate_tz
from typing import Final
from urllib.parse import unquote

from dynastore import messages
from dynastore.errors import (
    ExpiredTokenException,
    IncompleteSignatureException,
    InvalidSignatureException,
    MissingAuthenticationTokenException,
    UnrecognizedClientException,
)
from dynastore.limits import SIGV4_MAX_PRESIGNED_EXPIRES, SIGV4_MAX_SKEW_SECONDS
from dynastore.security.caller import Caller, scope_region
from dynastore.security.credentials import CredentialStore, Identity
from dynastore.security.sigv4 import (
    ALGORITHM,
    REGION_NAME,
    SERVICE,
    TERMINATOR,
    KeyedHash,
    RequestDigests,
    canonical_query,
    signing_key,
)
from dynastore.util.clock import Clock

# Read per request: as a Final name compiled code reads it from a C static, not the module's dict.
compare_digest: Final = hmac.compare_digest
_sha256: Final = hashlib.sha256
_KEY_CACHE_LIMIT: Final = 4096  # cached signing keys (access key and day) before the cache starts over
_EPOCH_CACHE_LIMIT: Final = 256  # parsed request times kept before that cache starts over
_QUERY_PARAMS = ("X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-Date", "X-Amz-SignedHeaders")
_HEADER_PARAMS = ("Credential", "Signature", "SignedHeaders")


class _Head:
    """What an Authorization header says before its signature (or a presigned query string's parameters): the
    algorithm, the credential and its scope's five parts, and the signed headers' names. A client sends the same
    head with every request it signs with one key on one day, so the SDK form's is read once and kept
    (``_sdk_head``)."""

    __slots__ = ("algorithm", "credential", "signed_headers", "scope", "scope_text", "host_signed", "named_region")

    def __init__(self, algorithm: str, credential: str, signed_headers: str) -> None:
        self.algorithm = algorithm
        self.credential = credential
        self.signed_headers = signed_headers
        self.scope = credential.split("/")  # key id, day, region, service and terminator, when it is well formed
        self.scope_text = credential.partition("/")[2]  # the credential scope, as the string to sign holds it
        self.host_signed = ";host;" in f";{signed_headers};"
        self.named_region = ""  # the region --auth none's anonymous caller takes from the header (_sdk_head)


class _Signed:
    """What a request's Authorization header (or presigned query string) says."""

    __slots__ = ("head", "signature", "amz_date", "token", "query", "expires")

    def __init__(self, head: _Head, signature: str, amz_date: str, token: str, query: str, expires: int) -> None:
        self.head = head
        self.signature = signature
        self.amz_date = amz_date
        self.token = token
        self.query = query  # the canonical query string
        self.expires = expires  # a presigned request's X-Amz-Expires; -1 for a signed header


class Authenticator:
    def __init__(self, store: CredentialStore, region: str, clock: Clock) -> None:
        self.store = store
        self._store = store
        self._region = region
        self._clock = clock
        self._keys: dict[str, tuple[str, KeyedHash]] = {}  # credential -> (secret, signing key)
        # Request times already parsed: clients sign within the same few seconds, and a load generator that signs
        # ahead interleaves several of them, so a handful of entries serve nearly every request.
        self._epochs: dict[str, int] = {}
        self._callers: dict[str, Caller] = {}  # "key id/region" -> the caller in a region other than the server's
        self._requests = RequestDigests()

    def authenticate(
        self, method: str, path: str, headers: dict[str, str], body: bytes, service: str = SERVICE
    ) -> Caller:
        """The caller a signed request proves to be; raises DynamoDB's error otherwise: the header's presence and
        form first (as with authentication off), unless the signature is in the query string; then the
        signature itself. ``service``: the credential scope's service the request must be signed for (``sts``
        for the STS endpoint)."""
        route, _, query = path.partition("?")
        authorization = headers.get("authorization")
        if authorization is not None or not is_presigned(path):
            # What SDKs send is read once, for its form and its parts; anything else is checked first.
            signed = None if authorization is None else _from_sdk_header(authorization, headers)
            if signed is None:
                check_form(headers)
            if "X-Amz-Algorithm=" in query:
                raise IncompleteSignatureException(messages.AUTH_QUERY_AND_HEADER)
            if signed is None:
                signed = _from_header(headers, query)
            elif query:
                signed.query = canonical_query(query)
        else:
            signed = _from_query(query)
        return self._verify(method, route, headers, body, signed, service)

    def _verify(
        self, method: str, route: str, headers: dict[str, str], body: bytes, signed: _Signed, expected: str
    ) -> Caller:
        head = signed.head
        if head.algorithm != ALGORITHM:
            raise IncompleteSignatureException(messages.AUTH_UNSUPPORTED_ALGORITHM.format(algorithm=head.algorithm))
        if len(head.scope) != 5:
            raise IncompleteSignatureException(messages.AUTH_CREDENTIAL_ELEMENTS.format(credential=head.credential))
        key_id, day, region, service, terminator = head.scope
        identity = self._store.find(key_id)
        if identity is None:
            raise UnrecognizedClientException(messages.AUTH_UNKNOWN_KEY)
        signed_at = self._epoch(signed.amz_date)
        now = self._clock.now()
        self._check_token(identity, signed.token, now)
        self._check_scope(signed.amz_date, day, region, service, terminator, expected)
        self._check_time(signed, signed_at, now)
        if not head.host_signed:  # else a captured signature would serve for another host
            raise InvalidSignatureException(messages.AUTH_HOST_NOT_SIGNED)
        declared = headers.get("x-amz-content-sha256")  # SDKs send it for S3, not for DynamoDB: rarely here
        if declared is not None and declared != _sha256(body).hexdigest():
            raise InvalidSignatureException(messages.AUTH_SIGNATURE_MISMATCH)
        start = self._requests.start(method, route, signed.query, headers, head.signed_headers)
        key = self._signing_key(head.credential, day, region, identity, expected)
        calculated = key.sign_request(signed.amz_date, head.scope_text, start, body)
        # As bytes: compare_digest refuses str with non-ASCII characters, which a hostile header may hold.
        if not compare_digest(calculated, signed.signature.encode("utf-8", "replace")):
            raise InvalidSignatureException(messages.AUTH_SIGNATURE_MISMATCH)
        caller = identity.caller
        return caller if region == caller.region else self._in_region(caller, region)

    def _in_region(self, caller: Caller, region: str) -> Caller:
        """The caller of a request signed for another region than the server's: the same user, whose tables are
        that region's (dynastore serves every region at one endpoint; docs/design.md "Accounts and regions")."""
        name = f"{caller.access_key_id}/{region}"
        cached = self._callers.get(name)
        if cached is not None and cached.user_id == caller.user_id and cached.groups == caller.groups:
            return cached
        if len(self._callers) >= _KEY_CACHE_LIMIT:
            self._callers.clear()
        made = caller.in_region(region)
        self._callers[name] = made
        return made

    def _check_token(self, identity: Identity, token: str, now: float) -> None:
        expected = identity.session_token
        if (token or expected) and not compare_digest(token.encode("utf-8", "replace"), expected.encode()):
            raise UnrecognizedClientException(messages.AUTH_UNKNOWN_KEY)  # compared in constant time, as secrets are
        if now >= identity.expiration:
            raise ExpiredTokenException(messages.AUTH_EXPIRED_TOKEN)

    def _check_scope(self, amz_date: str, day: str, region: str, service: str, terminator: str, expected: str) -> None:
        if day != amz_date[:8]:
            raise InvalidSignatureException(
                messages.AUTH_SCOPE_DATE.format(scope=day, date=amz_date[:8], amz_date=amz_date)
            )
        # Any AWS region name is served, each its own namespace; other scopes are refused as DynamoDB refuses a
        # region it does not serve.
        if region != self._region and not REGION_NAME.fullmatch(region):
            raise InvalidSignatureException(messages.AUTH_SCOPE_REGION.format(region=region))
        if service != expected:
            raise InvalidSignatureException(messages.AUTH_SCOPE_SERVICE.format(service=expected))
        if terminator != TERMINATOR:
            raise InvalidSignatureException(messages.AUTH_SCOPE_TERMINATOR.format(terminator=terminator))

    def _check_time(self, signed: _Signed, signed_at: int, now: float) -> None:
        if signed_at < now - SIGV4_MAX_SKEW_SECONDS and signed.expires < 0:
            raise InvalidSignatureException(
                messages.AUTH_SIGNATURE_EXPIRED.format(
                    signed=signed.amz_date, earliest=_format(now - SIGV4_MAX_SKEW_SECONDS), now=_format(now)
                )
            )
        if signed_at > now + SIGV4_MAX_SKEW_SECONDS:
            raise InvalidSignatureException(
                messages.AUTH_SIGNATURE_NOT_YET_CURRENT.format(
                    signed=signed.amz_date, latest=_format(now + SIGV4_MAX_SKEW_SECONDS), now=_format(now)
                )
            )
        if signed.expires >= 0 and signed_at + signed.expires < now:
            raise InvalidSignatureException(
                messages.AUTH_PRESIGNED_EXPIRED.format(
                    signed=signed.amz_date, earliest=_format(now - signed.expires), now=_format(now),
                    expires=signed.expires,
                )
            )  # fmt: skip

    def _signing_key(self, credential: str, day: str, region: str, identity: Identity, service: str) -> KeyedHash:
        # Kept by the credential (key id, day, region, service and terminator; its scope is checked first): the
        # same string object for every request of a kept head, whose hash is not computed again.
        cached = self._keys.get(credential)
        if cached is not None and cached[0] is identity.secret:
            return cached[1]
        if len(self._keys) >= _KEY_CACHE_LIMIT:
            self._keys.clear()
        key = KeyedHash(signing_key(identity.secret, day, region, service))
        self._keys[credential] = (identity.secret, key)
        return key

    def _epoch(self, amz_date: str) -> int:
        """Seconds since the epoch of ``YYYYMMDDTHHMMSSZ`` (cached: requests of one second share it)."""
        cached = self._epochs.get(amz_date)
        if cached is not None:
            return cached
        if len(amz_date) != 16 or amz_date[8] != "T" or amz_date[15] != "Z" or not _digits(amz_date):
            raise IncompleteSignatureException(messages.AUTH_BAD_DATE.format(date=amz_date))
        try:
            fields = (
                int(amz_date[0:4]), int(amz_date[4:6]), int(amz_date[6:8]),
                int(amz_date[9:11]), int(amz_date[11:13]), int(amz_date[13:15]),
            )  # fmt: skip
            if not (1 <= fields[1] <= 12 and 1 <= fields[2] <= 31 and fields[3] < 24 and fields[4] < 60):
                raise ValueError(amz_date)
            epoch = calendar.timegm((*fields, 0, 0, 0))
        except (ValueError, OverflowError):
            raise IncompleteSignatureException(messages.AUTH_BAD_DATE.format(date=amz_date)) from None
        if len(self._epochs) >= _EPOCH_CACHE_LIMIT:
            self._epochs.clear()
        self._epochs[amz_date] = epoch
        return epoch


def is_presigned(path: str) -> bool:
    """Whether a request's path carries a SigV4 signature in its query string."""
    return "X-Amz-Algorithm=" in path


def check_form(headers: dict[str, str], path: str = "/") -> str:
    """Raise the error DynamoDB gives a request whose Authorization header is missing or incomplete. A request
    presigned in its query string instead (no Authorization header) must carry the signature's parameters (and
    a valid X-Amz-Expires). Returns the region the credential scope names, as ``--auth none`` takes it for the
    request's anonymous caller (caller.scope_region; "" when it names none)."""
    authorization = headers.get("authorization")
    if authorization is not None and ("x-amz-date" in headers or "date" in headers):
        sdk = _sdk_parts(authorization)
        if sdk is not None:
            return sdk[0].named_region
    if authorization is None and is_presigned(path):
        query = path.partition("?")[2]
        _from_query(query)
        return scope_region(unquote(query).replace("&", ","))  # X-Amz-Credential=..., read as the header's form
    if not authorization or authorization.strip()[:5] != "AWS4-":
        raise MissingAuthenticationTokenException(messages.AUTH_MISSING_TOKEN)
    params = _header_params(authorization)
    problems = "".join(
        messages.AUTH_REQUIRES_PARAM.format(param=name) for name in _HEADER_PARAMS if not params.get(name)
    )
    if "x-amz-date" not in headers and "date" not in headers:
        problems += messages.AUTH_REQUIRES_DATE
    if problems:
        raise IncompleteSignatureException(problems + "Authorization=" + authorization)
    return scope_region(authorization)


def _from_sdk_header(authorization: str, headers: dict[str, str]) -> _Signed | None:
    """The signature of a request whose Authorization header has the form SDKs send (``_well_formed``) and that
    has a date: one that passes ``check_form``, read in the same pass. None for any other request. (Its query
    string is left to the caller: ``query`` is "".)"""
    sdk = _sdk_parts(authorization)
    if sdk is None:
        return None
    amz_date = headers.get("x-amz-date")
    if amz_date is None:
        date = headers.get("date")
        if date is None:
            return None
        amz_date = _from_http_date(date)
    return _Signed(sdk[0], sdk[1], amz_date, headers.get("x-amz-security-token", ""), "", -1)


def _well_formed(authorization: str) -> bool:
    """What SDKs send, `AWS4-<algorithm> Credential=<c>, SignedHeaders=<h>, Signature=<s>` with no spaces or
    commas in the values: a header of this form passes every check, so the request skips the parsing."""
    return _sdk_parts(authorization) is not None


def _sdk_parts(authorization: str) -> tuple[_Head, str] | None:
    """The head and the signature of an Authorization header of the SDK form (``_well_formed``); None for any
    other. The signature is the part after the last ``, Signature=`` (it may hold no comma): the head before it is
    then read as the header's first two parts, as splitting the whole header at ``, `` would read them."""
    head, found, signature = authorization.rpartition(", Signature=")
    if not found or not signature or " " in signature or "," in signature:
        return None
    known = _SDK_HEADS.get(head)
    if known is None:
        known = _sdk_head(head)
        if known is None:
            return None
    return known, signature


def _sdk_head(head: str) -> _Head | None:
    """``AWS4-<algorithm> Credential=<c>, SignedHeaders=<h>`` read, and kept (a client sends the same one with
    every request of a day); None if it is not of that form."""
    parts = head.split(", ")
    if len(parts) != 2:
        return None
    scheme, _, credential = parts[0].partition(" Credential=")
    names = parts[1][14:]
    if not (
        scheme.startswith("AWS4-")
        and " " not in scheme
        and _plain_value(credential)
        and parts[1].startswith("SignedHeaders=")
        and _plain_value(names)
    ):
        return None
    known = _Head(scheme, credential, names)
    # Where the anonymous caller's region is read in the whole header: up to the first comma after the first
    # "Credential=", which lies in the head or is the one that ends it.
    known.named_region = scope_region(head + ",")
    if len(head) <= _HEAD_BYTES:  # bounded: at most 1,024 heads of 1 KB held
        if len(_SDK_HEADS) >= _HEADS_LIMIT:
            _SDK_HEADS.clear()
        _SDK_HEADS[head] = known
    return known


# Heads of SDK-form Authorization headers already read: one per client key, day, region and signed-headers list.
_SDK_HEADS: Final[dict[str, _Head]] = {}
_HEADS_LIMIT: Final = 1024
_HEAD_BYTES: Final = 1024


def _plain_value(value: str) -> bool:
    return value != "" and " " not in value and "," not in value


def _header_params(authorization: str) -> dict[str, str]:
    """`AWS4-HMAC-SHA256 Credential=a/b, SignedHeaders=h, Signature=s` -> {"Credential": "a/b", ...}."""
    _, _, rest = authorization.strip().partition(" ")
    params: dict[str, str] = {}
    for part in rest.replace(" ", "").split(","):
        name, _, value = part.partition("=")
        params[name] = value
    return params


def _digits(amz_date: str) -> bool:
    return amz_date[:8].isdigit() and amz_date[9:15].isdigit() and amz_date.isascii()


def _format(epoch: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(int(epoch)))


def _from_header(headers: dict[str, str], query: str) -> _Signed:
    authorization = headers["authorization"]
    parts = authorization.split(", ")
    if len(parts) == 3 and parts[1].startswith("SignedHeaders=") and parts[2].startswith("Signature="):
        # What SDKs send: `AWS4-HMAC-SHA256 Credential=<c>, SignedHeaders=<h>, Signature=<s>`.
        algorithm, _, credential = parts[0].partition(" Credential=")
        signed_headers, signature = parts[1][14:], parts[2][10:]
    else:
        algorithm = authorization.strip().partition(" ")[0]
        params = _header_params(authorization)
        credential = params.get("Credential", "")
        signed_headers, signature = params.get("SignedHeaders", ""), params.get("Signature", "")
    amz_date = headers.get("x-amz-date")
    if amz_date is None:
        amz_date = _from_http_date(headers.get("date", ""))
    token = headers.get("x-amz-security-token", "")
    return _Signed(_Head(algorithm, credential, signed_headers), signature, amz_date, token, canonical_query(query), -1)


def _from_http_date(text: str) -> str:
    """A Date header (RFC 7231) as ``YYYYMMDDTHHMMSSZ``; the text itself if it is none (refused as a bad date)."""
    try:
        parsed = parsedate_tz(text)
    except (ValueError, IndexError, TypeError):
        parsed = None
    if parsed is None:
        return text
    try:
        epoch = calendar.timegm(parsed[:9]) - (parsed[9] or 0)
        return _format(epoch)
    except (ValueError, OverflowError):
        return text


def _from_query(query: str) -> _Signed:
    params: dict[str, str] = {}
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        params[unquote(name, "latin-1")] = unquote(value, "latin-1")
    missing = "".join(messages.AUTH_QUERY_REQUIRES_PARAM.format(param=p) for p in _QUERY_PARAMS if not params.get(p))
    if missing:
        raise IncompleteSignatureException(missing + "Re-examine the query-string parameters.")
    text = params.get("X-Amz-Expires", str(SIGV4_MAX_PRESIGNED_EXPIRES))
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= SIGV4_MAX_PRESIGNED_EXPIRES:
        raise IncompleteSignatureException(messages.AUTH_BAD_EXPIRES.format(expires=text))
    return _Signed(
        _Head(params["X-Amz-Algorithm"], params["X-Amz-Credential"], params["X-Amz-SignedHeaders"]),
        params["X-Amz-Signature"],
        params["X-Amz-Date"],
        params.get("X-Amz-Security-Token", ""),
        canonical_query(query, drop_signature=True),
        int(text),
    )
