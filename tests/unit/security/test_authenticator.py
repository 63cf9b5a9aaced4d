"""SigV4 verification against requests signed by botocore: what passes, and each refusal's type and text."""

from __future__ import annotations

import random

import botocore.session
import pytest

from dynastore.errors import DynamoError
from dynastore.security.credentials import CredentialStore, seeded_admin
from dynastore.security.sigv4 import sign_headers
from tests.unit.security.signing import (
    HOST,
    KEY_ID,
    NOW,
    REGION,
    SECRET,
    SIGNED_AT,
    Signed,
    authenticator,
    presign,
    sign,
)

MISMATCH = (
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access "
    "Key and signing method. Consult the service documentation for details."
)


def _targets() -> list[str]:
    session = botocore.session.get_session()
    out = []
    for service, prefix in (("dynamodb", "DynamoDB_20120810"), ("dynamodbstreams", "DynamoDBStreams_20120810")):
        model = session.get_service_model(service)
        out += [f"{prefix}.{name}" for name in model.operation_names]
    return out


def refusal(request: Signed, now: float = NOW, **store: str) -> tuple[str, str]:
    with pytest.raises(DynamoError) as info:
        authenticator(now=now, **store).authenticate(request.method, request.path, request.headers, request.body)
    return type(info.value).__name__, info.value.message or ""


@pytest.mark.parametrize("target", _targets())
def test_every_operation_signed_by_botocore_is_verified(target: str) -> None:
    request = sign(b'{"TableName":"orders","Key":{"pk":{"S":"a b\\u00e9"}}}', target)
    caller = authenticator().authenticate(request.method, request.path, request.headers, request.body)
    assert (caller.arn, caller.account_id, caller.access_key_id, caller.authenticated, caller.admin) == (
        "arn:aws:iam::123456789012:user/admin",
        "123456789012",
        KEY_ID,
        True,
        True,
    )


def test_a_changed_body_header_or_target_is_refused() -> None:
    request = sign(b'{"TableName":"orders"}', "DynamoDB_20120810.DeleteTable")
    verify = authenticator()
    assert refusal(Signed("POST", "/", request.headers, b'{"TableName":"orderz"}')) == (
        "InvalidSignatureException",
        MISMATCH,
    )
    other_target = {**request.headers, "x-amz-target": "DynamoDB_20120810.DescribeTable"}
    with pytest.raises(DynamoError, match="does not match"):
        verify.authenticate("POST", "/", other_target, request.body)
    with pytest.raises(DynamoError, match="does not match"):
        verify.authenticate("POST", "/?x=1", request.headers, request.body)


def test_white_space_in_header_values_is_folded_as_sdks_fold_it() -> None:
    request = sign(b"{}")
    headers = {**request.headers, "content-type": "  application/x-amz-json-1.0 "}
    assert authenticator().authenticate("POST", "/", headers, request.body).authenticated


def test_utf8_header_bytes_are_not_taken_for_white_space() -> None:
    """'à' is C3 A0 in UTF-8; the server holds header bytes as Latin-1, where A0 would be white space to str.split."""
    from dynastore.security.sigv4 import canonical_headers

    received = "Boto3 à  la  carte".encode().decode("latin-1")
    assert canonical_headers("user-agent", {"user-agent": f" {received}\t"}) == (
        "user-agent:" + "Boto3 à la carte".encode().decode("latin-1") + "\n"
    )
    assert canonical_headers("x", {"x": "plain value"}) == "x:plain value\n"


def test_unknown_access_key() -> None:
    assert refusal(sign(b"{}", key_id="AKIAUNKNOWNKEY000000")) == (
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    )


def test_wrong_secret() -> None:
    assert refusal(sign(b"{}", secret="not-the-secret")) == ("InvalidSignatureException", MISMATCH)


def test_wrong_region_service_date_and_terminator() -> None:
    assert refusal(sign(b"{}", region="moon")) == (
        "InvalidSignatureException",
        "Credential should be scoped to a valid region, not 'moon'. ",
    )
    assert refusal(sign(b"{}", service="dynamodbx")) == (
        "InvalidSignatureException",
        "Credential should be scoped to correct service: 'dynamodb'. ",
    )
    request = sign(b"{}")
    scope_day = request.headers["authorization"].replace("/20261124/", "/20261123/")
    assert refusal(Signed("POST", "/", {**request.headers, "authorization": scope_day}, b"{}")) == (
        "InvalidSignatureException",
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20261123' != "
        "'20261124', from '20261124T012500Z'.",
    )
    terminator = request.headers["authorization"].replace("/aws4_request,", "/aws5_request,")
    assert refusal(Signed("POST", "/", {**request.headers, "authorization": terminator}, b"{}")) == (
        "InvalidSignatureException",
        "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'. ",
    )
    short = request.headers["authorization"].replace("/us-east-1/dynamodb/", "/us-east-1/")
    assert refusal(Signed("POST", "/", {**request.headers, "authorization": short}, b"{}")) == (
        "IncompleteSignatureException",
        "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got "
        f"'{KEY_ID}/20261124/us-east-1/aws4_request'",
    )


def test_clock_skew_of_15_minutes_either_way() -> None:
    request = sign(b"{}", amz_date="20261124T010000Z")
    assert authenticator(now=NOW - 24 * 60).authenticate("POST", "/", request.headers, b"{}").authenticated
    # signed 01:00, the server's clock at 01:25: more than 15 minutes late
    assert refusal(request) == (
        "InvalidSignatureException",
        "Signature expired: 20261124T010000Z is now earlier than 20261124T011000Z (20261124T012500Z - 15 min.)",
    )
    early = sign(b"{}", amz_date="20261124T014100Z")
    assert refusal(early) == (
        "InvalidSignatureException",
        "Signature not yet current: 20261124T014100Z is still later than 20261124T014000Z (20261124T012500Z + 15 min.)",
    )
    exactly = sign(b"{}", amz_date="20261124T011000Z")
    assert authenticator().authenticate("POST", "/", exactly.headers, b"{}").authenticated


def test_bad_request_date() -> None:
    request = sign(b"{}")
    assert refusal(Signed("POST", "/", {**request.headers, "x-amz-date": "2026-11-24T01:25:00Z"}, b"{}")) == (
        "IncompleteSignatureException",
        "Date must be in ISO-8601 'basic format'. Got '2026-11-24T01:25:00Z'. See http://en.wikipedia.org/wiki/ISO_8601",
    )


def test_a_declared_payload_hash_must_be_the_bodys() -> None:
    request = sign(b"{}")
    headers = {**request.headers, "x-amz-content-sha256": "0" * 64}
    assert refusal(Signed("POST", "/", headers, b"{}")) == ("InvalidSignatureException", MISMATCH)


def test_the_host_must_be_signed() -> None:
    request = sign(b"{}")
    unsigned_host = request.headers["authorization"].replace(
        "SignedHeaders=content-type;host;", "SignedHeaders=content-type;"
    )
    assert refusal(Signed("POST", "/", {**request.headers, "authorization": unsigned_host}, b"{}")) == (
        "InvalidSignatureException",
        "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
    )


def test_unsupported_algorithm() -> None:
    request = sign(b"{}")
    other = request.headers["authorization"].replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA512")
    assert refusal(Signed("POST", "/", {**request.headers, "authorization": other}, b"{}")) == (
        "IncompleteSignatureException",
        "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512'",
    )


def test_a_session_token_on_a_permanent_key_is_refused() -> None:
    assert refusal(sign(b"{}", token="FwoGZXIvYXdzEXAMPLE")) == (
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    )


def _temporary_store(expiration: float) -> CredentialStore:
    document = seeded_admin(KEY_ID, SECRET, "123456789012")
    document["temporary"] = [
        {"id": "ASIATEMPORARYKEY0001", "secret": "temp-secret", "token": "the-token", "user": "admin",
         "expiration": expiration},
    ]  # fmt: skip
    return CredentialStore(None, REGION, document)


def test_temporary_credentials_need_their_token_and_expire() -> None:
    from dynastore.security.authenticator import Authenticator
    from dynastore.util.clock import ManualClock

    clock = ManualClock(NOW)
    verify = Authenticator(_temporary_store(NOW + 900), REGION, clock)
    good = sign(b"{}", key_id="ASIATEMPORARYKEY0001", secret="temp-secret", token="the-token")
    caller = verify.authenticate("POST", "/", good.headers, b"{}")
    assert (caller.temporary, caller.access_key_id, caller.arn) == (
        True,
        "ASIATEMPORARYKEY0001",
        "arn:aws:iam::123456789012:user/admin",
    )
    for token in (None, "another-token"):
        bad = sign(b"{}", key_id="ASIATEMPORARYKEY0001", secret="temp-secret", token=token)
        with pytest.raises(DynamoError) as info:
            verify.authenticate("POST", "/", bad.headers, b"{}")
        assert (type(info.value).__name__, info.value.message) == (
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
        )
    clock.advance(900)
    with pytest.raises(DynamoError) as info:
        verify.authenticate("POST", "/", good.headers, b"{}")
    assert (type(info.value).__name__, info.value.message) == (
        "ExpiredTokenException",
        "The security token included in the request is expired",
    )


def test_presigned_requests() -> None:
    body = b'{"TableName":"orders"}'
    request = presign(body, "DynamoDB_20120810.DescribeTable")
    assert "X-Amz-Signature=" in request.path and "authorization" not in request.headers
    assert authenticator().authenticate("POST", request.path, request.headers, body).authenticated
    assert refusal(Signed("POST", request.path, request.headers, b'{"TableName":"orderz"}'))[0] == (
        "InvalidSignatureException"
    )
    tampered = request.path.replace("X-Amz-Expires=300", "X-Amz-Expires=600")
    assert refusal(Signed("POST", tampered, request.headers, body)) == ("InvalidSignatureException", MISMATCH)
    no_body = presign(b"", declare_payload=False)
    assert authenticator().authenticate("POST", no_body.path, no_body.headers, b"").authenticated


def test_presigned_expiry_and_missing_parameters() -> None:
    request = presign(b"{}", expires=60)
    assert refusal(request, now=NOW + 61) == (
        "InvalidSignatureException",
        "Signature expired: 20261124T012500Z is now earlier than 20261124T012501Z (20261124T012601Z - 60 sec.)",
    )
    stripped = "&".join(p for p in request.path[2:].split("&") if not p.startswith("X-Amz-Credential"))
    assert refusal(Signed("POST", "/?" + stripped, request.headers, b"{}")) == (
        "IncompleteSignatureException",
        "AWS query-string parameters must include 'X-Amz-Credential'. Re-examine the query-string parameters.",
    )
    signed = sign(b"{}").headers
    both = {**request.headers, "authorization": signed["authorization"], "x-amz-date": signed["x-amz-date"]}
    assert refusal(Signed("POST", request.path, both, b"{}")) == (
        "IncompleteSignatureException",
        "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header.",
    )
    with_token = presign(b"{}", token="FwoGZXIvYXdzEXAMPLE")
    assert refusal(with_token)[0] == "UnrecognizedClientException"


def test_signing_keys_are_cached_per_key_and_day_and_follow_a_new_secret() -> None:
    verify = authenticator()
    first = sign(b"{}")
    verify.authenticate("POST", "/", first.headers, b"{}")
    cached = dict(verify._keys)
    verify.authenticate("POST", "/", first.headers, b"{}")
    assert verify._keys == cached and len(cached) == 1
    verify._store._keys[KEY_ID].secret = "rotated-secret-rotated-secret-0000000000"
    with pytest.raises(DynamoError, match="does not match"):
        verify.authenticate("POST", "/", first.headers, b"{}")
    assert verify.authenticate(
        "POST", "/", sign(b"{}", secret="rotated-secret-rotated-secret-0000000000").headers, b"{}"
    ).authenticated


def _mutations(rng: random.Random, text: str) -> str:
    alphabet = "AWS4-HMAC-SHA256 Credential=/,;=%&?\t\x00\xff\u00e9SignedHeaders Signature abcdef0123456789"
    chars = list(text)
    for _ in range(rng.randint(1, 8)):
        action = rng.random()
        position = rng.randrange(len(chars) + 1)
        if action < 0.4 and chars:
            del chars[min(position, len(chars) - 1)]
        elif action < 0.8:
            chars.insert(position, rng.choice(alphabet))
        else:
            chars[position:position] = list(rng.choice(["Credential=", ", ", "/", "==", "%2F", "X-Amz-Date="]))
    return "".join(chars)


def test_hostile_headers_and_query_strings_only_ever_raise_dynamodb_errors() -> None:
    rng = random.Random(20261124)
    verify = authenticator()
    header = sign(b"{}")
    query = presign(b"{}")
    seen: dict[str, int] = {}
    for _ in range(3000):
        headers = dict(header.headers)
        headers["authorization"] = _mutations(rng, headers["authorization"])
        if rng.random() < 0.2:
            headers["x-amz-date"] = _mutations(rng, headers["x-amz-date"])
        path = "/?" + _mutations(rng, query.path[2:])
        for method_path, sent in (("/", headers), (path, query.headers)):
            try:
                verify.authenticate("POST", method_path, sent, b"{}")
                outcome = "accepted"
            except DynamoError as e:  # anything else (TypeError, ValueError, ...) would be a 500 and fails the test
                outcome = type(e).__name__
            seen[outcome] = seen.get(outcome, 0) + 1
    assert set(seen) <= {
        "accepted",
        "IncompleteSignatureException",
        "InvalidSignatureException",
        "MissingAuthenticationTokenException",  # no longer an AWS4- header, nor a presigned query string
        "UnrecognizedClientException",
    }
    # authenticate checks the header's form first: many mutations end there, as IncompleteSignature.
    assert seen["InvalidSignatureException"] > 800 and seen["IncompleteSignatureException"] > 100


def test_a_header_signature_covers_its_query_string() -> None:
    # The Authorization header of the form SDKs send is read in one pass; its query string is read apart.
    sent = {"Host": HOST, "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables"}
    signed = sign_headers("POST", "/?b=2&a=1", sent, b"{}", access_key_id=KEY_ID, secret=SECRET, region=REGION,
                          amz_date=SIGNED_AT)  # fmt: skip
    headers = {name.lower(): value for name, value in signed.items()}
    verify = authenticator()
    assert verify.authenticate("POST", "/?b=2&a=1", headers, b"{}").authenticated
    with pytest.raises(DynamoError, match="does not match"):
        verify.authenticate("POST", "/?b=2&a=3", headers, b"{}")


def test_kept_hash_states_digest_exactly_the_canonical_request() -> None:
    """The verifier hashes a canonical request from a kept state of everything before its payload hash, and the
    string to sign from a kept state of its first three lines: each digest must be the one of the whole text, for
    requests that share those parts and for ones that differ in any of them (a header value, one missing)."""
    import hashlib

    from dynastore.security.sigv4 import KeyedHash, RequestDigests, canonical_request, signature, signing_key

    digests = RequestDigests()
    names = "content-type;host;x-amz-date"
    base = {"content-type": "application/x-amz-json-1.0", "host": "localhost", "x-amz-date": "20260101T000000Z"}
    variants = [base, {**base, "x-amz-date": "20260101T000001Z"}, {**base, "host": " local  host "}]
    variants.append({name: value for name, value in base.items() if name != "host"})  # a signed header missing
    key = signing_key(SECRET, "20260101", REGION, "dynamodb")
    keyed = KeyedHash(key)
    for headers in variants * 2:  # the second round is answered from the kept states
        for body in (b"{}", b'{"TableName":"t"}'):
            payload = hashlib.sha256(body).hexdigest()
            text = canonical_request("POST", "/", "", headers, names, payload)
            start = digests.start("POST", "/", "", headers, names)
            digest = start.copy()
            digest.update(payload.encode())
            assert digest.hexdigest() == hashlib.sha256(text.encode("latin-1")).hexdigest()
            for amz_date in ("20260101T000000Z", "20260101T000001Z"):
                # States are kept by request time: another scope at the same time is hashed anew, not mixed up.
                for scope in (f"20260101/{REGION}/dynamodb/aws4_request", "20260101/eu-west-1/dynamodb/aws4_request"):
                    expected = signature(key, amz_date, scope, text)
                    assert keyed.sign_request(amz_date, scope, start, body) == expected.encode()


def test_the_form_check_names_the_region_the_anonymous_caller_reads() -> None:
    """``check_form`` returns the credential scope's region as ``scope_region`` reads it from the whole header,
    whether the header is of the SDK form (read from its kept head) or not."""
    from dynastore.security.authenticator import check_form
    from dynastore.security.caller import scope_region

    rng = random.Random(20261128)
    header = sign(b"{}").headers
    for _ in range(2000):
        authorization = _mutations(rng, header["authorization"])
        headers = {**header, "authorization": authorization}
        try:
            region = check_form(headers)
        except DynamoError:
            continue
        assert region == scope_region(authorization), authorization
