"""Web identity tokens: what verify accepts (RS256, ES256 against the provider's JWKS) and each refusal's STS code
and text."""

from __future__ import annotations

from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey, RSAKey

from dynastore.limits import WEB_TOKEN_SKEW_SECONDS
from dynastore.security.web_tokens import TokenRefused, verify

ISSUER = "https://id.example.com"
NOW = 1_800_000_000
RSA = RSAKey.generate_key(2048, parameters={"kid": "r"})
EC = ECKey.generate_key("P-256", parameters={"kid": "e"})
PROVIDERS = {
    ISSUER: {
        "account": "111111111111",
        "audiences": ["app"],
        "jwks": {"keys": [RSA.as_dict(private=False), EC.as_dict(private=False)]},
    }
}


def token(key: Any = RSA, alg: str = "RS256", **claims: Any) -> str:
    payload: dict[str, Any] = {"iss": ISSUER, "sub": "u1", "aud": "app", "exp": NOW + 300}
    payload.update(claims)
    payload = {name: value for name, value in payload.items() if value is not None}
    return jwt.encode({"alg": alg, "kid": key.kid}, payload, key)


def refusal(text: str, now: float = NOW) -> tuple[str, str]:
    with pytest.raises(TokenRefused) as info:
        verify(text, PROVIDERS, now)
    return info.value.code, info.value.message


def test_rs256_and_es256_tokens_verify() -> None:
    verified = verify(token(), PROVIDERS, NOW)
    assert (verified.issuer, verified.subject, verified.audience) == (ISSUER, "u1", "app")
    assert verify(token(EC, "ES256", sub="u2"), PROVIDERS, NOW).subject == "u2"


def test_one_of_several_audiences_must_be_the_providers() -> None:
    assert verify(token(aud=["other", "app"]), PROVIDERS, NOW).audience == "app"
    assert refusal(token(aud=["other"])) == ("InvalidIdentityToken", "Incorrect token audience")
    assert refusal(token(aud=None)) == ("InvalidIdentityToken", "Incorrect token audience")


def test_expiry_and_not_before_allow_a_small_skew() -> None:
    expires = NOW + 300
    assert verify(token(exp=expires), PROVIDERS, expires + WEB_TOKEN_SKEW_SECONDS - 1).subject == "u1"
    assert refusal(token(exp=expires), expires + WEB_TOKEN_SKEW_SECONDS) == (
        "ExpiredTokenException",
        f"Token expired: current date/time {expires + WEB_TOKEN_SKEW_SECONDS} must be before the expiration "
        f"date/time{expires}",
    )
    assert verify(token(nbf=NOW + WEB_TOKEN_SKEW_SECONDS), PROVIDERS, NOW).subject == "u1"
    assert refusal(token(nbf=NOW + WEB_TOKEN_SKEW_SECONDS + 1))[0] == "InvalidIdentityToken"
    assert refusal(token(exp=None))[0] == "InvalidIdentityToken"


def test_a_signature_by_another_key_or_algorithm_is_refused() -> None:
    impostor = RSAKey.generate_key(2048, parameters={"kid": "r"})
    not_validated = (
        "InvalidIdentityToken",
        "The web identity token that was passed could not be validated by AWS. Get a new identity token from the "
        "identity provider and then retry the request.",
    )
    assert refusal(token(impostor)) == not_validated
    assert refusal(token(RSAKey.generate_key(2048, parameters={"kid": "unknown"}))) == not_validated
    secret = OctKey.import_key("a shared secret of at least thirty-two bytes", {"kid": "r"})
    assert refusal(token(secret, "HS256")) == not_validated
    head, payload, _ = token().split(".")
    assert refusal(f"{head}.{payload}.") == not_validated


def test_what_is_no_token_of_a_known_provider() -> None:
    assert refusal("opaque-access-token") == (
        "InvalidIdentityToken",
        "The ID Token provided is not a valid JWT. (You may see this error if you sent an Access Token)",
    )
    assert refusal("a.!!!.c")[0] == "InvalidIdentityToken"
    assert refusal(token(iss="https://else.example.com")) == (
        "InvalidIdentityToken",
        "No OpenIDConnect provider found in your account for https://else.example.com",
    )
    assert refusal(token(sub=None)) == ("IDPRejectedClaim", "The ID Token provided has no subject (sub) claim")
