"""The callers of a server without authentication (security/caller.py): the configured account, in the region of
the request's credential scope."""

from __future__ import annotations

from dynastore.security.caller import AnonymousCallers


def header(credential: str) -> str:
    return f"AWS4-HMAC-SHA256 Credential={credential}, SignedHeaders=host;x-amz-date, Signature=abc"


def test_the_credential_scope_s_region_is_the_caller_s() -> None:
    callers = AnonymousCallers("123456789012", "eu-west-1")
    ohio = callers.of(header("AKID/20260101/us-east-2/dynamodb/aws4_request"))
    assert (ohio.account_id, ohio.region, ohio.admin, ohio.authenticated) == ("123456789012", "us-east-2", True, False)
    assert ohio.arn == "arn:aws:iam::123456789012:root"
    assert callers.of(header("OTHERKEY/20270101/us-east-2/dynamodb/aws4_request")) is ohio  # one caller a region
    assert callers.of(header("AKID/20260101/eu-west-1/dynamodb/aws4_request")) is callers.default


def test_a_scope_naming_no_region_is_the_configured_region_s() -> None:
    callers = AnonymousCallers("123456789012", "eu-west-1")
    for credential in ("console/20000101/local/dynamodb/aws4_request", "a/b/c/d/e", "abc", "a/b/us-east-2/d"):
        assert callers.of(header(credential)) is callers.default
    assert callers.of("AWS4-HMAC-SHA256 Signature=abc") is callers.default
    spaced = "AWS4-HMAC-SHA256 Credential = AKID/20260101/us-west-2/dynamodb/aws4_request ,Signature=abc"
    assert callers.of(spaced) is callers.default  # no "Credential=": nothing names a region


def test_shared_namespace_makes_every_request_the_configured_region_s() -> None:
    callers = AnonymousCallers("123456789012", "eu-west-1", shared=True)
    assert callers.of(header("AKID/20260101/us-east-2/dynamodb/aws4_request")) is callers.default


def test_callers_of_ever_new_regions_are_bounded() -> None:
    callers = AnonymousCallers("123456789012", "eu-west-1")
    regions = [f"xx-{''.join(chr(ord('a') + int(digit)) for digit in str(n))}-1" for n in range(1000)]
    seen = {callers.of(header(f"AKID/20260101/{region}/dynamodb/aws4_request")).region for region in regions}
    assert len(seen) == 1000
    assert len(callers._by_region) <= 256
