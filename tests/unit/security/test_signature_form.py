"""SigV4 presence and format checks (security/authenticator.py ``check_form``), made whether or not signatures
are verified."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynastore.errors import IncompleteSignatureException, MissingAuthenticationTokenException
from dynastore.security import authenticator
from dynastore.security.authenticator import check_form

GOOD = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=ab"


def test_complete_header_passes() -> None:
    check_form({"authorization": GOOD, "x-amz-date": "20260101T000000Z"})
    check_form({"authorization": GOOD, "date": "Thu, 01 Jan 2026 00:00:00 GMT"})


@pytest.mark.parametrize("value", [None, "", "Bearer abc", "AWS3 foo"])
def test_missing_or_foreign_scheme(value: str | None) -> None:
    headers = {} if value is None else {"authorization": value}
    with pytest.raises(MissingAuthenticationTokenException) as info:
        check_form(headers)
    assert info.value.message == "Request is missing Authentication Token"


def test_every_missing_part_is_listed() -> None:
    with pytest.raises(IncompleteSignatureException) as info:
        check_form({"authorization": "AWS4-HMAC-SHA256 SignedHeaders=host"})
    assert info.value.message == (
        "Authorization header requires 'Credential' parameter. "
        "Authorization header requires 'Signature' parameter. "
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. "
        "Authorization=AWS4-HMAC-SHA256 SignedHeaders=host"
    )


@pytest.mark.parametrize(
    "value",
    [
        GOOD,
        GOOD.replace(", ", ","),
        "AWS4-HMAC-SHA256 Credential=A/b, SignedHeaders=host;x-amz-date, Signature=" + "f" * 64,
    ],
)
def test_well_formed_header_without_a_date_is_still_incomplete(value: str) -> None:
    check_form({"authorization": value, "x-amz-date": "20260101T000000Z"})
    with pytest.raises(IncompleteSignatureException) as info:
        check_form({"authorization": value})
    assert info.value.message == (
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=" + value
    )


def test_empty_parameter_values_are_still_reported() -> None:
    value = "AWS4-HMAC-SHA256 Credential=, SignedHeaders=host, Signature=ab"
    with pytest.raises(IncompleteSignatureException) as info:
        check_form({"authorization": value, "x-amz-date": "20260101T000000Z"})
    assert info.value.message == "Authorization header requires 'Credential' parameter. Authorization=" + value


def test_the_sdk_form_skips_the_parsing() -> None:
    assert authenticator._well_formed(GOOD)
    assert not authenticator._well_formed(GOOD.replace(", ", ","))  # still accepted, by the full parse
    assert not authenticator._well_formed("AWS4-HMAC-SHA256 Extra Credential=a, SignedHeaders=h, Signature=s")


_PIECE = st.text(alphabet="aA4-/ ,=", max_size=6)
_SEPARATOR = st.sampled_from([", ", ",", " , ", ",  "])


@given(_PIECE, _PIECE, _PIECE, _PIECE, _SEPARATOR, _SEPARATOR)
def test_what_skips_the_parsing_would_pass_it(
    scheme: str, credential: str, signed: str, signature: str, first: str, second: str
) -> None:
    """The shortcut accepts only headers that the full parse accepts too."""
    value = f"AWS4-{scheme} Credential={credential}{first}SignedHeaders={signed}{second}Signature={signature}"
    if authenticator._well_formed(value):
        assert credential and signed and signature
        assert authenticator._header_params(value) == {
            "Credential": credential,
            "SignedHeaders": signed,
            "Signature": signature,
        }
