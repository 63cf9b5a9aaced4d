"""SigV4 presence and format checks (security/authenticator.py ``check_form``), made whether or not signatures
are verified."""

from __future__ import annotations

import pytest
from hypothesis import example, given
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


# What SDKs put in each part of the header (the scheme's algorithm, the three values): no space, no comma.
_PLAIN = st.text(alphabet="aA4-/=", min_size=1, max_size=6)
_SDK_SEPARATOR = ", "
_SDK_EXAMPLE = ["HMAC-SHA256", "AKID/20260101/us-east-1/dynamodb/aws4_request", "host", "ab"]


def _header(pieces: list[str], separators: list[str]) -> str:
    scheme, credential, signed, signature = pieces
    first, second = separators
    return f"AWS4-{scheme} Credential={credential}{first}SignedHeaders={signed}{second}Signature={signature}"


@st.composite
def _headers(draw: st.DrawFn) -> tuple[str, list[str], bool]:
    """A header in the SDK form, or one with a single flaw (a part emptied, a space or comma put into a part, a
    separator changed), so that cases fall on both sides of the shortcut's edge: (header, its parts, whether it is
    in the SDK form)."""
    pieces = [draw(_PLAIN) for _ in range(4)]
    separators = [_SDK_SEPARATOR, _SDK_SEPARATOR]
    flaw = draw(st.sampled_from(["none", "empty", "inserted", "separator"]))
    if flaw == "empty":
        pieces[draw(st.integers(0, 3))] = ""
    elif flaw == "inserted":
        i = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(pieces[i])))
        pieces[i] = pieces[i][:at] + draw(st.sampled_from([" ", ",", ", "])) + pieces[i][at:]
    elif flaw == "separator":
        separators[draw(st.integers(0, 1))] = draw(st.sampled_from([",", " , ", ",  ", " ,"]))
    return _header(pieces, separators), pieces, flaw == "none"


@given(_headers())
@example((_header(_SDK_EXAMPLE, [_SDK_SEPARATOR] * 2), _SDK_EXAMPLE, True))
def test_what_skips_the_parsing_would_pass_it(header: tuple[str, list[str], bool]) -> None:
    """The shortcut takes every header in the SDK form, and accepts only headers that the full parse reads the
    same way (a shortcut that took nothing would meet the second half alone)."""
    value, (_, credential, signed, signature), sdk_form = header
    if sdk_form:
        assert authenticator._well_formed(value)
    if authenticator._well_formed(value):
        assert authenticator._header_params(value) == {
            "Credential": credential,
            "SignedHeaders": signed,
            "Signature": signature,
        }
